#ifndef CHIME_CCURL_SHIM_H
#define CHIME_CCURL_SHIM_H

// libcurl is loaded with dlopen on the first request, not linked: only a coordinator with a
// Kubernetes map register sends HTTP requests, and linking libcurl made every process (each
// worker, every CLI call) map it and what it pulls in (OpenSSL, LDAP, SASL, SSH2, RTMP,
// nghttp2, …), about 1.2 MB of PSS a process before any request. The header gives the
// types and constants; each call goes through a table filled once by `chime_curl_load`.

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
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

typedef struct {
    chime_curl_table functions;
    int isLoaded;
    char error[512];
    pthread_once_t once;
} chime_curl_state_t;

// The process's one state, a function's static (Swift does not emit a header's static
// variables; it does emit an inline function's statics with the function).
static inline chime_curl_state_t *chime_curl_state(void) {
    static chime_curl_state_t state = {.isLoaded = 0, .error = "libcurl was not loaded", .once = PTHREAD_ONCE_INIT};
    return &state;
}

static inline void *chime_curl_symbol(void *library, const char *name, int *missing) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL && *missing == 0) {
        *missing = 1;
        snprintf(chime_curl_state()->error, sizeof chime_curl_state()->error, "libcurl.so.4 has no %s", name);
    }
    return symbol;
}

static inline void chime_curl_load_once(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(chime_curl_state()->error, sizeof chime_curl_state()->error, "cannot load libcurl.so.4 (Debian package libcurl4): %s",
                 reason ? reason : "unknown reason");
        return;
    }
    int missing = 0;
    chime_curl_table table;
    table.global_init = (CURLcode (*)(long))chime_curl_symbol(library, "curl_global_init", &missing);
    table.easy_init = (CURL * (*)(void)) chime_curl_symbol(library, "curl_easy_init", &missing);
    table.easy_cleanup = (void (*)(CURL *))chime_curl_symbol(library, "curl_easy_cleanup", &missing);
    table.easy_setopt = (CURLcode (*)(CURL *, CURLoption, ...))chime_curl_symbol(library, "curl_easy_setopt", &missing);
    table.easy_getinfo = (CURLcode (*)(CURL *, CURLINFO, ...))chime_curl_symbol(library, "curl_easy_getinfo", &missing);
    table.easy_perform = (CURLcode (*)(CURL *))chime_curl_symbol(library, "curl_easy_perform", &missing);
    table.easy_strerror = (const char *(*)(CURLcode))chime_curl_symbol(library, "curl_easy_strerror", &missing);
    table.slist_append = (struct curl_slist * (*)(struct curl_slist *, const char *))
        chime_curl_symbol(library, "curl_slist_append", &missing);
    table.slist_free_all = (void (*)(struct curl_slist *))chime_curl_symbol(library, "curl_slist_free_all", &missing);
    table.easy_reset = (void (*)(CURL *))chime_curl_symbol(library, "curl_easy_reset", &missing);
    if (missing) return;
    // curl_global_init once per process, before the first handle (libcurl's rule).
    CURLcode code = table.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(chime_curl_state()->error, sizeof chime_curl_state()->error, "curl_global_init failed: %s",
                 table.easy_strerror(code));
        return;
    }
    chime_curl_state()->functions = table;
    chime_curl_state()->isLoaded = 1;
}

/// Loads libcurl once per process (thread-safe); 1 when every call below may be made, 0 with
/// the reason in `chime_curl_error()`.
static inline int chime_curl_load(void) {
    pthread_once(&chime_curl_state()->once, chime_curl_load_once);
    return chime_curl_state()->isLoaded;
}

/// Why `chime_curl_load` returned 0.
static inline const char *chime_curl_error(void) { return chime_curl_state()->error; }

// The calls below may be made only after `chime_curl_load` returned 1.

static inline CURL *chime_curl_easy_init(void) { return chime_curl_state()->functions.easy_init(); }

static inline void chime_curl_easy_cleanup(CURL *handle) { chime_curl_state()->functions.easy_cleanup(handle); }

/// Resets a handle's options to their defaults, keeping its open connections, DNS and TLS
/// session caches (a reused handle then reuses its connection to the same host).
static inline void chime_curl_easy_reset(CURL *handle) { chime_curl_state()->functions.easy_reset(handle); }

static inline CURLcode chime_curl_easy_perform(CURL *handle) { return chime_curl_state()->functions.easy_perform(handle); }

static inline const char *chime_curl_easy_strerror(CURLcode code) { return chime_curl_state()->functions.easy_strerror(code); }

static inline struct curl_slist *chime_curl_slist_append(struct curl_slist *list, const char *line) {
    return chime_curl_state()->functions.slist_append(list, line);
}

static inline void chime_curl_slist_free_all(struct curl_slist *list) { chime_curl_state()->functions.slist_free_all(list); }

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
static inline CURLcode chime_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return chime_curl_state()->functions.easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return chime_curl_state()->functions.easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return chime_curl_state()->functions.easy_setopt(handle, option, value);
}

static inline CURLcode chime_curl_setopt_write_function(CURL *handle, chime_curl_write_callback callback) {
    return chime_curl_state()->functions.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode chime_curl_setopt_header_function(CURL *handle, chime_curl_write_callback callback) {
    return chime_curl_state()->functions.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

static inline CURLcode chime_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return chime_curl_state()->functions.easy_getinfo(handle, info, value);
}

static inline CURLcode chime_curl_response_code(CURL *handle, long *code) {
    return chime_curl_state()->functions.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

#endif
