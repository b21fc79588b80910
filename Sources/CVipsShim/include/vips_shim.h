#ifndef IPX_VIPS_SHIM_H
#define IPX_VIPS_SHIM_H

#include <vips/vips.h>

/// Fixed-arity wrappers around libvips' variadic C API, callable from Swift.
/// Every function returns 0 on success and -1 on failure (the message is in vips_error_buffer()).
/// Output images are new references: release them with g_object_unref; output buffers with g_free.

/// Starts libvips once: worker threads per image, operation cache size (0 disables it).
int ipx_vips_start(const char *program_name, int concurrency, int operation_cache_max);

/// Receives one GLib/libvips log message: its domain (may be NULL), GLogLevelFlags, the text, and the tag
/// the emitting thread set with ipx_set_thread_log_tag (NULL when none: a libvips worker thread, say).
typedef void (*ipx_log_callback)(const char *domain, int level, const char *message, const char *thread_tag);
/// Tags the calling thread's log messages (a request id, at most 63 bytes kept); NULL clears the tag.
void ipx_set_thread_log_tag(const char *tag);
/// Emits one GLib warning on the calling thread, as libvips does (for tests of the log routing).
void ipx_emit_glib_warning(const char *domain, const char *message);
/// Sends GLib log messages of level message and above (libvips' warnings, "VipsJpeg: Corrupt JPEG
/// data..." included) to `callback` instead of GLib's default handler, which writes them raw (with
/// blank lines) to stderr; info and debug messages are dropped, as the default handler does.
void ipx_route_glib_log(ipx_log_callback callback);

/// Limits glibc's malloc arenas (one per thread by default), which libvips' large short-lived buffers on
/// many threads turn into resident memory. Returns 0 on failure.
int ipx_limit_malloc_arenas(int arenas);

/// Fixes glibc's mmap threshold (normally it grows up to 32 MiB after large frees, after which
/// multi-megabyte image buffers stay in the heap and fragment it): larger blocks are mapped and given
/// back to the system as soon as they are freed. Returns 0 on failure.
int ipx_set_malloc_mmap_threshold(int bytes);
/* Returns free pages inside malloc's heaps to the kernel (glibc malloc_trim(0)); 1 when any were released. */
int ipx_release_free_memory(void);
/* glibc malloc's figures (mallinfo2): bytes in live allocations (heap chunks and mmapped blocks), and
   free bytes held inside the heaps (not yet returned to the kernel, or trapped below live chunks). */
void ipx_malloc_statistics(size_t *in_use, size_t *free_in_heaps);

/// Reads only the header of an encoded image (no pixel decode). `colour_managed` is set when the image
/// carries an ICC profile or is CMYK: its numbers are not sRGB and must be converted. `pixel_bytes`: the
/// bytes a decoded pixel takes (all bands).
int ipx_vips_header(const void *buffer, size_t length,
                    int *width, int *height, int *pages, int *orientation, int *bands, int *colour_managed,
                    int *pixel_bytes);

/// Frames of an animated WebP from its container (libwebpdemux; nothing decoded); -1 when unreadable.
int ipx_webp_frame_count(const void *buffer, size_t length);
/// Frames of a GIF from its block structure (giflib; LZW data stepped over, never decompressed),
/// counting stops past `limit`; -1 when unreadable.
int ipx_gif_frame_count(const void *buffer, size_t length, int limit);

/// Checks a PNG's chunk lengths against the bytes present (headers only; libpng allocates a declared
/// length before reading it). Returns the number of chunks, or -1 when one claims more bytes than follow
/// (or the signature is wrong).
int ipx_png_check_chunks(const void *buffer, size_t length);

/// A whole decode of a PNG of 8-bit RGB or RGBA, not interlaced, without chunks that change its pixels or
/// carry a profile or orientation, into an image with memory of its own (png_decode.c: libdeflate and an
/// SSE2 unfilter; the pixels libvips' loader gives). 0 decoded into `*out`; 1 declined (libvips' loader
/// decodes it: another kind of PNG, any damage, more than `max_bytes` of pixels); -1 out of memory.
int ipx_png_decode_whole(const void *buffer, size_t length, size_t max_bytes, VipsImage **out);

/// Rewrites an encoded WebP without its EXIF, XMP and ICCP chunks (libwebpmux): libvips 8.14's WebP
/// saver writes an EXIF chunk (orientation, resolution) even with `strip` and no metadata left.
/// *out is freed with g_free.
int ipx_webp_strip_metadata(const void *buffer, size_t length, void **out, size_t *out_length);
/// The same, keeping the ICCP chunk when keep_icc.
int ipx_webp_strip_metadata_but_icc(const void *buffer, size_t length, int keep_icc, void **out, size_t *out_length);

/// `in` unchanged behind an image of its own (vips_copy: no pixel is copied until it is evaluated), whose
/// kill flag stops only what reads through it.
int ipx_vips_copy_lazy(VipsImage *in, VipsImage **out);

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
/// Returns a copy of `in` marked as frames of `page_height` rows each, `delay_ms` apart (test fixtures).
int ipx_vips_copy_as_animation(VipsImage *in, VipsImage **out, int page_height, int delay_ms);
/// Returns a copy of `in` with an EXIF orientation tag set (used to build test fixtures).
int ipx_vips_copy_with_orientation(VipsImage *in, VipsImage **out, int orientation);

int ipx_vips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int strip);

/// Encodes an image in memory (uchar sRGB or B_W, 3 or 1 bands, no alpha) as a JPEG with libjpeg on the
/// calling thread (jpeg_encode.c): the bytes libvips' jpegsave_buffer writes with `strip`, optimised
/// coding, the quality and `interlace`. 0: *out (g_free it) and *length are set; 1: not such an image (use
/// libvips' jpegsave); 2: `deadline_ns` (CLOCK_MONOTONIC, 0 for none) passed; -1: libjpeg failed or memory
/// is short.
int ipx_jpeg_encode_memory(VipsImage *in, int quality, int interlace, long long deadline_ns, void **out, size_t *length);
/// The encoder of ipx_jpeg_encode_memory fed one row at a time (jpeg_encode.c): the same settings and, for
/// the same rows, the same bytes. NULL when the arguments are not ones it takes (`bands` 3, RGB, or 1,
/// grey; quality 1-100; sides up to libjpeg's limit) or memory is short.
typedef struct ipx_jpeg_writer ipx_jpeg_writer;
ipx_jpeg_writer *ipx_jpeg_writer_new(int width, int height, int bands, int quality, int interlace);
/// Encodes the next row (width x bands bytes). 0, or -1 when libjpeg failed or every row was written.
int ipx_jpeg_writer_write(ipx_jpeg_writer *writer, const unsigned char *row);
/// Ends the JPEG once every row was written: 0 and *out (g_free it) and *length set, or -1.
int ipx_jpeg_writer_finish(ipx_jpeg_writer *writer, void **out, size_t *length);
void ipx_jpeg_writer_free(ipx_jpeg_writer *writer);
/// A PNG with a chosen layout, metadata as libvips writes it: `filter` 0-4 every row with that PNG filter (none,
/// sub, up, average, Paeth), 5 libpng's choice per row; Adam7 `interlace`; `bitdepth` 1-16; a `palette`
/// image. For tests of decoders that must handle every layout.
int ipx_vips_pngsave_layout(VipsImage *in, void **buffer, size_t *length, int filter, int interlace, int bitdepth,
                            int palette);
/// A JPEG with a chosen layout (4:2:0 chroma or not, restart markers every `restart_interval` MCUs, or 0
/// for none), metadata stripped: for tests of decoders that must handle every layout.
int ipx_vips_jpegsave_layout(VipsImage *in, void **buffer, size_t *length, int quality, int interlace,
                             int subsample, int restart_interval);
/// Encoders that keep every metadata block (EXIF, XMP, IPTC, ICC, comments): test fixtures only.
int ipx_vips_jpegsave_metadata(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int subsample,
                               int keep);
int ipx_vips_webpsave_metadata(VipsImage *in, void **buffer, size_t *length);
/// A lossless WebP (tests: libwebp's VP8L bitstream).
int ipx_vips_webpsave_lossless(VipsImage *in, void **buffer, size_t *length);
int ipx_vips_pngsave_metadata(VipsImage *in, void **buffer, size_t *length);
/// Decodes all frames of an encoded buffer into memory (n=-1).
int ipx_vips_decode_all_pages(const void *buffer, size_t length, VipsImage **out);
int ipx_vips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression, int strip);
int ipx_vips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip);
int ipx_vips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort, int strip);
/// JPEG XL at quality Q (libjxl's distance from it) and effort 3...9, metadata stripped when `strip`.
int ipx_vips_jxlsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort, int strip);
/// HEIC (HEVC) keeping metadata and profile, every page an image of its own (test fixtures: phone photos).
int ipx_vips_heicsave_metadata(VipsImage *in, void **buffer, size_t *length, int quality, int bitdepth);
/// Unblocks libvips' JPEG XL buffer loader (`image.allowJXLInput`); process-wide, never blocked again.
void ipx_vips_allow_jxl_input(void);

/// Lets libvips read SVG from memory (librsvg; `image.allowSVGInput`) and starts libxml2 for ipx_svg_check.
void ipx_vips_allow_svg_input(void);

/// The scales libvips' svgload accepts.
#define IPX_SVG_MIN_SCALE 0.001
#define IPX_SVG_MAX_SCALE 100000.0

/// An SVG rendered by librsvg (libvips' svgload_buffer, its security limits on) at `scale` times its declared
/// size, lazily: nothing is drawn until the image is read. No base file: nothing outside the bytes is read.
/// A scale outside IPX_SVG_MIN_SCALE...IPX_SVG_MAX_SCALE is an error (libvips would draw at the declared size).
int ipx_vips_svgload_scaled(const void *buffer, size_t length, double scale, VipsImage **out);

/// What ipx_svg_check says of an SVG document.
enum {
    IPX_SVG_OK = 0,
    /// Not well-formed XML (or deeper than libxml2's 256 levels).
    IPX_SVG_NOT_XML = -1,
    /// The root element is not `svg`.
    IPX_SVG_NOT_SVG = -2,
    /// An entity is declared or referenced.
    IPX_SVG_ENTITY = -3,
    /// A reference outside the document: an href or url() that is not `#id` or an embedded raster image,
    /// CSS @import, or a processing instruction (xml-stylesheet).
    IPX_SVG_EXTERNAL = -4,
    /// An XInclude element.
    IPX_SVG_XINCLUDE = -5,
    /// More than IPX_SVG_MAX_ELEMENTS elements.
    IPX_SVG_TOO_COMPLEX = -6,
};

/// Most elements an SVG source may have (librsvg's own limit is 1,000,000 loaded elements).
#define IPX_SVG_MAX_ELEMENTS 20000

/// What an SVG holds that its rendering cost depends on.
typedef struct {
    int elements;
    int uses;
    /// `fe*` elements (filter primitives).
    int filter_primitives;
    /// Elements with a `filter` attribute or a filter in their style.
    int filtered_elements;
    /// Elements with a mask, a clip path or an opacity (attribute or style): each drawn through a surface
    /// of its own.
    int offscreen_elements;
} ipx_svg_census;

/// Parses `buffer` with libxml2 (no network, no entities substituted) and walks it: IPX_SVG_OK with
/// `census` filled, or the first reason the document is refused (svg_check.c).
int ipx_svg_check(const void *buffer, size_t length, ipx_svg_census *census);
/// A copy whose ICC profile is its own copy of the bytes. libvips 8.14's HEIF loader hands out a profile
/// pointing into libheif's memory, which is freed when the loader closes (after the pixels are read):
/// without this, a kept profile is written with its first bytes overwritten.
int ipx_vips_with_own_profile(VipsImage *in, VipsImage **out);
int ipx_vips_gifsave(VipsImage *in, void **buffer, size_t *length);

/// Shrink-on-load thumbnail with EXIF auto-rotation, refusing damaged input, loading `pages` frames
/// of animated sources (1 = the first only).
/// size: VipsSize (0 both, 1 up, 2 down, 3 force); crop: VipsInteresting, or -1 for no crop.
/// to_srgb: convert with the embedded ICC profile (or libvips' CMYK default) to sRGB; 0 leaves the
/// numbers as they are (right only for sources without a profile).
int ipx_vips_thumbnail_buffer_pages(const void *buffer, size_t length, VipsImage **out,
                                    int width, int height, int size, int crop, int pages, int to_srgb);

/// A still WebP loaded by libwebp at `scale` (0 < scale <= 1: libwebp scales while it decodes), then
/// thumbnailed like ipx_vips_thumbnail_buffer_pages (Lanczos3 for the rest): the load keeps some detail for
/// the final reduce. Sequential access unless cropping.
int ipx_vips_thumbnail_webp_scaled(const void *buffer, size_t length, VipsImage **out,
                                   int width, int height, int size, int crop, double scale, int to_srgb);

/// A JPEG decoded at 1/`shrink` scale in the DCT (shrink 1, 2, 4 or 8), then thumbnailed exactly like
/// ipx_vips_thumbnail_buffer_pages (auto-rotation, colour management, crop). Sequential access unless cropping.
int ipx_vips_thumbnail_jpeg_shrunk(const void *buffer, size_t length, VipsImage **out,
                                   int width, int height, int size, int crop, int shrink, int to_srgb);

/// A progressive YCbCr or grey JPEG whose components all have the same sampling (4:4:4 or grey) decoded
/// at 1/8 scale from its DC scans only (jpeg_dc.c), with its ICC profile and `orientation` attached.
/// 0: *out is set; 1: not applicable (baseline, subsampled chroma, CMYK, any damage or anomaly up to the
/// EOI marker): decode another way, which decides how damage is answered; 2: `deadline_ns`
/// (CLOCK_MONOTONIC, 0 for none) passed; 3: more than IPX_JPEG_MAX_SCANS scans; -1: out of memory.
int ipx_jpeg_decode_eighth(const void *buffer, size_t length, int orientation, long long deadline_ns, VipsImage **out);

/// A one-scan baseline 4:4:4 or grey JPEG decoded at 1/4 scale by the same decoder (jpeg_dc.c): libjpeg's
/// 2x2 IDCT of each block, from the AC terms among its first `coefficients` (1...64) in zigzag order; the
/// rest are stepped over as zeros. With 64 it is libjpeg's own 1/4 decode. Same returns as
/// ipx_jpeg_decode_eighth; a progressive file returns 1.
int ipx_jpeg_decode_quarter(const void *buffer, size_t length, int coefficients, int orientation, long long deadline_ns,
                            VipsImage **out);

/// Decodes a JPEG with libjpeg at 1/`shrink` scale (1, 2, 4 or 8) into a memory image on the calling thread
/// (jpeg_scaled.c), with its ICC profile and `orientation` (> 1) attached. 0: *out is set; 1: not this
/// decoder's kind of file (not 8-bit YCbCr/RGB or grey, more than `max_pixels` source pixels) or libjpeg
/// warned or failed: use libvips' jpegload, which decides how the file is answered; 2: `deadline_ns`
/// (CLOCK_MONOTONIC, 0 for none) passed; 3: libjpeg reached scan IPX_JPEG_MAX_SCANS + 1 (stopped there by
/// its progress monitor); -1: out of memory.
int ipx_jpeg_decode_scaled(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                           long long deadline_ns, VipsImage **out);

/// ipx_jpeg_decode_scaled into an image with memory of its own (ipx_pixel_image), never the thread's reused
/// buffer: for a decode kept after the transform and read by others (DecodedSource). The same returns.
int ipx_jpeg_decode_scaled_owned(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                                 long long deadline_ns, VipsImage **out);

/// ipx_jpeg_decode_scaled reduced by Lanczos3 `hshrink` across and `vshrink` down (both > 1) as its rows
/// arrive (ipx_reduce_stream_new), never holding the whole decode: the bytes ipx_reduce_lanczos3_in_memory
/// makes of ipx_jpeg_decode_scaled's image, with the same profile and orientation. The same returns; 1 also
/// when the decode's size is not `width` x `height` (the size the caller planned the reduce for).
int ipx_jpeg_decode_reduced(const void *buffer, size_t length, int shrink, int orientation, long long max_pixels,
                            long long deadline_ns, int width, int height, double hshrink, double vshrink, VipsImage **out);
/// ipx_jpeg_decode_reduced of an 8-bit YCbCr or RGB file without orientation, its reduce encoded as
/// ipx_jpeg_encode_memory encodes the reduced image, each output row as soon as it is made: neither the
/// decode nor the reduced image is held. The ICC profile is not read (the encoder writes none). 0: *out
/// (g_free it), *out_length and the output's *out_width and *out_height are set; 1, 2, 3 and -1 as
/// ipx_jpeg_decode_reduced (1 also for a grey file: the variant is made in colour).
int ipx_jpeg_decode_reduced_encoded(const void *buffer, size_t length, int shrink, long long max_pixels, long long deadline_ns,
                                    int width, int height, double hshrink, double vshrink, int quality, int interlace,
                                    void **out, size_t *out_length, int *out_width, int *out_height);

/// Decodes a still WebP with libwebp at `scale` (0 < scale <= 1; the size rounded as libvips' webpload
/// rounds it, so the pixels are the ones `webpload` with that scale gives) into one memory image on the
/// calling thread (webp_scaled.c): RGB, or RGBA when the file says it has alpha, with its ICC profile, EXIF
/// and XMP and `orientation` (> 1) attached. 0: *out is set; 1: not this decoder's kind of file (an
/// animation, a frame that does not fill the canvas, more than `max_pixels` canvas pixels, a container
/// libwebp's demuxer rejects): use libvips' webpload; 2: `deadline_ns` (CLOCK_MONOTONIC, 0 for none)
/// passed; 4: libwebp rejected the bitstream or it ended early; -1: out of memory.
int ipx_webp_decode_scaled(const void *buffer, size_t length, double scale, int orientation, long long max_pixels,
                           long long deadline_ns, VipsImage **out);

/// ipx_webp_decode_scaled at scale 1 into an image with memory of its own (ipx_pixel_image) instead of the
/// calling thread's buffer: a whole decode that may be kept after the transform (DecodedSource).
int ipx_webp_decode_whole(const void *buffer, size_t length, int orientation, long long max_pixels, long long deadline_ns,
                          VipsImage **out);

/// libvips' webpload at a scale, into memory (the reference ipx_webp_decode_scaled is tested against).
int ipx_vips_webpload_scaled(const void *buffer, size_t length, double scale, VipsImage **out);

/// Reduces an 8-bit image of 1 to 4 bands across by `shrink` (>= 1) with Lanczos3 on the calling thread
/// (reduce_across.c): libvips' reduceh geometry, the input read strip by strip through a region, a new
/// memory image out with the input's metadata. 0: *out is set; 1: not this code's kind of image (another
/// format, coding or band count): use vips_reduceh; -1: libvips failed (the input's pipeline, memory).
int ipx_reduce_across_lanczos3(VipsImage *in, VipsImage **out, double shrink);
/// Lanczos3 down by `vshrink` and across by `hshrink` (both > 1) of an 8-bit image of 1-4 bands in memory,
/// in one pass on the calling thread, summed in floats without rounding between the two directions
/// (reduce_across.c). Returns 0, 1 when the image is not one it takes (the caller reduces otherwise), -1
/// when memory runs out.
int ipx_reduce_lanczos3_in_memory(VipsImage *in, VipsImage **out, double hshrink, double vshrink);

/// A reduce down and across like ipx_reduce_lanczos3_in_memory, fed one input row at a time (a decoder's
/// scanlines) and holding only the rows one output row's taps span (reduce_across.c): the same bytes as
/// reducing the whole input in memory.
typedef struct ipx_reduce_stream ipx_reduce_stream;

/// A stream reducing `in_width` x `in_height` x `bands` (1-4) uchar rows by `hshrink` across and `vshrink`
/// down (both > 1) into a new memory image of `interpretation`. NULL when memory is short or the arguments
/// are not ones ipx_reduce_lanczos3_in_memory takes.
ipx_reduce_stream *ipx_reduce_stream_new(int in_width, int in_height, int bands, double hshrink, double vshrink,
                                         VipsInterpretation interpretation);
/// Where the next input row is to be written (in_width x bands bytes); NULL once every row was written.
unsigned char *ipx_reduce_stream_next_row(ipx_reduce_stream *stream);
/// The row from ipx_reduce_stream_next_row is written: makes every output row whose input rows are all in.
void ipx_reduce_stream_row_written(ipx_reduce_stream *stream);
/// The reduced image (the caller's reference) once every input row was written, else NULL; frees the stream.
VipsImage *ipx_reduce_stream_finish(ipx_reduce_stream *stream);
/// Frees a stream without its image (a decode stopped part-way).
void ipx_reduce_stream_free(ipx_reduce_stream *stream);
/// A stream like ipx_reduce_stream_new's that makes no image: each output row, as soon as it is made, is
/// encoded by `writer` (not owned; made for the output's size and `bands`). NULL as ipx_reduce_stream_new.
ipx_reduce_stream *ipx_reduce_stream_new_encoding(int in_width, int in_height, int bands, double hshrink, double vshrink,
                                                  ipx_jpeg_writer *writer);
/// The side of a reduce's output from a side of `in_side` reduced by `shrink` (>= 1; libvips' rounding to
/// nearest, at least 1).
int ipx_reduced_side(int in_side, double shrink);
/// Whether the writer of an encoding stream failed (libjpeg's error, memory).
int ipx_reduce_stream_failed(const ipx_reduce_stream *stream);
/// Frees an encoding stream: 0 when every input row was written and every output row encoded, else -1.
int ipx_reduce_stream_finish_encoding(ipx_reduce_stream *stream);

/// ipx_reduce_lanczos3_in_memory of an 8-bit sRGB image (3 bands) encoded as ipx_jpeg_encode_memory would
/// encode the reduced image, row by row as the rows are made (the reduced image is never held): the same
/// bytes. 0: *out (g_free it), *length and the output's *width and *height are set; 1: not such an image
/// or shrinks (the caller reduces, then encodes); 2: `deadline_ns` (CLOCK_MONOTONIC, 0 for none) passed;
/// -1: libjpeg failed or memory is short.
int ipx_jpeg_encode_reduced(VipsImage *in, double hshrink, double vshrink, int quality, int interlace, long long deadline_ns,
                            void **out, size_t *length, int *width, int *height);

/// libvips' reduceh with Lanczos3 and no reducing gap (the reference ipx_reduce_across_lanczos3 is tested
/// against), into memory.
int ipx_vips_reduceh_lanczos3(VipsImage *in, VipsImage **out, double shrink);
/// libvips' reducev with Lanczos3 and no reducing gap, into memory (with ipx_vips_reduceh_lanczos3, the
/// reference ipx_reduce_lanczos3_in_memory is tested against).
int ipx_vips_reducev_lanczos3(VipsImage *in, VipsImage **out, double shrink);
/// libvips' reducev then reduceh with Lanczos3 computed in doubles and rounded once at the end, into memory:
/// the exact reference for ipx_reduce_lanczos3_in_memory (libvips' 8-bit path keeps 12-bit weights and
/// rounds after each direction).
int ipx_vips_reduce_lanczos3_exact(VipsImage *in, VipsImage **out, double hshrink, double vshrink);

/// The largest decode made in a transform thread's own reused buffer (thread_buffer.c): 8 MiB, a 1/2-scale
/// decode of a 4K photograph; larger decodes allocate their own memory.
#define IPX_THREAD_BUFFER_MAX_BYTES ((size_t)8 << 20)

/// A transform thread's pixel buffer, lent to one image at a time (thread_buffer.c).
typedef struct ipx_thread_buffer ipx_thread_buffer;

/// At least `bytes` of the calling thread's own buffer, reused from its last decode, and its `lease`; NULL
/// when `bytes` is over IPX_THREAD_BUFFER_MAX_BYTES or memory is short (allocate as usual then). Its old
/// contents are whatever the last image held: write every byte before the image is read.
unsigned char *ipx_thread_buffer_lend(size_t bytes, ipx_thread_buffer **lease);

/// The lease ends when `image` (made on the lent memory) is closed, on whatever thread that happens.
void ipx_thread_buffer_tie(ipx_thread_buffer *lease, VipsImage *image);

/// Ends a lease that no image was tied to.
void ipx_thread_buffer_return(ipx_thread_buffer *lease);

/// The huge page ipx_huge_map aligns and rounds its mappings to: 2 MiB.
#define IPX_HUGE_PAGE_BYTES ((size_t)2 << 20)

/// A fresh anonymous mapping of at least `bytes` (rounded up to 2 MiB, the rounded length in
/// `*mapped_length`) starting at a 2 MiB boundary and advised MADV_HUGEPAGE, so that the kernel faults it
/// in 2 MiB at a time where it has huge pages (mapped_pixels.c); munmap it with that length. NULL when the
/// kernel maps nothing.
void *ipx_huge_map(size_t bytes, size_t *mapped_length);

/// The smallest block libjpeg asks for that gets a huge-page mapping of its own (jpeg_memory.c): 4 MiB.
#define IPX_JPEG_MAPPED_MIN_BYTES ((size_t)4 << 20)

struct jpeg_common_struct;

/// libjpeg's system-dependent allocation of a large block (jmemsys.h), defined here in place of
/// libjpeg-turbo's plain malloc (jpeg_memory.c): from IPX_JPEG_MAPPED_MIN_BYTES on a huge-page mapping of
/// its own (ipx_huge_map), else malloc. NULL when memory is short.
void *jpeg_get_large(struct jpeg_common_struct *info, size_t bytes);

/// Frees a block from jpeg_get_large (`bytes` is not relied on).
void jpeg_free_large(struct jpeg_common_struct *info, void *object, size_t bytes);

/// Blocks libjpeg was given a huge-page mapping of its own for since the process started (jpeg_memory.c).
unsigned long long ipx_jpeg_mapped_blocks_total(void);

/// The smallest pixel buffer mapped on its own in huge pages (mapped_pixels.c): 4 MiB.
#define IPX_MAPPED_PIXELS_MIN_BYTES ((size_t)4 << 20)

/// A memory image of `width` x `height` x `bands` uchar pixels, not yet written (mapped_pixels.c): from
/// IPX_MAPPED_PIXELS_MIN_BYTES on its own mapping at a 2 MiB boundary advised for transparent huge pages
/// (unmapped when the image closes), else libvips' own memory. NULL when memory is short.
VipsImage *ipx_pixel_image(int width, int height, int bands, VipsInterpretation interpretation);

/// `in` evaluated into memory like ipx_vips_copy_memory, into ipx_pixel_image's memory (huge pages from
/// IPX_MAPPED_PIXELS_MIN_BYTES on) when it is 8-bit; other formats go to ipx_vips_copy_memory.
int ipx_vips_copy_into_pixels(VipsImage *in, VipsImage **out);

/// The first pixel of an image whose pixels are in memory (NULL otherwise): for tests.
const void *ipx_vips_image_address(VipsImage *image);

/// The image a decoder writes `width` x `height` x `bands` uchar pixels into (row by row through
/// VIPS_IMAGE_ADDR): on the calling thread's buffer, lent and tied to the image, when it fits; else
/// ipx_pixel_image. NULL when memory is short. Every pixel must be written before the image is handed out;
/// a decode that stops part-way unrefs it, which gives the buffer back unread.
VipsImage *ipx_thread_buffer_image(int width, int height, int bands, VipsInterpretation interpretation);

/// The calling thread's buffer (NULL before its first lend): for tests.
const void *ipx_thread_buffer_address(void);

/// libvips' jpegload at a shrink, into memory (the reference ipx_jpeg_decode_scaled is tested against).
int ipx_vips_jpegload_shrunk(const void *buffer, size_t length, int shrink, VipsImage **out);

/// Most scans (SOS segments) a JPEG may have; more is refused before any decoder runs (a 10-byte SOS
/// makes libjpeg walk the whole frame again). Encoders write at most about a dozen.
#define IPX_JPEG_MAX_SCANS 64

/// What a JPEG's marker segments declare about how a decoder will hold it (nothing is decoded).
struct ipx_jpeg_layout {
    /// SOS segments, counted up to one past the walk's `limit`.
    int scans;
    /// Components of the first frame (0 when no frame header was read).
    int components;
    /// The frame is progressive (SOF2, SOF6, SOF10, SOF14).
    int progressive;
    /// Every component has the same sampling factors (grey, 4:4:4): jpeg_dc.c's kind of frame.
    int uniform_sampling;
    /// The bytes of libjpeg's whole-image coefficient buffer (128 per 8x8 block of every component,
    /// padded to whole MCUs), which it allocates for a progressive or multi-scan frame whatever the
    /// output scale; 0 when one interleaved scan lets it decode row by row, or no frame header was found.
    long long coefficient_bytes;
    /// The restart interval in MCUs a DRI segment before the first scan declares (0: no restart markers).
    int restart_interval;
};

/// Walks a JPEG's marker segments, stepping over entropy-coded data (no decoding), counting SOS
/// segments up to one past `limit`, and fills `layout` from its first frame header. Returns the scan
/// count (-1 when the bytes are not a JPEG). The walk ends at the first SOS of a sequential frame when
/// that scan holds every component (a baseline JPEG as encoders write it): libjpeg refuses any further
/// scan of such a frame, so its count is 1 whatever follows.
int ipx_jpeg_read_layout(const void *buffer, size_t length, int limit, struct ipx_jpeg_layout *layout);

/// A JPEG's header as ipx_vips_header reports it (width, height, EXIF orientation 1-8, bands 1/3/4, and
/// colour_managed 0 sRGB numbers / 1 a profile or CMYK / 2 an RGB profile other than sRGB), read by libjpeg
/// and libexif without libvips (jpeg_header.c). Returns 0, or 1 when libvips should read it instead.
int ipx_jpeg_header(const void *buffer, size_t length, int *width, int *height, int *orientation, int *bands,
                    int *colour_managed);

/* 1 when an ICC profile is an RGB profile described as sRGB (read by lcms2), else 0. */
int ipx_icc_is_srgb(const void *data, size_t length);

/// vips_thumbnail_image with the arguments of ipx_vips_thumbnail_buffer_pages.
int ipx_vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, int size, int crop, int to_srgb);
/// Opens a buffer for a whole decode that fails on the first decode error, its profile copied; the
/// pixels are read when the image is evaluated (sequentially unless `random_access`).
int ipx_vips_load_strict(const void *buffer, size_t length, int random_access, VipsImage **out);
/// Reduces by `hshrink` across and `vshrink` down with Lanczos3 alone (no box shrink), premultiplied
/// around it when `premultiply` (a real alpha).
int ipx_vips_reduce_lanczos(VipsImage *in, VipsImage **out, double hshrink, double vshrink, int premultiply);
/// Whether an image in memory has an alpha band that is not opaque everywhere (one pass over it).
int ipx_vips_has_real_alpha(VipsImage *in);

/// An 8-bit RGBA (or grey with alpha) image in memory whose alpha is 255 everywhere, as the same pixels
/// without the alpha band in `*out` (opaque_alpha.c): moved down in place in `in`'s memory, which `*out`
/// holds (with `in`'s metadata) until it closes; `in` must not be read again. Returns 1 (nothing made)
/// when the image has no such alpha or is not 8-bit in memory, 0 when made, -1 when libvips failed.
int ipx_vips_drop_opaque_alpha(VipsImage *in, VipsImage **out);
/// Bytes an image's pixels take in memory.
size_t ipx_vips_memory_bytes(VipsImage *in);
/// Copies an area.
int ipx_vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);

/// `in` resized by `scale` (libvips' resize: Lanczos3, box-shrinking first for large reductions).
int ipx_vips_resize_by(VipsImage *in, VipsImage **out, double scale);

/// `sub` placed over `main` at (`x`, `y`), cast to `main`'s format and bands.
int ipx_vips_insert(VipsImage *main, VipsImage *sub, VipsImage **out, int x, int y);

/// `in` as blocks of `block` x `block` pixels, each the average of about the pixels under it (the last row
/// and column of blocks cut to the image): the same size as `in`.
int ipx_vips_pixelate(VipsImage *in, VipsImage **out, int block);
/// Places `in` in the centre of a width x height canvas filled with `background` (one value per band).
int ipx_vips_embed_centre(VipsImage *in, VipsImage **out, int width, int height, const double *background, int bands);
/// Adds an opaque alpha band.
int ipx_vips_add_alpha(VipsImage *in, VipsImage **out);
/// out = in * a + b per band (a, b: one value per band), cast back to 8 bit (clipped).
int ipx_vips_linear_uchar(VipsImage *in, VipsImage **out, const double *a, const double *b, int bands);
/// 3x3 colour matrix on the first three bands (alpha kept), cast back to 8 bit.
int ipx_vips_recomb3(VipsImage *in, VipsImage **out, const double *matrix);
/// Rotates by a multiple of 90 degrees (1 = 90, 2 = 180, 3 = 270).
int ipx_vips_rotate(VipsImage *in, VipsImage **out, int quarter_turns);
/// Mirrors: horizontal (left-right) when non-zero, else vertical (top-bottom).
int ipx_vips_mirror(VipsImage *in, VipsImage **out, int horizontal);
/// Multiplies the alpha channel by a one-band 8-bit mask of the same size (adding alpha if absent).
int ipx_vips_apply_mask(VipsImage *in, VipsImage **out, const unsigned char *mask);
/// The bounding box of what differs from the background (the top-left pixel) by more than threshold.
int ipx_vips_find_trim(VipsImage *in, double threshold, int *left, int *top, int *width, int *height);
/// Smart crop (libvips' attention strategy) to width x height.
int ipx_vips_smartcrop(VipsImage *in, VipsImage **out, int width, int height);
/// A copy without any metadata but frame layout and timing (page-height, n-pages, delay, loop): no EXIF
/// blob nor the exif-ifd* fields libvips 8.14's WebP saver rebuilds EXIF from, no XMP, IPTC, ICC,
/// Photoshop, comments or text chunks.
int ipx_vips_without_metadata(VipsImage *in, VipsImage **out);
/// The same, keeping the ICC profile when keep_icc (colour=keep).
int ipx_vips_without_metadata_but_icc(VipsImage *in, VipsImage **out, int keep_icc);
/// The image's metadata fields other than frame layout and timing, each followed by '\n', into `names`
/// (at most `capacity` bytes, NUL-terminated); returns the bytes written. For tests of what outputs keep.
int ipx_vips_metadata_fields(VipsImage *in, char *names, size_t capacity);
/// A copy with a blob field set (test fixtures: exif-data, xmp-data, iptc-data, icc-profile-data).
int ipx_vips_copy_with_blob(VipsImage *in, VipsImage **out, const char *name, const void *data, size_t length);
/// A copy with a string field set (test fixtures: comments).
int ipx_vips_copy_with_string(VipsImage *in, VipsImage **out, const char *name, const char *value);
/// Converts sRGB numbers into `profile` (a file or a libvips built-in: srgb, p3, cmyk), attaching it.
int ipx_vips_icc_export(VipsImage *in, VipsImage **out, const char *profile);
/// Converts with the embedded profile to sRGB (the reference colour conversion).
int ipx_vips_icc_to_srgb(VipsImage *in, VipsImage **out);
/// Frame height of a multi-frame image (its full height when single).
int ipx_vips_page_height(VipsImage *in);
/// Interleaved 8-bit pixels; the caller frees them with g_free.
void *ipx_vips_pixels(VipsImage *in, size_t *length);

/// Decodes an encoded buffer fully into memory (used to inspect results).
int ipx_vips_decode(const void *buffer, size_t length, VipsImage **out);
/// Reads one pixel's band values (up to max_bands) of an image.
int ipx_vips_getpoint(VipsImage *in, int x, int y, double *values, int max_bands, int *bands);

/// An overlay ready to place: 8-bit sRGB with alpha, resized by `scale` (0 or 1: as is), its alpha
/// multiplied by `opacity` (0..1).
int ipx_vips_overlay_prepare(VipsImage *in, double scale, double opacity, VipsImage **out);
/// A transparent frame_width x frame_height layer with `overlay` at left/top (parts outside are cut off),
/// or, with `tile`, repeated from the top-left corner with gap_x/gap_y pixels between copies.
int ipx_vips_overlay_place(VipsImage *overlay, int frame_width, int frame_height, int left, int top, int tile,
                           int gap_x, int gap_y, VipsImage **out);
/// Text (Pango markup: escape user text) in `font` at 72 dpi (the size is in pixels), wrapped at
/// width_limit, as 8-bit sRGB with alpha in the colour rgba (alpha 0..255 carries the opacity).
int ipx_vips_text_layer(const char *markup, const char *font, int width_limit, const double *rgba, VipsImage **out);
/// `layer` (one frame's size, with alpha) composited over every frame of `in` (frames stacked,
/// page_height each), the result 8-bit with alpha only when `in` had it; `in`'s metadata is kept.
int ipx_vips_composite_frames(VipsImage *in, VipsImage *layer, int page_height, VipsImage **out);

/// The last error message, cleared afterwards. The caller frees the string with g_free.
char *ipx_vips_take_error(void);

/// How many of libvips' orc_program_compile and orc_program_free calls went through the process's own
/// definitions, which run liborc's under one lock (orc_serialized.c: liborc up to 0.4.33 races between
/// them).
long ipx_orc_serialized_calls(void);

#endif
