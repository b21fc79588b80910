/* libFuzzer target for the C code that reads untrusted container bytes besides the JPEG decoders:
 * frame_count.c (the animated WebP frame count through libwebpdemux, the GIF block walk through giflib,
 * the WebP metadata rewrite through libwebpmux), icc_profile.c (an embedded ICC profile read by lcms2), and
 * webp_scaled.c (our driving of libwebp's demuxer and incremental decoder into the thread's reused buffer,
 * thread_buffer.c). Each input is also tried as the payload of an ICC profile. Built with
 * clang -fsanitize=fuzzer,address,undefined by fuzz/run.sh; any sanitizer report fails. */
#include "vips_shim.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    if (VIPS_INIT((*argv)[0])) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int webp_frames = ipx_webp_frame_count(data, size);
    if (webp_frames < -1) abort();
    for (int limit = 1; limit <= 1000; limit *= 1000) {
        int gif_frames = ipx_gif_frame_count(data, size, limit);
        /* Counting stops one past the limit. */
        if (gif_frames < -1 || gif_frames > limit + 1) abort();
    }
    void *stripped = NULL;
    size_t stripped_length = 0;
    if (ipx_webp_strip_metadata(data, size, &stripped, &stripped_length) == 0) {
        if (!stripped || stripped_length == 0) abort();
        /* The rewrite is a WebP again, with no more frames than the input. */
        int frames = ipx_webp_frame_count(stripped, stripped_length);
        if (webp_frames > 0 && frames > webp_frames) abort();
        g_free(stripped);
    }
    /* libwebp's scaled decode: at most 2 Mpixel canvases here (the service passes the limit it checked);
     * whole, scaled down, and turned. No deadline was given, so 2 is impossible. */
    const double scales[] = {1.0, 0.37};
    for (int index = 0; index < 2; index++) {
        VipsImage *image = NULL;
        int status = ipx_webp_decode_scaled(data, size, scales[index], index ? 6 : 1, 2 * 1024 * 1024, 0, &image);
        if (status == 0) {
            if (!image || vips_image_get_width(image) < 1 || vips_image_get_height(image) < 1) abort();
            int bands = vips_image_get_bands(image);
            if (bands != 3 && bands != 4) abort();
            g_object_unref(image);
        } else if (status != 1 && status != 4 && status != -1) {
            abort();
        }
    }
    int srgb = ipx_icc_is_srgb(data, size);
    if (srgb != 0 && srgb != 1) abort();
    return 0;
}
