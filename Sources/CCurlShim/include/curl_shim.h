#ifndef IPX_CURL_SHIM_H
#define IPX_CURL_SHIM_H

#include <curl/curl.h>
#include <sys/socket.h>

/// Typed, fixed-arity wrappers around libcurl's variadic curl_easy_setopt / curl_easy_getinfo,
/// plus the C side of one transfer: a size-bounded body handed to the caller's sink, a bounded header
/// buffer and the connect-time address veto (CURLOPT_OPENSOCKETFUNCTION).

CURLcode ipx_curl_global_init(void);

CURLcode ipx_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode ipx_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ipx_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode ipx_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value);

CURLcode ipx_curl_get_long(CURL *handle, CURLINFO info, long *value);
CURLcode ipx_curl_get_double(CURL *handle, CURLINFO info, double *value);
CURLcode ipx_curl_get_string(CURL *handle, CURLINFO info, char **value);

/// Decides whether a resolved peer address may be connected to: non-zero allows it.
typedef int (*ipx_address_decider)(void *context, int family, const struct sockaddr *address);

/// Receives a body's bytes as they arrive, on libcurl's thread: `declared` is the response's declared
/// length (Content-Length; -1 when there is none) at the first call of each response, -1 at later ones.
/// Returns `length` to go on; anything else aborts the transfer.
typedef size_t (*ipx_body_sink)(void *context, const unsigned char *data, size_t length, long long declared);

/// What one transfer collects. Create with ipx_transfer_new, release with ipx_transfer_free.
typedef struct ipx_transfer {
    /// The easy handle the transfer is attached to (asked for the declared length).
    CURL *handle;
    /// Where the body goes (the caller's own buffer, written once): set before the transfer starts.
    ipx_body_sink sink;
    void *sink_context;
    /// Body bytes received so far.
    size_t body_length;
    /// The largest body accepted; a larger one aborts the transfer with body_too_large set.
    size_t max_body;
    int body_too_large;

    /// Raw header lines of the last response (reset at every status line, so redirects do not mix).
    char *headers;
    size_t headers_length;
    size_t headers_capacity;

    ipx_address_decider decider;
    void *decider_context;
    /// Set when the decider refused at least one address.
    int address_refused;
} ipx_transfer;

ipx_transfer *ipx_transfer_new(size_t max_body);
void ipx_transfer_free(ipx_transfer *transfer);

/// Installs write, header, open-socket and pre-request callbacks that fill `transfer`; the decider
/// judges every address before connecting and again before each request (reused connections too).
CURLcode ipx_transfer_attach(CURL *handle, ipx_transfer *transfer,
                             ipx_address_decider decider, void *decider_context);

/// Fixed-arity curl_multi_setopt for long options.
CURLMcode ipx_multi_set_long(CURLM *multi, CURLMoption option, long value);

/// Takes the next finished transfer off `multi`: non-zero with `easy` and `result` set, zero when none is left.
int ipx_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

#endif
