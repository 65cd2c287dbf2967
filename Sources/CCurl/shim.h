#ifndef CHIME_CCURL_SHIM_H
#define CHIME_CCURL_SHIM_H

// libcurl is loaded with dlopen on the first request, not linked: only a coordinator with a
// Kubernetes map register sends HTTP requests, and linking libcurl made every process (each
// worker, every CLI call) map it and what it pulls in (OpenSSL, LDAP, SASL, SSH2, RTMP,
// nghttp2, …), about 1.2 MB of PSS a process before any request. The header gives the
// types and constants; each call goes through the table `chime_curl_load_table` fills once.

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>

typedef size_t (*chime_curl_write_callback)(char *data, size_t size, size_t count, void *context);

typedef struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
    void (*easy_reset)(CURL *handle);
} chime_curl_table;

// No state lives here: a `static inline` function's static is copied into every object file
// that inlines it (a release build's WMO emits one object file per source file), so a table
// loaded through one copy would be empty in another (it was, for libcrypto's). The Swift side
// (`EasyHandle`) loads the one table once and passes it to every call.

static inline void *chime_curl_symbol(void *library, const char *name, char *error, size_t errorSize, int *missing) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL && *missing == 0) {
        *missing = 1;
        snprintf(error, errorSize, "libcurl.so.4 has no %s", name);
    }
    return symbol;
}

/// Loads libcurl.so.4, binds every call below into `table` and runs `curl_global_init`: 1 when
/// each call may be made, 0 with the reason in `error` (`errorSize` bytes). Call once per
/// process (libcurl's rule for `curl_global_init`) and keep the table.
static inline int chime_curl_load_table(chime_curl_table *table, char *error, size_t errorSize) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(error, errorSize, "cannot load libcurl.so.4 (Debian package libcurl4): %s", reason ? reason : "unknown reason");
        return 0;
    }
    int missing = 0;
    table->global_init = (CURLcode (*)(long))chime_curl_symbol(library, "curl_global_init", error, errorSize, &missing);
    table->easy_init = (CURL * (*)(void))chime_curl_symbol(library, "curl_easy_init", error, errorSize, &missing);
    table->easy_cleanup = (void (*)(CURL *))chime_curl_symbol(library, "curl_easy_cleanup", error, errorSize, &missing);
    table->easy_setopt = (CURLcode (*)(CURL *, CURLoption, ...))chime_curl_symbol(library, "curl_easy_setopt", error, errorSize, &missing);
    table->easy_getinfo = (CURLcode (*)(CURL *, CURLINFO, ...))chime_curl_symbol(library, "curl_easy_getinfo", error, errorSize, &missing);
    table->easy_perform = (CURLcode (*)(CURL *))chime_curl_symbol(library, "curl_easy_perform", error, errorSize, &missing);
    table->easy_strerror = (const char *(*)(CURLcode))chime_curl_symbol(library, "curl_easy_strerror", error, errorSize, &missing);
    table->slist_append = (struct curl_slist * (*)(struct curl_slist *, const char *))chime_curl_symbol(library, "curl_slist_append", error, errorSize, &missing);
    table->slist_free_all = (void (*)(struct curl_slist *))chime_curl_symbol(library, "curl_slist_free_all", error, errorSize, &missing);
    table->easy_reset = (void (*)(CURL *))chime_curl_symbol(library, "curl_easy_reset", error, errorSize, &missing);
    if (missing) return 0;
    // curl_global_init once per process, before the first handle (libcurl's rule).
    CURLcode code = table->global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(error, errorSize, "curl_global_init failed: %s", table->easy_strerror(code));
        return 0;
    }
    return 1;
}

// Each call below takes the table `chime_curl_load_table` filled.

static inline CURL *chime_curl_easy_init(const chime_curl_table *f) { return f->easy_init(); }

static inline void chime_curl_easy_cleanup(const chime_curl_table *f, CURL *handle) { f->easy_cleanup(handle); }

/// Resets a handle's options to their defaults, keeping its open connections, DNS and TLS
/// session caches (a reused handle then reuses its connection to the same host).
static inline void chime_curl_easy_reset(const chime_curl_table *f, CURL *handle) { f->easy_reset(handle); }

static inline CURLcode chime_curl_easy_perform(const chime_curl_table *f, CURL *handle) { return f->easy_perform(handle); }

static inline const char *chime_curl_easy_strerror(const chime_curl_table *f, CURLcode code) { return f->easy_strerror(code); }

static inline struct curl_slist *chime_curl_slist_append(const chime_curl_table *f, struct curl_slist *list, const char *line) {
    return f->slist_append(list, line);
}

static inline void chime_curl_slist_free_all(const chime_curl_table *f, struct curl_slist *list) { f->slist_free_all(list); }

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
static inline CURLcode chime_curl_setopt_long(const chime_curl_table *f, CURL *handle, CURLoption option, long value) {
    return f->easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_pointer(const chime_curl_table *f, CURL *handle, CURLoption option, const void *value) {
    return f->easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_offset(const chime_curl_table *f, CURL *handle, CURLoption option, curl_off_t value) {
    return f->easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_write_function(const chime_curl_table *f, CURL *handle, chime_curl_write_callback callback) {
    return f->easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode chime_curl_setopt_header_function(const chime_curl_table *f, CURL *handle, chime_curl_write_callback callback) {
    return f->easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

static inline CURLcode chime_curl_getinfo_long(const chime_curl_table *f, CURL *handle, CURLINFO info, long *value) {
    return f->easy_getinfo(handle, info, value);
}

static inline CURLcode chime_curl_response_code(const chime_curl_table *f, CURL *handle, long *code) {
    return f->easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

#endif
