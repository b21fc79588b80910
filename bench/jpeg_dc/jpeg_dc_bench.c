/* The 1/8-scale DC decoder (Sources/CVipsShim/jpeg/jpeg_dc.c) against libjpeg's own 1/8 decode from memory
 * (jpeg_mem_src, what jpeg_scaled.c does), file by file: whether the DC decoder takes the file, the
 * largest difference of any sample from libjpeg's (0: the same image) and the mean one, and the best of
 * seven runs of each on one thread. With a first argument `--quarter=K`, the same decoder's 1/4 decode
 * (AC terms read up to zigzag index K) against libjpeg's 1/4 decode. Built and run by bench/jpeg_dc/run.sh. */
#include "vips_shim.h"
#include "../bench_files.h"
#include <jpeglib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static int shrink = 8, coefficients = 64;

static int decode_ours(const unsigned char *bytes, size_t length, VipsImage **image) {
    return shrink == 8 ? ipx_jpeg_decode_eighth(bytes, length, 1, 0, image)
                       : ipx_jpeg_decode_quarter(bytes, length, coefficients, 1, 0, image);
}

/* libjpeg's decode at 1/`shrink` into one buffer of `*width` x `*height` x `*bands` samples. */
static unsigned char *libjpeg_scaled(const unsigned char *bytes, size_t length, int *width, int *height, int *bands) {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    info.err = jpeg_std_error(&errors);
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, bytes, (unsigned long)length);
    jpeg_read_header(&info, TRUE);
    info.scale_num = 1;
    info.scale_denom = (unsigned int)shrink;
    jpeg_start_decompress(&info);
    *width = (int)info.output_width;
    *height = (int)info.output_height;
    *bands = info.output_components;
    size_t row_bytes = (size_t)*width * (size_t)*bands;
    unsigned char *pixels = malloc(row_bytes * (size_t)*height);
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t)info.output_scanline * row_bytes;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return pixels;
}

int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 1;
    int first = 1;
    if (argc > 1 && strncmp(argv[1], "--quarter=", 10) == 0) {
        shrink = 4;
        coefficients = atoi(argv[1] + 10);
        first = 2;
    }
    printf("%-44s %6s %6s %8s %12s %12s\n", "file", "taken", "worst", "mean", "libjpeg ms", "ours ms");
    for (int i = first; i < argc; i++) {
        size_t length = 0;
        unsigned char *bytes = bench_read_file(argv[i], &length);
        if (!bytes) continue;
        int width = 0, height = 0, bands = 0;
        unsigned char *reference = libjpeg_scaled(bytes, length, &width, &height, &bands);
        VipsImage *image = NULL;
        int taken = decode_ours(bytes, length, &image) == 0;
        int worst = -1;
        double total = 0;
        if (taken) {
            worst = 0;
            if (image->Xsize != width || image->Ysize != height || image->Bands != bands) worst = 999;
            for (int y = 0; y < height && worst != 999; y++) {
                const unsigned char *row = VIPS_IMAGE_ADDR(image, 0, y);
                for (int x = 0; x < width * bands; x++) {
                    int difference = abs(row[x] - reference[(size_t)y * (size_t)(width * bands) + (size_t)x]);
                    if (difference > worst) worst = difference;
                    total += difference;
                }
            }
            g_object_unref(image);
        }
        double best_libjpeg = 1e9, best_dc = 1e9;
        for (int round = 0; round < 7; round++) {
            double start = bench_seconds();
            free(libjpeg_scaled(bytes, length, &width, &height, &bands));
            double middle = bench_seconds();
            if (middle - start < best_libjpeg) best_libjpeg = middle - start;
            if (taken && decode_ours(bytes, length, &image) == 0) {
                g_object_unref(image);
                if (bench_seconds() - middle < best_dc) best_dc = bench_seconds() - middle;
            }
        }
        const char *name = strrchr(argv[i], '/');
        printf("%-44s %6s %6d %8.3f %12.2f %12.2f\n", name ? name + 1 : argv[i], taken ? "yes" : "no", worst,
               taken ? total / ((double)width * height * bands) : 0.0, best_libjpeg * 1e3, taken ? best_dc * 1e3 : 0.0);
        free(reference);
        free(bytes);
    }
    return 0;
}
