/* libFuzzer target for JPEG XL sources through the service's own decode path (`image.allowJXLInput`):
 * libvips started as the service starts it (untrusted loaders blocked, then the JPEG XL loader allowed),
 * the header read that every source passes first (ipx_vips_header), the pixel bound from it, then the
 * shrink-on-load thumbnail the transform runs (ipx_vips_thumbnail_buffer_pages). libvips and libjxl
 * are not instrumented: a crash inside them still ends the run (SEGV), and the shim code around them is
 * checked by ASan and UBSan. Seeds: JPEG XL files libvips wrote (lossy, lossless, alpha, grey, tiny).
 * Built with clang -fsanitize=fuzzer,address,undefined by fuzz/run.sh. */
#include "vips_shim.h"
#include <stdint.h>
#include <stdlib.h>

/* The pixel bound of a source in this target: large enough for the seeds, small enough to stay fast. */
#define MAX_PIXELS (4 * 1024 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int started = 0;
    if (!started) {
        if (ipx_vips_start("fuzz_jxl_pipeline", 1, 0)) abort();
        ipx_vips_allow_jxl_input();
        started = 1;
    }
    int width = 0, height = 0, pages = 0, orientation = 0, bands = 0, colour_managed = 0, pixel_bytes = 0;
    if (ipx_vips_header(data, size, &width, &height, &pages, &orientation, &bands, &colour_managed, &pixel_bytes)) {
        vips_error_clear();
        return 0;
    }
    if (width <= 0 || height <= 0) abort();
    if ((int64_t)width * height > MAX_PIXELS) return 0;
    VipsImage *image = NULL;
    if (ipx_vips_thumbnail_buffer_pages(data, size, &image, 64, 64, 0, -1, 1, colour_managed ? 1 : 0) == 0) {
        VipsImage *memory = NULL;
        if (ipx_vips_copy_memory(image, &memory) == 0) {
            if (memory->Xsize > 64 || memory->Ysize > 64) abort();
            g_object_unref(memory);
        }
        g_object_unref(image);
    }
    vips_error_clear();
    return 0;
}
