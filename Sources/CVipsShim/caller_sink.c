#include "vips_shim.h"
#include "monotonic_clock.h"
#include <string.h>

/* An image's pipeline evaluated into memory on the calling thread, strip by strip (as jpeg_encode.c does
 * for the encoder): libvips' vips_image_copy_memory runs the same evaluation on a worker thread of its pool
 * while the caller waits, a hand-off per tile that a transform thread of ours, with nothing else to do,
 * need not pay. Strips go top to bottom, so a sequential loader upstream streams as before, and the memory
 * held besides the output is one strip of every stage's region, as with libvips' sink. */

#define IPX_SINK_STRIP_ROWS 64

int ipx_vips_copy_memory_on_caller(VipsImage *in, long long deadline_ns, VipsImage **out) {
    if (in->Xsize < 1 || in->Ysize < 1) return -1;
    VipsImage *image = vips_image_new_memory();
    if (!image) return -1;
    /* The header and metadata (profile, orientation, ...) as the input's. */
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) || vips_image_write_prepare(image)) {
        g_object_unref(image);
        return -1;
    }
    VipsRegion *region = vips_region_new(in);
    if (!region) {
        g_object_unref(image);
        return -1;
    }
    size_t row_bytes = VIPS_IMAGE_SIZEOF_LINE(in);
    for (int top = 0; top < in->Ysize; top += IPX_SINK_STRIP_ROWS) {
        VipsRect strip = {0, top, in->Xsize, VIPS_MIN(IPX_SINK_STRIP_ROWS, in->Ysize - top)};
        int failed = deadline_ns > 0 && ipx_monotonic_ns() > deadline_ns;
        /* Fails on a decode error upstream, or when the image was killed (the transform deadline). */
        if (failed || vips_region_prepare(region, &strip)) {
            if (failed) vips_error("ipx_sink", "deadline passed");
            g_object_unref(region);
            g_object_unref(image);
            return -1;
        }
        for (int row = 0; row < strip.height; row++)
            memcpy(VIPS_IMAGE_ADDR(image, 0, top + row), VIPS_REGION_ADDR(region, 0, top + row), row_bytes);
    }
    g_object_unref(region);
    *out = image;
    return 0;
}
