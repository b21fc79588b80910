#include "vips_shim.h"
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>

/* A 1/8-scale decode of a progressive JPEG from its DC coefficients alone.
 *
 * At 1/8 scale libjpeg's IDCT reads only each block's DC coefficient (the block's mean), so once every
 * component's DC scans (refinement included) are in, the 1/8 image is known: the AC scans, most of the
 * file and of the Huffman decoding work, are never read. (4:2:0 chroma is scaled with a 2x2 IDCT, whose
 * few AC terms are missing here: colour edges are a little softer at 1/8, before the final reduce.) */

struct ipx_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
};

static void ipx_jpeg_error_exit(j_common_ptr cinfo) {
    longjmp(((struct ipx_jpeg_error *)cinfo->err)->jump, 1);
}

static void ipx_jpeg_quiet(j_common_ptr cinfo, int level) {
    (void)cinfo;
    (void)level;
}

static int ipx_dc_complete(struct jpeg_decompress_struct *cinfo) {
    for (int c = 0; c < cinfo->num_components; c++) {
        if (cinfo->coef_bits[c][0] != 0) {
            return 0;
        }
    }
    return 1;
}

int ipx_jpeg_decode_eighth(const void *buffer, size_t length, int orientation, VipsImage **out) {
    struct jpeg_decompress_struct cinfo;
    struct ipx_jpeg_error error;
    unsigned char *volatile pixels = NULL;
    JOCTET *volatile icc = NULL;

    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = ipx_jpeg_error_exit;
    error.base.emit_message = ipx_jpeg_quiet;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(pixels);
        free(icc);
        return 1; /* not decodable this way: the caller lets libvips try (and report) */
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, (const unsigned char *)buffer, (unsigned long)length);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 2, 0xFFFF);
    if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    int gray = cinfo.jpeg_color_space == JCS_GRAYSCALE && cinfo.num_components == 1;
    int colour = cinfo.jpeg_color_space == JCS_YCbCr && cinfo.num_components == 3;
    if (!cinfo.progressive_mode || !(gray || colour)) {
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    cinfo.buffered_image = TRUE;
    cinfo.scale_num = 1;
    cinfo.scale_denom = 8;
    cinfo.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&cinfo);

    /* coef_bits[c][0] turns 0 when the last DC scan of c starts; read on until a scan completes after that. */
    for (;;) {
        int status = jpeg_consume_input(&cinfo);
        if (status == JPEG_SCAN_COMPLETED && ipx_dc_complete(&cinfo)) {
            break;
        }
        if (status == JPEG_REACHED_EOI || status == JPEG_SUSPENDED) {
            if (!ipx_dc_complete(&cinfo) || status == JPEG_SUSPENDED) {
                jpeg_destroy_decompress(&cinfo);
                return 1;
            }
            break;
        }
    }

    jpeg_start_output(&cinfo, cinfo.input_scan_number);
    size_t width = cinfo.output_width, height = cinfo.output_height, bands = cinfo.output_components;
    pixels = malloc(width * height * bands);
    if (!pixels) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + (size_t)cinfo.output_scanline * width * bands;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_output(&cinfo);
    unsigned int icc_length = 0;
    JOCTET *profile = NULL;
    if (jpeg_read_icc_profile(&cinfo, &profile, &icc_length)) {
        icc = profile;
    }
    jpeg_destroy_decompress(&cinfo);

    VipsImage *image = vips_image_new_from_memory_copy(pixels, width * height * bands, (int)width, (int)height,
                                                       (int)bands, VIPS_FORMAT_UCHAR);
    free(pixels);
    if (!image) {
        free(icc);
        return -1;
    }
    image->Type = gray ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
    if (icc) {
        vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, icc, icc_length);
        free(icc);
    }
    if (orientation > 1) {
        vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
    }
    *out = image;
    return 0;
}

int ipx_vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, int size, int crop) {
    if (crop >= 0) {
        return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop, NULL);
    }
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, NULL);
}
