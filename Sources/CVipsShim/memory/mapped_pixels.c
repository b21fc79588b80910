#include "vips_shim.h"
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Large pixel buffers of decodes and reduces, mapped on their own in 2 MiB pages where the kernel has them.
 *
 * A buffer of tens of MiB from malloc is a fresh mapping faulted in 4 KiB at a time: 8192 page faults for
 * a 32 MiB decode, ~12 ms of kernel time on the benchmark machine, more than a sixth of the decode itself.
 * Mapped here at a 2 MiB boundary with MADV_HUGEPAGE, the same buffer is 16 faults (~1.5 ms). The kernel
 * falls back to small pages when it has no huge page to give (or transparent huge pages are off); the
 * pixels are the same either way. The mapping is unmapped when the image closes, on whatever thread. */

struct ipx_pixel_mapping {
    void *base;
    size_t length;
};

static void ipx_pixel_mapping_closed(VipsObject *image, void *mapping) {
    (void)image;
    struct ipx_pixel_mapping *pixels = mapping;
    munmap(pixels->base, pixels->length);
    free(pixels);
}

void *ipx_huge_map(size_t bytes, size_t *mapped_length) {
    *mapped_length = 0;
    if (bytes == 0 || bytes > SIZE_MAX / 2) return NULL;
    size_t rounded = (bytes + IPX_HUGE_PAGE_BYTES - 1) & ~(IPX_HUGE_PAGE_BYTES - 1);
    size_t length = rounded + IPX_HUGE_PAGE_BYTES;
    unsigned char *mapped = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return NULL;
    /* The slack before the boundary and after the rounded size goes back at once. */
    unsigned char *start = (unsigned char *)(((uintptr_t)mapped + IPX_HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(IPX_HUGE_PAGE_BYTES - 1));
    size_t head = (size_t)(start - mapped), tail = length - head - rounded;
    if (head) munmap(mapped, head);
    if (tail) munmap(start + rounded, tail);
    madvise(start, rounded, MADV_HUGEPAGE);
    *mapped_length = rounded;
    return start;
}

/* A mapping of at least `bytes` (ipx_huge_map) with its length, to unmap when its image closes. */
static struct ipx_pixel_mapping *ipx_pixel_map(size_t bytes) {
    size_t length = 0;
    void *start = ipx_huge_map(bytes, &length);
    if (!start) return NULL;
    struct ipx_pixel_mapping *mapping = malloc(sizeof(*mapping));
    if (!mapping) {
        munmap(start, length);
        return NULL;
    }
    mapping->base = start;
    mapping->length = length;
    return mapping;
}

VipsImage *ipx_pixel_image(int width, int height, int bands, VipsInterpretation interpretation) {
    size_t bytes = (size_t)width * (size_t)height * (size_t)bands;
    VipsImage *image = NULL;
    if (bytes >= IPX_MAPPED_PIXELS_MIN_BYTES) {
        struct ipx_pixel_mapping *mapping = ipx_pixel_map(bytes);
        if (!mapping) return NULL;
        image = vips_image_new_from_memory(mapping->base, bytes, width, height, bands, VIPS_FORMAT_UCHAR);
        if (!image) {
            ipx_pixel_mapping_closed(NULL, mapping);
            return NULL;
        }
        g_signal_connect(image, "postclose", G_CALLBACK(ipx_pixel_mapping_closed), mapping);
        image->Type = interpretation;
        return image;
    }
    image = vips_image_new_memory();
    if (!image) return NULL;
    vips_image_init_fields(image, width, height, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE, interpretation, 1.0, 1.0);
    if (vips_image_write_prepare(image)) {
        g_object_unref(image);
        return NULL;
    }
    return image;
}

const void *ipx_vips_image_address(VipsImage *image) {
    return image->data;
}
