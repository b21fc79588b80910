#include "vips_shim.h"
#include "monotonic_clock.h"
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
 * doubling, from an eighth of the raw size. */

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

int ipx_jpeg_encode_memory(VipsImage *in, int quality, int interlace, long long deadline_ns, void **out, size_t *length) {
    *out = NULL;
    *length = 0;
    int bands = in->Bands;
    if (quality < 1 || quality > 100 || !in->data || in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE ||
        !((bands == 3 && in->Type == VIPS_INTERPRETATION_sRGB) || (bands == 1 && in->Type == VIPS_INTERPRETATION_B_W)) ||
        in->Xsize < 1 || in->Ysize < 1 || in->Xsize > JPEG_MAX_DIMENSION || in->Ysize > JPEG_MAX_DIMENSION) {
        return 1;
    }
    struct jpeg_compress_struct info;
    struct ipx_encode_error error;
    struct ipx_encode_destination destination = {0};
    size_t raw = (size_t)in->Xsize * (size_t)in->Ysize * (size_t)bands;
    destination.capacity = raw / 8 > 4096 ? raw / 8 : 4096;
    destination.data = g_try_malloc(destination.capacity);
    if (!destination.data) return -1;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = ipx_encode_error_exit;
    error.manager.output_message = ipx_encode_output_message;
    /* volatile: read after a longjmp back here. */
    volatile int status = -1;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        g_free(destination.data);
        return status;
    }
    jpeg_create_compress(&info);
    destination.manager.init_destination = ipx_destination_init;
    destination.manager.empty_output_buffer = ipx_destination_grow;
    destination.manager.term_destination = ipx_destination_term;
    info.dest = &destination.manager;
    info.image_width = (JDIMENSION)in->Xsize;
    info.image_height = (JDIMENSION)in->Ysize;
    info.input_components = bands;
    info.in_color_space = bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&info);
    info.optimize_coding = TRUE;
    jpeg_set_quality(&info, quality, TRUE);
    if (interlace) jpeg_simple_progression(&info);
    if (quality >= 90) {
        for (int component = 0; component < bands; component++) {
            info.comp_info[component].h_samp_factor = 1;
            info.comp_info[component].v_samp_factor = 1;
        }
    }
    info.write_JFIF_header = FALSE;
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        if (deadline_ns > 0 && (info.next_scanline & 15) == 0 && ipx_monotonic_ns() > deadline_ns) {
            status = 2;
            longjmp(error.jump, 1);
        }
        JSAMPROW row = (JSAMPROW)VIPS_IMAGE_ADDR(in, 0, info.next_scanline);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    *length = destination.capacity - destination.manager.free_in_buffer;
    *out = destination.data;
    jpeg_destroy_compress(&info);
    return 0;
}
