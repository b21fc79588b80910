#include "vips_shim.h"
#include "monotonic_clock.h"
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

/* A JPEG encode on the calling thread: the image's pipeline (decode, resize, filters) is evaluated strip by
 * strip with vips_region_prepare on this thread and each strip is handed to libjpeg's compressor.
 *
 * libvips' own savers evaluate through its thread pool: a worker thread computes each tile while the
 * calling thread waits on a semaphore, a hand-off (two context switches and a cross-core wake-up) per tile,
 * about 30 per 300 px thumbnail. A transform thread of ours has nothing else to do while it waits, so the
 * work is done here instead: no other thread, no hand-off. The strips are as libvips' sequential savers
 * ask for them (top to bottom), so a sequential loader upstream streams as before, and the memory held
 * is one strip of every stage's region, as with libvips' sink.
 *
 * The stream is what vips_jpegsave_buffer writes with "strip" (no metadata), "optimize_coding" and the
 * automatic chroma subsampling of libvips 8.14 (4:2:0 below quality 90, 4:4:4 from 90). */

#define IPX_ENCODE_STRIP_ROWS 64

struct ipx_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

static void ipx_jpeg_error_exit(j_common_ptr info) {
    longjmp(((struct ipx_jpeg_error *)info->err)->jump, 1);
}

/* libjpeg's default prints warnings to stderr; a compressor only warns about its own tables. */
static void ipx_jpeg_silent(j_common_ptr info) { (void)info; }

/* The compressed stream, in one buffer that doubles as it fills (libjpeg's jpeg_mem_dest keeps the buffer
   it grew to in its private state, so a failure part-way could not free it). */
struct ipx_jpeg_destination {
    struct jpeg_destination_mgr manager;
    unsigned char *data;
    size_t capacity, length;
};

static void ipx_destination_start(j_compress_ptr info) {
    struct ipx_jpeg_destination *destination = (struct ipx_jpeg_destination *)info->dest;
    destination->capacity = 64 * 1024;
    destination->data = malloc(destination->capacity);
    if (!destination->data) ERREXIT1(info, JERR_OUT_OF_MEMORY, 0);
    destination->manager.next_output_byte = destination->data;
    destination->manager.free_in_buffer = destination->capacity;
}

static boolean ipx_destination_grow(j_compress_ptr info) {
    struct ipx_jpeg_destination *destination = (struct ipx_jpeg_destination *)info->dest;
    /* libjpeg calls this when the whole buffer is full. */
    unsigned char *grown = realloc(destination->data, destination->capacity * 2);
    if (!grown) ERREXIT1(info, JERR_OUT_OF_MEMORY, 1);
    destination->data = grown;
    destination->manager.next_output_byte = grown + destination->capacity;
    destination->manager.free_in_buffer = destination->capacity;
    destination->capacity *= 2;
    return TRUE;
}

static void ipx_destination_finish(j_compress_ptr info) {
    struct ipx_jpeg_destination *destination = (struct ipx_jpeg_destination *)info->dest;
    destination->length = destination->capacity - destination->manager.free_in_buffer;
}

/* Whether libjpeg can take the image's pixels as they are: 8-bit sRGB or grey, no alpha, not coded. */
static int ipx_encode_takes(const VipsImage *in) {
    if (in->Coding != VIPS_CODING_NONE || in->BandFmt != VIPS_FORMAT_UCHAR) return 0;
    if (in->Xsize < 1 || in->Ysize < 1 || in->Xsize > JPEG_MAX_DIMENSION || in->Ysize > JPEG_MAX_DIMENSION) return 0;
    /* Interpretations libvips' saver writes unconverted too (others, such as 8-bit HSV, it converts). */
    if (in->Bands == 3)
        return in->Type == VIPS_INTERPRETATION_sRGB || in->Type == VIPS_INTERPRETATION_RGB ||
               in->Type == VIPS_INTERPRETATION_MULTIBAND;
    if (in->Bands == 1) return in->Type == VIPS_INTERPRETATION_B_W || in->Type == VIPS_INTERPRETATION_MULTIBAND;
    return 0;
}

int ipx_jpeg_encode_on_caller(VipsImage *in, int quality, int interlace, long long deadline_ns, void **buffer,
                              size_t *length) {
    if (!ipx_encode_takes(in)) return 1;
    struct jpeg_compress_struct info;
    struct ipx_jpeg_error error;
    /* Read after a longjmp out of libjpeg: the destination lives in memory (its address is libjpeg's
       info.dest), the others are volatile. */
    struct ipx_jpeg_destination destination = {{0}, NULL, 0, 0};
    VipsRegion *volatile region = NULL;
    volatile int status = -1;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = ipx_jpeg_error_exit;
    error.manager.output_message = ipx_jpeg_silent;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        if (region) g_object_unref(region);
        free(destination.data);
        return status;
    }
    jpeg_create_compress(&info);
    destination.manager.init_destination = ipx_destination_start;
    destination.manager.empty_output_buffer = ipx_destination_grow;
    destination.manager.term_destination = ipx_destination_finish;
    info.dest = &destination.manager;
    info.image_width = (JDIMENSION)in->Xsize;
    info.image_height = (JDIMENSION)in->Ysize;
    info.input_components = in->Bands;
    info.in_color_space = in->Bands == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    info.optimize_coding = TRUE;
    if (in->Bands == 3 && quality >= 90) {
        info.comp_info[0].h_samp_factor = 1;
        info.comp_info[0].v_samp_factor = 1;
    }
    if (interlace) jpeg_simple_progression(&info);
    region = vips_region_new(in);
    jpeg_start_compress(&info, TRUE);
    for (int top = 0; top < in->Ysize; top += IPX_ENCODE_STRIP_ROWS) {
        VipsRect strip = {0, top, in->Xsize, VIPS_MIN(IPX_ENCODE_STRIP_ROWS, in->Ysize - top)};
        if (deadline_ns > 0 && ipx_monotonic_ns() > deadline_ns) {
            status = 2;
            longjmp(error.jump, 1);
        }
        /* Fails on a decode error upstream, or when the image was killed (the transform deadline). */
        if (vips_region_prepare(region, &strip)) longjmp(error.jump, 1);
        for (int row = 0; row < strip.height; row++) {
            JSAMPROW line = (JSAMPROW)VIPS_REGION_ADDR(region, 0, top + row);
            jpeg_write_scanlines(&info, &line, 1);
        }
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    g_object_unref(region);
    *buffer = destination.data;
    *length = destination.length;
    return 0;
}
