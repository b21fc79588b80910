/* The whole-PNG decoder of Sources/CVipsShim/png/png_decode.c against the libraries that could do its job,
 * file by file, from memory, into one image of 8-bit pixels: libspng (Debian's 0.7, SPNG_FMT_PNG, the file's
 * own channels), and libvips' pngload (libpng over zlib, what the service used before). Whether our decoder
 * takes the file, whether libspng's pixels equal ours (the same image, byte for byte), and the best of seven
 * runs of each on one thread. Built and run by bench/png_decode/run.sh. */
#include "vips_shim.h"
#include "../bench_files.h"
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* libspng's decode of the whole image in the file's own format; NULL when it fails. */
static unsigned char *spng_whole(const unsigned char *bytes, size_t length, size_t *size) {
    spng_ctx *context = spng_ctx_new(0);
    unsigned char *pixels = NULL;
    if (context && spng_set_png_buffer(context, bytes, length) == 0 &&
        spng_decoded_image_size(context, SPNG_FMT_PNG, size) == 0) {
        pixels = malloc(*size);
        if (pixels && spng_decode_image(context, pixels, *size, SPNG_FMT_PNG, 0) != 0) {
            free(pixels);
            pixels = NULL;
        }
    }
    spng_ctx_free(context);
    return pixels;
}

/* libvips' pngload (libpng) of the whole image into memory. */
static int vips_whole(const unsigned char *bytes, size_t length) {
    VipsImage *image = NULL;
    if (vips_pngload_buffer((void *)bytes, length, &image, "access", VIPS_ACCESS_SEQUENTIAL, NULL)) return -1;
    VipsImage *memory = vips_image_copy_memory(image);
    g_object_unref(image);
    if (!memory) return -1;
    g_object_unref(memory);
    return 0;
}

int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 1;
    vips_cache_set_max(0);
    printf("%-36s %6s %6s %10s %10s %10s\n", "file", "taken", "same", "libpng ms", "libspng ms", "ours ms");
    for (int i = 1; i < argc; i++) {
        size_t length = 0;
        unsigned char *bytes = bench_read_file(argv[i], &length);
        if (!bytes) continue;
        size_t size = 0;
        unsigned char *reference = spng_whole(bytes, length, &size);
        VipsImage *image = NULL;
        int taken = ipx_png_decode_whole(bytes, length, (size_t)1 << 31, &image) == 0;
        int same = 0;
        if (taken) {
            size_t row = (size_t)VIPS_IMAGE_SIZEOF_LINE(image);
            same = reference && size == row * (size_t)image->Ysize;
            for (int y = 0; same && y < image->Ysize; y++)
                same = memcmp(VIPS_IMAGE_ADDR(image, 0, y), reference + row * (size_t)y, row) == 0;
            g_object_unref(image);
        }
        double best[3] = {1e9, 1e9, 1e9};
        for (int round = 0; round < 7; round++) {
            double start = bench_seconds();
            if (vips_whole(bytes, length) == 0 && bench_seconds() - start < best[0]) best[0] = bench_seconds() - start;
            start = bench_seconds();
            unsigned char *pixels = spng_whole(bytes, length, &size);
            if (pixels && bench_seconds() - start < best[1]) best[1] = bench_seconds() - start;
            free(pixels);
            start = bench_seconds();
            if (taken && ipx_png_decode_whole(bytes, length, (size_t)1 << 31, &image) == 0) {
                g_object_unref(image);
                if (bench_seconds() - start < best[2]) best[2] = bench_seconds() - start;
            }
        }
        const char *name = strrchr(argv[i], '/');
        printf("%-36s %6s %6s %10.1f %10.1f %10.1f\n", name ? name + 1 : argv[i], taken ? "yes" : "no",
               taken ? (same ? "yes" : "NO") : "-", best[0] * 1e3, best[1] * 1e3, taken ? best[2] * 1e3 : 0.0);
        free(reference);
        free(bytes);
    }
    return 0;
}
