#include "vips_shim.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* One pixel buffer per thread, lent to one decoded image at a time and used again by the next decode on
 * the same thread: a transform thread decodes into memory whose pages are already mapped and faulted in,
 * instead of a fresh allocation (mmap, page faults, munmap) per request.
 *
 * The buffer belongs to its thread; the image it is lent to may be released on any thread (libvips
 * pipelines drop their inputs wherever the last reference goes), so its state is one atomic value:
 *   IDLE    the thread may lend it;
 *   LENT    an image holds it; the image's "postclose" gives it back (LENT -> IDLE);
 *   ORPHAN  its thread moved on (a decode came while it was still lent, or the thread ended): whoever
 *           gives it back frees it.
 * Only decodes up to IPX_THREAD_BUFFER_MAX_BYTES use it, so a thread holds at most that much between
 * requests; larger decodes allocate their own memory as before. A lent buffer is only ever read through
 * the one image it was lent to, whose pixels the decoder writes in full before the image is handed out
 * (a decode that fails part-way releases its image, and the buffer with it, before anyone reads it). */

enum { IPX_BUFFER_IDLE = 0, IPX_BUFFER_LENT = 1, IPX_BUFFER_ORPHAN = 2 };

struct ipx_thread_buffer {
    unsigned char *data;
    size_t capacity;
    atomic_int state;
};

static pthread_key_t ipx_buffer_key;
static pthread_once_t ipx_buffer_once = PTHREAD_ONCE_INIT;

static void ipx_buffer_free(ipx_thread_buffer *buffer) {
    free(buffer->data);
    free(buffer);
}

/* Gives a buffer up for its thread: freed now when idle, else by the image that still holds it. */
static void ipx_buffer_abandon(ipx_thread_buffer *buffer) {
    int expected = IPX_BUFFER_IDLE;
    if (atomic_compare_exchange_strong(&buffer->state, &expected, IPX_BUFFER_ORPHAN)) {
        ipx_buffer_free(buffer);
        return;
    }
    expected = IPX_BUFFER_LENT;
    if (!atomic_compare_exchange_strong(&buffer->state, &expected, IPX_BUFFER_ORPHAN)) {
        /* Given back between the two exchanges: idle now, and still ours to free. */
        ipx_buffer_free(buffer);
    }
}

static void ipx_buffer_thread_ended(void *value) {
    if (value) ipx_buffer_abandon(value);
}

static void ipx_buffer_make_key(void) {
    pthread_key_create(&ipx_buffer_key, ipx_buffer_thread_ended);
}

unsigned char *ipx_thread_buffer_lend(size_t bytes, ipx_thread_buffer **lease) {
    *lease = NULL;
    if (bytes == 0 || bytes > IPX_THREAD_BUFFER_MAX_BYTES) return NULL;
    pthread_once(&ipx_buffer_once, ipx_buffer_make_key);
    ipx_thread_buffer *buffer = pthread_getspecific(ipx_buffer_key);
    if (buffer && atomic_load(&buffer->state) != IPX_BUFFER_IDLE) {
        /* Still lent (an image of an earlier transform lives on): that image frees it; start another. */
        ipx_buffer_abandon(buffer);
        buffer = NULL;
    }
    if (!buffer) {
        buffer = calloc(1, sizeof(*buffer));
        if (!buffer) return NULL;
        atomic_init(&buffer->state, IPX_BUFFER_IDLE);
        pthread_setspecific(ipx_buffer_key, buffer);
    }
    if (buffer->capacity < bytes) {
        /* No copy: the old contents are never read again. */
        free(buffer->data);
        buffer->capacity = 0;
        buffer->data = malloc(bytes);
        if (!buffer->data) return NULL;
        buffer->capacity = bytes;
    }
    atomic_store(&buffer->state, IPX_BUFFER_LENT);
    *lease = buffer;
    return buffer->data;
}

void ipx_thread_buffer_return(ipx_thread_buffer *lease) {
    if (!lease) return;
    int expected = IPX_BUFFER_LENT;
    if (!atomic_compare_exchange_strong(&lease->state, &expected, IPX_BUFFER_IDLE)) {
        /* Orphaned by its thread meanwhile: the last holder frees it. */
        ipx_buffer_free(lease);
    }
}

static void ipx_buffer_image_closed(VipsObject *image, void *lease) {
    (void)image;
    ipx_thread_buffer_return(lease);
}

void ipx_thread_buffer_tie(ipx_thread_buffer *lease, VipsImage *image) {
    g_signal_connect(image, "postclose", G_CALLBACK(ipx_buffer_image_closed), lease);
}

VipsImage *ipx_thread_buffer_image(int width, int height, int bands, VipsInterpretation interpretation) {
    size_t bytes = (size_t)width * (size_t)height * (size_t)bands;
    ipx_thread_buffer *lease = NULL;
    unsigned char *memory = ipx_thread_buffer_lend(bytes, &lease);
    VipsImage *image = NULL;
    if (memory) {
        image = vips_image_new_from_memory(memory, bytes, width, height, bands, VIPS_FORMAT_UCHAR);
        if (!image) {
            ipx_thread_buffer_return(lease);
            return NULL;
        }
        ipx_thread_buffer_tie(lease, image);
        image->Type = interpretation;
        return image;
    }
    return ipx_pixel_image(width, height, bands, interpretation);
}

const void *ipx_thread_buffer_address(void) {
    pthread_once(&ipx_buffer_once, ipx_buffer_make_key);
    ipx_thread_buffer *buffer = pthread_getspecific(ipx_buffer_key);
    return buffer ? buffer->data : NULL;
}
