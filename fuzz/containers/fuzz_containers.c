/* libFuzzer target for the C code that reads untrusted container bytes besides the JPEG decoders:
 * frame_count.c (the animated WebP frame count through libwebpdemux, the GIF block walk through giflib,
 * the WebP metadata rewrite through libwebpmux) and icc_profile.c (an embedded ICC profile read by lcms2).
 * Each input is also tried as the payload of an ICC profile. Built with
 * clang -fsanitize=fuzzer,address,undefined by fuzz/run.sh; any sanitizer report fails. */
#include "vips_shim.h"
#include <stdint.h>
#include <stdlib.h>

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
    int srgb = ipx_icc_is_srgb(data, size);
    if (srgb != 0 && srgb != 1) abort();
    return 0;
}
