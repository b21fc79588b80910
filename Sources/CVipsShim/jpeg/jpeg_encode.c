#include "vips_shim.h"
#include "../platform/monotonic_clock.h"
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>

/* An image in memory encoded as a JPEG by libjpeg on the calling thread, with the settings libvips 8.14's
 * jpegsave uses with `strip` (vips2jpeg.c's write_vips without its markers): libjpeg's defaults, the
 * quality, optimised Huffman tables, simple progression when interlaced, and no chroma subsampling from
 * quality 90 on. The bytes are the ones jpegsave_buffer writes for the same image (tested byte for byte).
 *
 * libvips' saver runs the same libjpeg calls behind vips_sink_disc: its worker threads prepare the image's
 * regions and a writer thread takes them in turn, three threads handing one image over for each encode.
 * For an image already in memory there is nothing to compute, so the hand-offs are all that is left:
 * here the rows go to libjpeg straight from the image's memory. The output grows in one buffer by
 * doubling, from an eighth of the raw size.
 *
 * The same encoder also takes rows one at a time as something else makes them (ipx_jpeg_writer): a reduce
 * hands each output row over as it is made, and the reduced image is never held (reduce_across.c). */

struct ipx_encode_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

struct ipx_encode_destination {
    struct jpeg_destination_mgr manager;
    unsigned char *data;
    size_t capacity;
};

static void ipx_encode_error_exit(j_common_ptr info) {
    longjmp(((struct ipx_encode_error *)info->err)->jump, 1);
}

static void ipx_encode_output_message(j_common_ptr info) {
    (void)info;
}

static void ipx_destination_init(j_compress_ptr info) {
    struct ipx_encode_destination *destination = (struct ipx_encode_destination *)info->dest;
    destination->manager.next_output_byte = destination->data;
    destination->manager.free_in_buffer = destination->capacity;
}

/* The buffer is full: doubled, the written bytes kept. */
static boolean ipx_destination_grow(j_compress_ptr info) {
    struct ipx_encode_destination *destination = (struct ipx_encode_destination *)info->dest;
    size_t written = destination->capacity;
    unsigned char *grown = g_try_realloc(destination->data, 2 * destination->capacity);
    if (!grown) ERREXIT(info, JERR_OUT_OF_MEMORY);
    destination->data = grown;
    destination->capacity *= 2;
    destination->manager.next_output_byte = grown + written;
    destination->manager.free_in_buffer = destination->capacity - written;
    return TRUE;
}

static void ipx_destination_term(j_compress_ptr info) {
    (void)info;
}

/* The compressor, its error handler and its growing output: one encode fed row by row. Each call into
 * libjpeg sets its own return point, so a failure comes back as a status and no jump crosses a caller. */
struct ipx_jpeg_writer {
    struct jpeg_compress_struct info;
    struct ipx_encode_error error;
    struct ipx_encode_destination destination;
    int created;
};

void ipx_jpeg_writer_free(ipx_jpeg_writer *writer) {
    if (!writer) return;
    if (writer->created) jpeg_destroy_compress(&writer->info);
    g_free(writer->destination.data);
    free(writer);
}

ipx_jpeg_writer *ipx_jpeg_writer_new(int width, int height, int bands, int quality, int interlace) {
    if (quality < 1 || quality > 100 || (bands != 3 && bands != 1) || width < 1 || height < 1 || width > JPEG_MAX_DIMENSION ||
        height > JPEG_MAX_DIMENSION) {
        return NULL;
    }
    ipx_jpeg_writer *writer = calloc(1, sizeof(*writer));
    if (!writer) return NULL;
    size_t raw = (size_t)width * (size_t)height * (size_t)bands;
    writer->destination.capacity = raw / 8 > 4096 ? raw / 8 : 4096;
    writer->destination.data = g_try_malloc(writer->destination.capacity);
    if (!writer->destination.data) {
        free(writer);
        return NULL;
    }
    struct jpeg_compress_struct *info = &writer->info;
    info->err = jpeg_std_error(&writer->error.manager);
    writer->error.manager.error_exit = ipx_encode_error_exit;
    writer->error.manager.output_message = ipx_encode_output_message;
    if (setjmp(writer->error.jump)) {
        ipx_jpeg_writer_free(writer);
        return NULL;
    }
    jpeg_create_compress(info);
    writer->created = 1;
    writer->destination.manager.init_destination = ipx_destination_init;
    writer->destination.manager.empty_output_buffer = ipx_destination_grow;
    writer->destination.manager.term_destination = ipx_destination_term;
    info->dest = &writer->destination.manager;
    info->image_width = (JDIMENSION)width;
    info->image_height = (JDIMENSION)height;
    info->input_components = bands;
    info->in_color_space = bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(info);
    info->optimize_coding = TRUE;
    jpeg_set_quality(info, quality, TRUE);
    if (interlace) jpeg_simple_progression(info);
    if (quality >= 90) {
        for (int component = 0; component < bands; component++) {
            info->comp_info[component].h_samp_factor = 1;
            info->comp_info[component].v_samp_factor = 1;
        }
    }
    info->write_JFIF_header = FALSE;
    jpeg_start_compress(info, TRUE);
    return writer;
}

int ipx_jpeg_writer_write(ipx_jpeg_writer *writer, const unsigned char *row) {
    if (writer->info.next_scanline >= writer->info.image_height) return -1;
    if (setjmp(writer->error.jump)) return -1;
    JSAMPROW rows[1] = {(JSAMPROW)row};
    jpeg_write_scanlines(&writer->info, rows, 1);
    return 0;
}

int ipx_jpeg_writer_finish(ipx_jpeg_writer *writer, void **out, size_t *length) {
    *out = NULL;
    *length = 0;
    if (writer->info.next_scanline < writer->info.image_height) return -1;
    if (setjmp(writer->error.jump)) return -1;
    jpeg_finish_compress(&writer->info);
    *length = writer->destination.capacity - writer->destination.manager.free_in_buffer;
    *out = writer->destination.data;
    writer->destination.data = NULL;
    return 0;
}

int ipx_jpeg_encode_memory(VipsImage *in, int quality, int interlace, long long deadline_ns, void **out, size_t *length) {
    *out = NULL;
    *length = 0;
    int bands = in->Bands;
    if (quality < 1 || quality > 100 || !in->data || in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE ||
        !((bands == 3 && in->Type == VIPS_INTERPRETATION_sRGB) || (bands == 1 && in->Type == VIPS_INTERPRETATION_B_W)) ||
        in->Xsize < 1 || in->Ysize < 1 || in->Xsize > JPEG_MAX_DIMENSION || in->Ysize > JPEG_MAX_DIMENSION) {
        return 1;
    }
    ipx_jpeg_writer *writer = ipx_jpeg_writer_new(in->Xsize, in->Ysize, bands, quality, interlace);
    if (!writer) return -1;
    int status = 0;
    for (int y = 0; status == 0 && y < in->Ysize; y++) {
        if (deadline_ns > 0 && (y & 15) == 0 && ipx_monotonic_ns() > deadline_ns) {
            status = 2;
        } else if (ipx_jpeg_writer_write(writer, VIPS_IMAGE_ADDR(in, 0, y))) {
            status = -1;
        }
    }
    if (status == 0 && ipx_jpeg_writer_finish(writer, out, length)) status = -1;
    ipx_jpeg_writer_free(writer);
    return status;
}
