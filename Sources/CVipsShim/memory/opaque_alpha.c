#include "vips_shim.h"
#include "../platform/platform.h"
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A whole decode whose alpha is opaque everywhere (most RGBA PNGs on the web: an editor's export with an
 * alpha band nobody painted) held without it.
 *
 * The pixels are moved down in place, in the memory the decode already has: the colour bands of pixel i
 * go to i * (bands - 1), which never lies after where they are read from, so one forward pass moves them.
 * The image handed out is a new header over that memory with the decode's metadata (its ICC profile,
 * orientation, resolution), holding the decode until it closes; the pages the alpha took at the end of a
 * mapping of its own go back to the kernel. A decode with a real alpha is not touched. */

/* Whether every alpha sample of an 8-bit image in memory of `count` pixels of `bands` (4 or 2) is 255:
 * the pixels ANDed together as 4-byte words (a loop the compiler vectorises), whose alpha bytes are the
 * last of each word (RGBA) or the second and last (two grey-alpha pixels a word). */
IPX_CLONES_AVX2
static int ipx_alpha_all_opaque(const unsigned char *pixels, size_t count, int bands) {
    size_t length = count * (size_t)bands, words = length / 4;
    uint32_t all = 0xFFFFFFFFu;
    for (size_t i = 0; i < words; i++) {
        uint32_t word;
        memcpy(&word, pixels + 4 * i, 4);
        all &= word;
    }
    unsigned char bytes[4];
    memcpy(bytes, &all, 4);
    int opaque = bytes[3] == 0xFF && (bands == 4 || bytes[1] == 0xFF);
    /* A grey-alpha image of an odd number of pixels: its last pixel is in no word. */
    if (length % 4 != 0) opaque = opaque && pixels[length - 1] == 0xFF;
    return opaque;
}

int ipx_vips_drop_opaque_alpha(VipsImage *in, VipsImage **out) {
    *out = NULL;
    int bands = in->Bands;
    int colour = bands == 4 && (in->Type == VIPS_INTERPRETATION_sRGB || in->Type == VIPS_INTERPRETATION_RGB);
    int grey = bands == 2 && in->Type == VIPS_INTERPRETATION_B_W;
    if (!(colour || grey) || in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || !in->data ||
        in->Xsize < 1 || in->Ysize < 1)
        return 1;
    unsigned char *pixels = (unsigned char *)in->data;
    size_t count = (size_t)in->Xsize * (size_t)in->Ysize;
    if (!ipx_alpha_all_opaque(pixels, count, bands)) return 1;

    int kept = bands - 1;
    if (bands == 4) {
        /* Each pixel read as a word, then written as a word 3 bytes on: its fourth byte lands on source
           bytes already read (or on the next pixel's first byte, written next), and the last one inside
           the buffer (a quarter of it lies behind). */
        for (size_t i = 0; i < count; i++) {
            uint32_t pixel;
            memcpy(&pixel, pixels + 4 * i, 4);
            memcpy(pixels + 3 * i, &pixel, 4);
        }
    } else {
        for (size_t i = 0; i < count; i++) pixels[i] = pixels[2 * i];
    }
    size_t bytes = count * (size_t)kept;
    VipsImage *image = vips_image_new_from_memory(pixels, bytes, in->Xsize, in->Ysize, kept, VIPS_FORMAT_UCHAR);
    if (!image) return -1;
    /* The decode's fields and metadata, then its own band count again. */
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_ANY, in, NULL)) {
        g_object_unref(image);
        return -1;
    }
    image->Bands = kept;
    g_object_ref(in);
    g_object_set_data_full(G_OBJECT(image), "ipx-decode", in, g_object_unref);

    /* The alpha's share at the end of a mapping of its own (mapped_pixels.c) back to the kernel: whole
       pages only, none of them read again. Smaller images are libvips' own allocations: left as they are. */
    size_t whole = count * (size_t)bands;
    long page = sysconf(_SC_PAGESIZE);
    if (whole >= IPX_MAPPED_PIXELS_MIN_BYTES && page > 0) {
        uintptr_t start = ((uintptr_t)pixels + bytes + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        uintptr_t end = ((uintptr_t)pixels + whole) & ~((uintptr_t)page - 1);
        if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
    }
    *out = image;
    return 0;
}
