#ifndef IPX_VIPS_SHIM_H
#define IPX_VIPS_SHIM_H

#include <vips/vips.h>

/// Fixed-arity wrappers around libvips' variadic C API, callable from Swift.
/// Every function returns 0 on success and -1 on failure (the message is in vips_error_buffer()).
/// Output images are new references: release them with g_object_unref; output buffers with g_free.

/// Starts libvips once: worker threads per image, operation cache size (0 disables it).
int ipx_vips_start(const char *program_name, int concurrency, int operation_cache_max);

/// Reads only the header of an encoded image (no pixel decode).
int ipx_vips_header(const void *buffer, size_t length,
                    int *width, int *height, int *pages, int *orientation, int *bands);

/// Shrink-on-load thumbnail with EXIF auto-rotation.
/// size: VipsSize (0 both, 1 up, 2 down, 3 force); crop: VipsInteresting, or -1 for no crop.
/// fail_on_error: refuse damaged input instead of decoding what can be decoded.
int ipx_vips_thumbnail_buffer(const void *buffer, size_t length, VipsImage **out,
                              int width, int height, int size, int crop, int fail_on_error);

/// Converts to sRGB (or leaves sRGB as is).
int ipx_vips_to_srgb(VipsImage *in, VipsImage **out);
/// Converts to one-band greyscale (alpha kept).
int ipx_vips_to_greyscale(VipsImage *in, VipsImage **out);
/// Gaussian blur with the given sigma.
int ipx_vips_gaussblur(VipsImage *in, VipsImage **out, double sigma);
/// Unsharp mask sharpening with the given sigma.
int ipx_vips_sharpen(VipsImage *in, VipsImage **out, double sigma);
/// Removes alpha by compositing over an RGB background.
int ipx_vips_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue);
/// Casts to 8-bit unsigned per band.
int ipx_vips_cast_uchar(VipsImage *in, VipsImage **out);
/// Returns a new image sharing pixels with `in`, with all metadata fields removed except what pixels need.
int ipx_vips_copy_memory(VipsImage *in, VipsImage **out);
/// Returns a copy of `in` with an EXIF orientation tag set (used to build test fixtures).
int ipx_vips_copy_with_orientation(VipsImage *in, VipsImage **out, int orientation);

int ipx_vips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int strip);
int ipx_vips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression);
int ipx_vips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality);
int ipx_vips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort);
int ipx_vips_gifsave(VipsImage *in, void **buffer, size_t *length);

/// Decodes an encoded buffer fully into memory (used to inspect results).
int ipx_vips_decode(const void *buffer, size_t length, VipsImage **out);
/// Reads one pixel's band values (up to max_bands) of an image.
int ipx_vips_getpoint(VipsImage *in, int x, int y, double *values, int max_bands, int *bands);

/// The last error message, cleared afterwards. The caller frees the string with g_free.
char *ipx_vips_take_error(void);

#endif
