/* libFuzzer target for the hand-written parsers of untrusted image bytes in Sources/CVipsShim:
 * the JPEG 1/8 DC decoder and its 1/4 decode of baseline files (jpeg_dc.c), the JPEG layout reader (scan count, frame header), the PNG chunk walk (png_chunks.c)
 * and the whole PNG decode (png_decode.c: built with IPX_PNG_IGNORE_CRC, so that mutated chunks get past the
 * CRC check to the inflate and the unfilter);
 * also the code that drives libjpeg's scaled decode over the same bytes (jpeg_scaled.c: error exits,
 * warnings, the profile, the pixel bound), the header read by libjpeg and libexif (jpeg_header.c), and the
 * one-pass reduce of the decoded image (reduce_across.c).
 * Built with clang -fsanitize=fuzzer,address,undefined by fuzz/run.sh; any sanitizer report fails. */
#include "vips_shim.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    if (VIPS_INIT((*argv)[0])) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VipsImage *image = NULL;
    for (int orientation = 1; orientation <= 6; orientation += 5) {
        int status = ipx_jpeg_decode_eighth(data, size, orientation, 0, &image);
        if (status == 0) {
            /* Whatever was decoded must be a whole image of the size the frame header implies. */
            if (!image || vips_image_get_width(image) < 1 || vips_image_get_height(image) < 1) abort();
            g_object_unref(image);
            image = NULL;
        } else if (status != 1 && status != 3 && status != -1) {
            abort(); /* no deadline was given: 2 is impossible */
        }
    }
    /* The 1/4 decode: the default terms, every term, and as many as the input's size picks. */
    int term_counts[3] = {5, 64, (int)(size % 66) - 1};
    for (int i = 0; i < 3; i++) {
        int status = ipx_jpeg_decode_quarter(data, size, term_counts[i], 1, 0, &image);
        if (status == 0) {
            if (!image || vips_image_get_width(image) < 1 || vips_image_get_height(image) < 1) abort();
            g_object_unref(image);
            image = NULL;
        } else if (status != 1 && status != 3 && status != -1) {
            abort();
        }
    }
    struct ipx_jpeg_layout layout;
    int scans = ipx_jpeg_read_layout(data, size, IPX_JPEG_MAX_SCANS, &layout);
    if (scans > IPX_JPEG_MAX_SCANS + 1) abort(); /* counting stops past the limit */
    if (scans >= 0 && layout.scans != scans) abort();
    if (layout.components < 0 || layout.components > 255) abort();
    /* At most 255 components of 65535x65535 samples at 2 bytes a coefficient, padded to 4x4 MCUs. */
    if (layout.coefficient_bytes < 0 || layout.coefficient_bytes > 255LL * 65536 * 65536 * 2) abort();
    if (layout.coefficient_bytes > 0 && !layout.progressive && layout.scans <= 1) abort();
    (void)ipx_png_check_chunks(data, size);
    /* The whole PNG decode: a decode is 3 or 4 bands of at most the bytes allowed, every byte readable. */
    VipsImage *png = NULL;
    int png_status = ipx_png_decode_whole(data, size, 4 * 1024 * 1024, &png);
    if (png_status == 0) {
        if (!png || (vips_image_get_bands(png) != 3 && vips_image_get_bands(png) != 4)) abort();
        size_t bytes = VIPS_IMAGE_SIZEOF_IMAGE(png);
        if (bytes > 4 * 1024 * 1024) abort();
        const uint8_t *pixels = ipx_vips_image_address(png);
        unsigned sum = 0;
        for (size_t i = 0; i < bytes; i++) sum += pixels[i];
        if (sum == 0xFFFFFFFFu) abort(); /* keeps the reads */
        g_object_unref(png);
    } else if (png_status != 1 && png_status != -1) {
        abort();
    }
    /* The header read by libjpeg and libexif (jpeg_header.c): figures within what a JPEG can declare. */
    int width = 0, height = 0, orientation = 0, bands = 0, managed = 0;
    if (ipx_jpeg_header(data, size, &width, &height, &orientation, &bands, &managed) == 0) {
        if (width < 1 || width > 65535 || height < 1 || height > 65535) abort();
        if (orientation < 1 || orientation > 8 || (bands != 1 && bands != 3 && bands != 4) || managed < 0 || managed > 2) abort();
    }
    /* libjpeg's scaled decode: at most 2 Mpixel sources here (the service passes the limit it checked). */
    for (int shrink = 8; shrink >= 2; shrink /= 4) {
        int status = ipx_jpeg_decode_scaled(data, size, shrink, 6, 2 * 1024 * 1024, 0, &image);
        if (status == 0) {
            if (!image || vips_image_get_width(image) < 1 || vips_image_get_height(image) < 1) abort();
            if (vips_image_get_width(image) > 1024 * 1024 || vips_image_get_height(image) > 1024 * 1024) abort();
            /* The one-pass reduce over the decode (reduce_across.c), at shrinks the input picks. */
            VipsImage *reduced = NULL;
            double across = 1.01 + (double)(size % 7) * 0.7, down = 1.01 + (double)(size % 5) * 0.9;
            if (ipx_reduce_lanczos3_in_memory(image, &reduced, across, down) == 0) {
                if (!reduced || vips_image_get_width(reduced) < 1 || vips_image_get_height(reduced) < 1) abort();
                if (vips_image_get_width(reduced) > vips_image_get_width(image)) abort();
                g_object_unref(reduced);
            }
            /* The same reduce encoded row by row (reduce_across.c, jpeg_encode.c), of the decode in memory and
               of the file as libjpeg decodes it (jpeg_scaled.c): both or neither make a JPEG of the same size. */
            void *jpeg = NULL, *streamed = NULL;
            size_t length = 0, streamed_length = 0;
            int out_width = 0, out_height = 0, streamed_width = 0, streamed_height = 0;
            int encoded = ipx_jpeg_encode_reduced(image, across, down, 80, (int)(size & 1), 0, &jpeg, &length, &out_width, &out_height);
            if (encoded == 0 && (!jpeg || length < 4 || out_width < 1 || out_height < 1)) abort();
            if (encoded != 0 && encoded != 1 && encoded != -1) abort();
            int stream = ipx_jpeg_decode_reduced_encoded(data, size, shrink, 2 * 1024 * 1024, 0, vips_image_get_width(image),
                                                         vips_image_get_height(image), across, down, 80, (int)(size & 1), &streamed,
                                                         &streamed_length, &streamed_width, &streamed_height);
            if (stream == 0 && (!streamed || streamed_length < 4 || streamed_width < 1 || streamed_height < 1)) abort();
            if (stream != 0 && stream != 1 && stream != 3 && stream != -1) abort();
            if (encoded == 0 && stream == 0 && (streamed_width != out_width || streamed_height != out_height)) abort();
            g_free(jpeg);
            g_free(streamed);
            g_object_unref(image);
            image = NULL;
        } else if (status != 1 && status != 3 && status != -1) {
            abort();
        }
    }
    return 0;
}
