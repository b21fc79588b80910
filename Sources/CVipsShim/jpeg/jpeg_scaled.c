#include "vips_shim.h"
#include "../platform/monotonic_clock.h"
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* A JPEG decoded by libjpeg at a DCT scale (1/2, 1/4, 1/8) straight into a memory image, on the calling
 * thread.
 *
 * libvips' jpegload makes the same libjpeg calls, but around them it reads the header twice (once for the
 * header, once for the load), feeds libjpeg through its 4 KiB source buffer, and hands the decode to a
 * worker thread of its pool; on a baseline web JPEG shrunk for a thumbnail that is about a third more CPU
 * than libjpeg's decode alone (bench/RESULTS.md). Here libjpeg reads the bytes in place and writes its
 * scanlines into the image's own memory.
 *
 * libjpeg parses the file (this code only drives it). Files it reads without complaint and whose pixels
 * need no conversion are decoded: 8-bit YCbCr (or RGB) and grey. Anything else, and any warning libjpeg
 * raises (corrupt data, a premature end, extraneous bytes), returns 1 so that the caller takes libvips'
 * path, which then decides how such a file is answered, for every variant alike. The output's size is the
 * header's divided by the scale, for a source of at most `max_pixels` (the limit the caller checked the
 * header against; a larger frame is libvips' case).
 *
 * libjpeg is bounded from inside, as libjpeg-turbo's own -maxscans option does it: a progress monitor,
 * which libjpeg calls while it reads every scan of a progressive or multi-scan file into its coefficient
 * buffer (inside jpeg_start_decompress) and while it outputs rows, stops the decode once
 * input_scan_number passes IPX_JPEG_MAX_SCANS or the deadline passes; and the first warning stops it at
 * once (a file of thousands of damaged scans warns on the first). No count made beforehand is trusted. */

struct ipx_scaled_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    /* Why the decode was stopped from inside: 0 none (an error or a warning: libvips' case), 2 the
     * deadline, 3 too many scans. */
    int stopped;
};

struct ipx_scaled_progress {
    struct jpeg_progress_mgr manager;
    long long deadline_ns;
};

static void ipx_scaled_error_exit(j_common_ptr info) {
    longjmp(((struct ipx_scaled_error *)info->err)->jump, 1);
}

/* Level -1 is a warning (corrupt data): the decode stops there; trace levels (>= 1) are informational. */
static void ipx_scaled_emit(j_common_ptr info, int level) {
    if (level < 0) longjmp(((struct ipx_scaled_error *)info->err)->jump, 1);
}

static void ipx_scaled_progress(j_common_ptr info) {
    struct ipx_scaled_error *error = (struct ipx_scaled_error *)info->err;
    struct ipx_scaled_progress *progress = (struct ipx_scaled_progress *)info->progress;
    if (((j_decompress_ptr)info)->input_scan_number > IPX_JPEG_MAX_SCANS) {
        error->stopped = 3;
        longjmp(error->jump, 1);
    }
    if (progress->deadline_ns > 0 && ipx_monotonic_ns() > progress->deadline_ns) {
        error->stopped = 2;
        longjmp(error->jump, 1);
    }
}

static void ipx_scaled_silent(j_common_ptr info) { (void)info; }

/* What the decoded rows go through: nothing (reduce == 0: into a memory image of the decode's size, the
 * thread's reused buffer when it fits, or memory of the image's own with `own_memory`), or a reduce to the
 * output as they arrive (the decode's planned size, and the shrinks); with `writer`, the reduce's rows are
 * encoded as they are made instead of kept in an image. */
struct ipx_scaled_reduce {
    int reduce;
    int width, height;
    double hshrink, vshrink;
    ipx_jpeg_writer *writer;
    int own_memory;
};

static int ipx_jpeg_decode(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                           long long deadline_ns, struct ipx_scaled_reduce reduce, VipsImage **out) {
    if (shrink != 1 && shrink != 2 && shrink != 4 && shrink != 8) return 1;
    if (length == 0 || length > (size_t)0x7fffffff) return 1;
    struct jpeg_decompress_struct info;
    struct ipx_scaled_error error;
    struct ipx_scaled_progress progress;
    /* Read after a longjmp out of libjpeg, so kept in memory. */
    VipsImage *volatile image = NULL;
    ipx_reduce_stream *volatile stream = NULL;
    JOCTET *volatile icc = NULL;
    volatile unsigned int icc_length = 0;
    volatile int status = 1;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = ipx_scaled_error_exit;
    error.manager.emit_message = ipx_scaled_emit;
    error.manager.output_message = ipx_scaled_silent;
    error.stopped = 0;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        if (image) g_object_unref(image);
        ipx_reduce_stream_free(stream);
        free(icc);
        return error.stopped ? error.stopped : status;
    }
    jpeg_create_decompress(&info);
    progress.manager.progress_monitor = ipx_scaled_progress;
    progress.deadline_ns = deadline_ns;
    info.progress = &progress.manager;
    jpeg_mem_src(&info, (const unsigned char *)buffer, (unsigned long)length);
    jpeg_save_markers(&info, JPEG_APP0 + 2, 0xFFFF);
    if (jpeg_read_header(&info, TRUE) != JPEG_HEADER_OK) longjmp(error.jump, 1);
    int grey = info.jpeg_color_space == JCS_GRAYSCALE && info.num_components == 1;
    int colour = (info.jpeg_color_space == JCS_YCbCr || info.jpeg_color_space == JCS_RGB) && info.num_components == 3;
    if (info.data_precision != 8 || (!grey && !colour)) longjmp(error.jump, 1);
    if ((long long)info.image_width * (long long)info.image_height > max_pixels) longjmp(error.jump, 1);
    info.scale_num = 1;
    info.scale_denom = (unsigned int)shrink;
    info.out_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
    info.dct_method = JDCT_ISLOW;
    jpeg_calc_output_dimensions(&info);
    int width = (int)info.output_width, height = (int)info.output_height, bands = grey ? 1 : 3;
    if (width < 1 || height < 1 || (int)info.output_components != bands) longjmp(error.jump, 1);
    if (reduce.reduce && (width != reduce.width || height != reduce.height)) longjmp(error.jump, 1);
    if (reduce.writer && bands != 3) longjmp(error.jump, 1);
    VipsInterpretation interpretation = grey ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
    status = -1;
    if (reduce.reduce) {
        /* Only the rows the reduce's taps span are held (reduce_across.c). */
        stream = reduce.writer ? ipx_reduce_stream_new_encoding(width, height, bands, reduce.hshrink, reduce.vshrink, reduce.writer)
                               : ipx_reduce_stream_new(width, height, bands, reduce.hshrink, reduce.vshrink, interpretation);
        if (!stream) longjmp(error.jump, 1);
    } else {
        /* Into this thread's reused buffer when it fits (thread_buffer.c): libjpeg writes every row below
           before the image is handed out, and a decode stopped part-way unrefs the image unread. */
        image = reduce.own_memory ? ipx_pixel_image(width, height, bands, interpretation)
                                  : ipx_thread_buffer_image(width, height, bands, interpretation);
        if (!image) longjmp(error.jump, 1);
    }
    /* The profile is read from the saved APP2 markers while libjpeg still holds them, and attached to the
       image handed out. */
    JOCTET *profile = NULL;
    unsigned int profile_length = 0;
    if (!reduce.writer && jpeg_read_icc_profile(&info, &profile, &profile_length) && profile) {
        icc = profile;
        icc_length = profile_length;
    }
    status = 1;
    jpeg_start_decompress(&info);
    while (info.output_scanline < info.output_height) {
        if (deadline_ns > 0 && (info.output_scanline & 15) == 0 && ipx_monotonic_ns() > deadline_ns) {
            error.stopped = 2;
            longjmp(error.jump, 1);
        }
        JSAMPROW row = stream ? ipx_reduce_stream_next_row(stream) : (JSAMPROW)VIPS_IMAGE_ADDR(image, 0, info.output_scanline);
        if (jpeg_read_scanlines(&info, &row, 1) != 1) longjmp(error.jump, 1);
        if (stream) ipx_reduce_stream_row_written(stream);
        if (stream && ipx_reduce_stream_failed(stream)) {
            status = -1;
            longjmp(error.jump, 1);
        }
    }
    /* The rest of the file up to EOI is read too, so a file damaged after its last row is libvips' case. */
    jpeg_finish_decompress(&info);
    if (stream && reduce.writer) {
        ipx_reduce_stream *finished = stream;
        stream = NULL;
        status = -1;
        if (ipx_reduce_stream_finish_encoding(finished)) longjmp(error.jump, 1);
        jpeg_destroy_decompress(&info);
        free(icc);
        return 0;
    }
    if (stream) {
        ipx_reduce_stream *finished = stream;
        stream = NULL;
        status = -1;
        image = ipx_reduce_stream_finish(finished);
        if (!image) longjmp(error.jump, 1);
    }
    if (icc) vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, icc, icc_length);
    if (orientation > 1) vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
    jpeg_destroy_decompress(&info);
    free(icc);
    *out = image;
    return 0;
}

int ipx_jpeg_decode_scaled(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                           long long deadline_ns, VipsImage **out) {
    return ipx_jpeg_decode(buffer, length, shrink, orientation, max_pixels, deadline_ns, (struct ipx_scaled_reduce){0}, out);
}

int ipx_jpeg_decode_scaled_owned(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                                 long long deadline_ns, VipsImage **out) {
    struct ipx_scaled_reduce whole = {0};
    whole.own_memory = 1;
    return ipx_jpeg_decode(buffer, length, shrink, orientation, max_pixels, deadline_ns, whole, out);
}

int ipx_jpeg_decode_reduced(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                            long long deadline_ns, int width, int height, double hshrink, double vshrink, VipsImage **out) {
    if (!(hshrink > 1.0) || !(vshrink > 1.0)) return 1;
    struct ipx_scaled_reduce reduce = {1, width, height, hshrink, vshrink};
    return ipx_jpeg_decode(buffer, length, shrink, orientation, max_pixels, deadline_ns, reduce, out);
}

int ipx_jpeg_decode_reduced_encoded(const void *buffer, size_t length, int shrink, long long max_pixels, long long deadline_ns,
                                    int width, int height, double hshrink, double vshrink, int quality, int interlace,
                                    void **out, size_t *out_length, int *out_width, int *out_height) {
    *out = NULL;
    *out_length = 0;
    if (!(hshrink > 1.0) || !(vshrink > 1.0) || hshrink > 1000.0 || vshrink > 1000.0 || width < 1 || height < 1) return 1;
    int reduced_width = ipx_reduced_side(width, hshrink), reduced_height = ipx_reduced_side(height, vshrink);
    ipx_jpeg_writer *writer = ipx_jpeg_writer_new(reduced_width, reduced_height, 3, quality, interlace);
    if (!writer) return -1;
    struct ipx_scaled_reduce reduce = {1, width, height, hshrink, vshrink, writer};
    VipsImage *unused = NULL;
    int status = ipx_jpeg_decode(buffer, length, shrink, 1, max_pixels, deadline_ns, reduce, &unused);
    if (status == 0 && ipx_jpeg_writer_finish(writer, out, out_length)) status = -1;
    ipx_jpeg_writer_free(writer);
    if (status == 0) {
        *out_width = reduced_width;
        *out_height = reduced_height;
    }
    return status;
}
