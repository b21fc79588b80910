/* The imaging C of our own run over fixed files, each result's pixels hashed (SHA-256, GLib's), one line
 * per case: "<case> <width>x<height>x<bands> <sha256>" (or "<case> status <n>" when it declines).
 * scripts/check-arm64.sh runs it built three ways (x86-64, x86-64 with the portable twins of the x86
 * kernels, aarch64 under qemu-user-static) and compares every line with Tests/CKernels/golden.txt: the
 * same bytes on both architectures (issue #57).
 *
 * Covered: the PNG decoder and its unfilter (png_decode.c, every filter, RGB and RGBA), opaque-alpha
 * detection (opaque_alpha.c), the Lanczos3 reduces in memory and across (reduce_across.c, 1-4 bands, the
 * AVX2 clones where the CPU has them), the JPEG DC 1/8 and 1/4 decoders with their colour conversion
 * (jpeg_dc.c), and libjpeg's scaled decode reduced as its rows arrive (jpeg_scaled.c + reduce_across.c).
 * Usage: kernels_golden FILE...  (PNG and JPEG files, by their first bytes). */
#include "vips_shim.h"
#include "../../bench/bench_files.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints a case: the image's size and the SHA-256 of its pixels (made into memory first), or the status. */
static void report(const char *name, const char *label, int status, VipsImage *image) {
    if (status != 0 || !image) {
        printf("%s %s status %d\n", name, label, status);
        return;
    }
    size_t length = 0;
    void *pixels = vips_image_write_to_memory(image, &length);
    if (!pixels) {
        printf("%s %s failed\n", name, label);
        vips_error_clear();
        return;
    }
    gchar *digest = g_compute_checksum_for_data(G_CHECKSUM_SHA256, pixels, length);
    printf("%s %s %dx%dx%d %s\n", name, label, image->Xsize, image->Ysize, image->Bands, digest);
    g_free(digest);
    g_free(pixels);
}

/* The reduces of a decoded image: in memory (down and across in one pass) and across alone. */
static void reduces(const char *name, VipsImage *image) {
    static const double shrinks[][2] = {{1.5, 1.5}, {2.0, 3.0}, {3.7, 2.2}, {6.9, 6.9}};
    for (size_t i = 0; i < sizeof shrinks / sizeof shrinks[0]; i++) {
        char label[64];
        VipsImage *out = NULL;
        snprintf(label, sizeof label, "reduce-%.1fx%.1f", shrinks[i][0], shrinks[i][1]);
        int status = ipx_reduce_lanczos3_in_memory(image, &out, shrinks[i][0], shrinks[i][1]);
        report(name, label, status, out);
        if (out) g_object_unref(out);
    }
    VipsImage *across = NULL;
    int status = ipx_reduce_across_lanczos3(image, &across, 2.6);
    report(name, "across-2.6", status, across);
    if (across) g_object_unref(across);
}

static void png_cases(const char *name, const unsigned char *bytes, size_t length) {
    VipsImage *decoded = NULL;
    int status = ipx_png_decode_whole(bytes, length, (size_t)1 << 28, &decoded);
    report(name, "png-decode", status, decoded);
    if (status != 0 || !decoded) return;
    reduces(name, decoded);
    VipsImage *opaque = NULL;
    status = ipx_vips_drop_opaque_alpha(decoded, &opaque);
    report(name, "drop-opaque-alpha", status, opaque);
    if (opaque) g_object_unref(opaque);
    g_object_unref(decoded);
}

static void jpeg_cases(const char *name, const unsigned char *bytes, size_t length) {
    VipsImage *image = NULL;
    int status = ipx_jpeg_decode_eighth(bytes, length, 1, 0, &image);
    report(name, "dc-eighth", status, image);
    if (image) g_object_unref(image);
    for (int coefficients = 5; coefficients <= 64; coefficients += 59) {
        char label[32];
        snprintf(label, sizeof label, "dc-quarter-%d", coefficients);
        image = NULL;
        status = ipx_jpeg_decode_quarter(bytes, length, coefficients, 1, 0, &image);
        report(name, label, status, image);
        if (image) g_object_unref(image);
    }
    VipsImage *scaled = NULL;
    status = ipx_jpeg_decode_scaled(bytes, length, 2, 1, 1LL << 28, 0, &scaled);
    report(name, "libjpeg-half", status, scaled);
    if (status == 0 && scaled) {
        image = NULL;
        int width = scaled->Xsize, height = scaled->Ysize;
        status = ipx_jpeg_decode_reduced(bytes, length, 2, 1, 1LL << 28, 0, width, height, 2.4, 2.4, &image);
        report(name, "libjpeg-half-reduced-2.4", status, image);
        if (image) g_object_unref(image);
        reduces(name, scaled);
    }
    if (scaled) g_object_unref(scaled);
}

int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 2;
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    for (int i = 1; i < argc; i++) {
        size_t length = 0;
        unsigned char *bytes = bench_read_file(argv[i], &length);
        if (!bytes) {
            fprintf(stderr, "kernels_golden: cannot read %s\n", argv[i]);
            return 2;
        }
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        if (length > 8 && memcmp(bytes, "\x89PNG", 4) == 0) png_cases(name, bytes, length);
        else if (length > 3 && bytes[0] == 0xFF && bytes[1] == 0xD8) jpeg_cases(name, bytes, length);
        else printf("%s skipped\n", name);
        free(bytes);
    }
    return 0;
}
