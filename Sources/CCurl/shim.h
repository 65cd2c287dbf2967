#ifndef CHIME_CCURL_SHIM_H
#define CHIME_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
static inline CURLcode chime_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*chime_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode chime_curl_setopt_write_function(CURL *handle, chime_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode chime_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

static inline CURLcode chime_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

#endif
