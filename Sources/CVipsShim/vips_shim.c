#include "vips_shim.h"
#include <string.h>

int ipx_vips_start(const char *program_name, int concurrency, int operation_cache_max) {
    if (VIPS_INIT(program_name)) {
        return -1;
    }
    vips_concurrency_set(concurrency);
    vips_cache_set_max(operation_cache_max);
    if (operation_cache_max == 0) {
        vips_cache_set_max_mem(0);
        vips_cache_set_max_files(0);
    }
    return 0;
}

int ipx_vips_header(const void *buffer, size_t length,
                    int *width, int *height, int *pages, int *orientation, int *bands) {
    VipsImage *image = vips_image_new_from_buffer(buffer, length, "",
                                                  "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) {
        return -1;
    }
    *width = vips_image_get_width(image);
    *height = vips_image_get_height(image);
    *pages = vips_image_get_n_pages(image);
    *orientation = vips_image_get_orientation(image);
    *bands = vips_image_get_bands(image);
    g_object_unref(image);
    return 0;
}

int ipx_vips_thumbnail_buffer(const void *buffer, size_t length, VipsImage **out,
                              int width, int height, int size, int crop, int fail_on_error) {
    const char *options = fail_on_error ? "fail_on=error" : "";
    if (crop >= 0) {
        return vips_thumbnail_buffer((void *)buffer, length, out, width,
                                     "height", height, "size", size, "crop", crop,
                                     "option_string", options, NULL);
    }
    return vips_thumbnail_buffer((void *)buffer, length, out, width,
                                 "height", height, "size", size,
                                 "option_string", options, NULL);
}

int ipx_vips_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

int ipx_vips_to_greyscale(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_B_W, NULL);
}

int ipx_vips_gaussblur(VipsImage *in, VipsImage **out, double sigma) {
    return vips_gaussblur(in, out, sigma, NULL);
}

int ipx_vips_sharpen(VipsImage *in, VipsImage **out, double sigma) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

int ipx_vips_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue) {
    double background[3] = {red, green, blue};
    VipsArrayDouble *array = vips_array_double_new(background, 3);
    int result = vips_flatten(in, out, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return result;
}

int ipx_vips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast_uchar(in, out, NULL);
}

int ipx_vips_copy_memory(VipsImage *in, VipsImage **out) {
    VipsImage *copy = vips_image_copy_memory(in);
    if (!copy) {
        return -1;
    }
    *out = copy;
    return 0;
}

int ipx_vips_copy_with_orientation(VipsImage *in, VipsImage **out, int orientation) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    vips_image_set_int(*out, VIPS_META_ORIENTATION, orientation);
    return 0;
}

int ipx_vips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int strip) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE,
                                "optimize_coding", TRUE, "interlace", interlace ? TRUE : FALSE, NULL);
}

int ipx_vips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression) {
    return vips_pngsave_buffer(in, buffer, length, "compression", compression, "strip", TRUE, NULL);
}

int ipx_vips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, NULL);
}

int ipx_vips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "effort", effort, NULL);
}

int ipx_vips_gifsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_gifsave_buffer(in, buffer, length, "strip", TRUE, NULL);
}

int ipx_vips_decode(const void *buffer, size_t length, VipsImage **out) {
    VipsImage *lazy = vips_image_new_from_buffer(buffer, length, "", NULL);
    if (!lazy) {
        return -1;
    }
    VipsImage *copy = vips_image_copy_memory(lazy);
    g_object_unref(lazy);
    if (!copy) {
        return -1;
    }
    *out = copy;
    return 0;
}

int ipx_vips_getpoint(VipsImage *in, int x, int y, double *values, int max_bands, int *bands) {
    double *vector = NULL;
    int count = 0;
    if (vips_getpoint(in, &vector, &count, x, y, NULL)) {
        return -1;
    }
    int copied = count < max_bands ? count : max_bands;
    memcpy(values, vector, sizeof(double) * (size_t)copied);
    *bands = count;
    g_free(vector);
    return 0;
}

char *ipx_vips_take_error(void) {
    char *message = g_strdup(vips_error_buffer());
    vips_error_clear();
    return message;
}
