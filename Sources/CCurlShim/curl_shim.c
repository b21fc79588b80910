#include "curl_shim.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

enum { IPX_MAX_HEADER_BYTES = 64 * 1024 };

CURLcode ipx_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURLcode ipx_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode ipx_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode ipx_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode ipx_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode ipx_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode ipx_curl_get_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode ipx_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

ipx_transfer *ipx_transfer_new(size_t max_body) {
    ipx_transfer *transfer = calloc(1, sizeof(ipx_transfer));
    if (transfer) {
        transfer->max_body = max_body;
    }
    return transfer;
}

void ipx_transfer_free(ipx_transfer *transfer) {
    if (!transfer) {
        return;
    }
    free(transfer->headers);
    free(transfer);
}

static int ipx_reserve(unsigned char **data, size_t *capacity, size_t needed) {
    if (needed <= *capacity) {
        return 1;
    }
    size_t grown = *capacity ? *capacity : 64 * 1024;
    while (grown < needed) {
        grown *= 2;
    }
    unsigned char *moved = realloc(*data, grown);
    if (!moved) {
        return 0;
    }
    *data = moved;
    *capacity = grown;
    return 1;
}

/* Every body byte goes to the caller's sink as libcurl hands it over: no buffer of ours in between. The
 * first call of a response tells the sink the declared length, so that it can allocate the whole body at
 * once (libcurl refuses a declared length over CURLOPT_MAXFILESIZE_LARGE before any body byte). */
static size_t ipx_write_body(char *data, size_t size, size_t count, void *context) {
    ipx_transfer *transfer = context;
    size_t length = size * count;
    if (transfer->body_length + length > transfer->max_body) {
        transfer->body_too_large = 1;
        return 0;
    }
    if (!transfer->sink) return 0;
    curl_off_t declared = -1;
    if (transfer->body_length == 0 && transfer->handle &&
        curl_easy_getinfo(transfer->handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared) != CURLE_OK) {
        declared = -1;
    }
    if (transfer->sink(transfer->sink_context, (const unsigned char *)data, length, (long long)declared) != length) {
        return 0;
    }
    transfer->body_length += length;
    return length;
}

static size_t ipx_write_header(char *data, size_t size, size_t count, void *context) {
    ipx_transfer *transfer = context;
    size_t length = size * count;
    if (length >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        transfer->headers_length = 0;
    }
    if (transfer->headers_length + length > IPX_MAX_HEADER_BYTES) {
        return length; /* keep the transfer going; the extra header lines are ignored */
    }
    if (!ipx_reserve((unsigned char **)&transfer->headers, &transfer->headers_capacity,
                     transfer->headers_length + length + 1)) {
        return 0;
    }
    memcpy(transfer->headers + transfer->headers_length, data, length);
    transfer->headers_length += length;
    transfer->headers[transfer->headers_length] = '\0';
    return length;
}

static curl_socket_t ipx_open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    ipx_transfer *transfer = context;
    (void)purpose;
    if (transfer->decider &&
        !transfer->decider(transfer->decider_context, address->family, &address->addr)) {
        transfer->address_refused = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

/* Runs before every request, on new and reused connections alike: the connected peer is judged again. */
static int ipx_before_request(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    ipx_transfer *transfer = context;
    (void)local_ip;
    (void)local_port;
    if (!transfer->decider || !primary_ip) {
        return CURL_PREREQFUNC_OK;
    }
    struct sockaddr_in6 v6;
    struct sockaddr_in v4;
    memset(&v6, 0, sizeof(v6));
    memset(&v4, 0, sizeof(v4));
    int allowed = 0;
    if (inet_pton(AF_INET, primary_ip, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((uint16_t)primary_port);
        allowed = transfer->decider(transfer->decider_context, AF_INET, (const struct sockaddr *)&v4);
    } else if (inet_pton(AF_INET6, primary_ip, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((uint16_t)primary_port);
        allowed = transfer->decider(transfer->decider_context, AF_INET6, (const struct sockaddr *)&v6);
    }
    if (!allowed) {
        transfer->address_refused = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

CURLcode ipx_transfer_attach(CURL *handle, ipx_transfer *transfer,
                             ipx_address_decider decider, void *decider_context) {
    transfer->handle = handle;
    transfer->decider = decider;
    transfer->decider_context = decider_context;
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, ipx_write_body);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_WRITEDATA, transfer);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, ipx_write_header);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_HEADERDATA, transfer);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, ipx_open_socket);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, transfer);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, ipx_before_request);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_PREREQDATA, transfer);
    return code;
}

CURLMcode ipx_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

int ipx_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
