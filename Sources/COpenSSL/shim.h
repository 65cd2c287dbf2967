#ifndef CHIME_COPENSSL_SHIM_H
#define CHIME_COPENSSL_SHIM_H

// OpenSSL's libcrypto is loaded with dlopen on the first signature or digest, not linked: only
// a worker with push or webhook destinations signs, and every other process (the coordinator,
// each CLI call) then does not map it. The headers give the types; each call goes through a
// table filled once by `chime_crypto_load`, as Sources/CCurl does for libcurl.

#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <stdio.h>

typedef struct {
    const EVP_MD *(*sha256)(void);
    int (*digest)(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *engine);
    unsigned char *(*hmac)(const EVP_MD *md, const void *key, int keyLength, const unsigned char *data, size_t count,
                           unsigned char *out, unsigned int *outLength);
    BIO *(*bio_new_mem_buf)(const void *buffer, int length);
    int (*bio_free)(BIO *bio);
    EVP_PKEY *(*pem_read_bio_private_key)(BIO *bio, EVP_PKEY **key, pem_password_cb *callback, void *context);
    void (*pkey_free)(EVP_PKEY *key);
    int (*pkey_get_base_id)(const EVP_PKEY *key);
    int (*pkey_get_bits)(const EVP_PKEY *key);
    int (*pkey_get_group_name)(const EVP_PKEY *key, char *name, size_t size, size_t *length);
    EVP_MD_CTX *(*md_ctx_new)(void);
    void (*md_ctx_free)(EVP_MD_CTX *context);
    int (*digest_sign_init)(EVP_MD_CTX *context, EVP_PKEY_CTX **keyContext, const EVP_MD *type, ENGINE *engine, EVP_PKEY *key);
    int (*digest_sign)(EVP_MD_CTX *context, unsigned char *signature, size_t *length, const unsigned char *data, size_t count);
    int (*digest_verify_init)(EVP_MD_CTX *context, EVP_PKEY_CTX **keyContext, const EVP_MD *type, ENGINE *engine, EVP_PKEY *key);
    int (*digest_verify)(EVP_MD_CTX *context, const unsigned char *signature, size_t length, const unsigned char *data,
                         size_t count);
    unsigned long (*err_get_error)(void);
    void (*err_error_string_n)(unsigned long code, char *buffer, size_t length);
    void (*err_clear_error)(void);
} chime_crypto_table;

// No state lives here: a `static inline` function's static is copied into every object file
// that inlines it (a release build's WMO emits one object file per source file), so a table
// loaded through one copy is empty in another and a call through it jumps nowhere. The Swift
// side (`LibCrypto`) loads the one table once and passes it to every call.

static inline void *chime_crypto_symbol(void *library, const char *name, char *error, size_t errorSize, int *missing) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL && *missing == 0) {
        *missing = 1;
        snprintf(error, errorSize, "libcrypto.so.3 has no %s", name);
    }
    return symbol;
}

#define CHIME_CRYPTO_BIND(field, name) \
    table->field = (__typeof__(table->field))chime_crypto_symbol(library, name, error, errorSize, &missing)

/// Loads libcrypto.so.3 and binds every call below into `table`: 1 when each may be made, 0
/// with the reason in `error` (`errorSize` bytes). Call once per process and keep the table.
static inline int chime_crypto_load_table(chime_crypto_table *table, char *error, size_t errorSize) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(error, errorSize, "cannot load libcrypto.so.3 (Debian package libssl3): %s", reason ? reason : "unknown reason");
        return 0;
    }
    int missing = 0;
    CHIME_CRYPTO_BIND(sha256, "EVP_sha256");
    CHIME_CRYPTO_BIND(digest, "EVP_Digest");
    CHIME_CRYPTO_BIND(hmac, "HMAC");
    CHIME_CRYPTO_BIND(bio_new_mem_buf, "BIO_new_mem_buf");
    CHIME_CRYPTO_BIND(bio_free, "BIO_free");
    CHIME_CRYPTO_BIND(pem_read_bio_private_key, "PEM_read_bio_PrivateKey");
    CHIME_CRYPTO_BIND(pkey_free, "EVP_PKEY_free");
    CHIME_CRYPTO_BIND(pkey_get_base_id, "EVP_PKEY_get_base_id");
    CHIME_CRYPTO_BIND(pkey_get_bits, "EVP_PKEY_get_bits");
    CHIME_CRYPTO_BIND(pkey_get_group_name, "EVP_PKEY_get_group_name");
    CHIME_CRYPTO_BIND(md_ctx_new, "EVP_MD_CTX_new");
    CHIME_CRYPTO_BIND(md_ctx_free, "EVP_MD_CTX_free");
    CHIME_CRYPTO_BIND(digest_sign_init, "EVP_DigestSignInit");
    CHIME_CRYPTO_BIND(digest_sign, "EVP_DigestSign");
    CHIME_CRYPTO_BIND(digest_verify_init, "EVP_DigestVerifyInit");
    CHIME_CRYPTO_BIND(digest_verify, "EVP_DigestVerify");
    CHIME_CRYPTO_BIND(err_get_error, "ERR_get_error");
    CHIME_CRYPTO_BIND(err_error_string_n, "ERR_error_string_n");
    CHIME_CRYPTO_BIND(err_clear_error, "ERR_clear_error");
    return missing ? 0 : 1;
}

#undef CHIME_CRYPTO_BIND

static const int chime_crypto_key_type_ec = EVP_PKEY_EC;
static const int chime_crypto_key_type_rsa = EVP_PKEY_RSA;

// Each call below takes the table `chime_crypto_load_table` filled.

/// SHA-256 of `count` bytes into `out` (32 bytes); 1 on success.
static inline int chime_crypto_sha256(const chime_crypto_table *f, const void *data, size_t count, unsigned char *out) {
    unsigned int size = 0;
    return f->digest(data, count, out, &size, f->sha256(), NULL) == 1 && size == 32;
}

/// HMAC-SHA256 of `count` bytes with `key` into `out` (32 bytes); 1 on success.
static inline int chime_crypto_hmac_sha256(const chime_crypto_table *f, const void *key, int keyLength, const unsigned char *data, size_t count,
                                           unsigned char *out) {
    unsigned int size = 0;
    return f->hmac(f->sha256(), key, keyLength, data, count, out, &size) != NULL && size == 32;
}

/// The private key in PEM text (`-----BEGIN PRIVATE KEY-----`, `… RSA PRIVATE KEY-----`,
/// `… EC PRIVATE KEY-----`), unencrypted; NULL when it does not parse.
static inline EVP_PKEY *chime_crypto_read_private_key(const chime_crypto_table *f, const void *pem, int length) {
    BIO *bio = f->bio_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    // An empty password callback result: an encrypted key fails rather than prompting on a tty.
    EVP_PKEY *key = f->pem_read_bio_private_key(bio, NULL, NULL, (void *)"");
    f->bio_free(bio);
    return key;
}

static inline void chime_crypto_free_key(const chime_crypto_table *f, EVP_PKEY *key) { f->pkey_free(key); }

static inline int chime_crypto_key_type(const chime_crypto_table *f, const EVP_PKEY *key) { return f->pkey_get_base_id(key); }

static inline int chime_crypto_key_bits(const chime_crypto_table *f, const EVP_PKEY *key) { return f->pkey_get_bits(key); }

/// The curve's name of an EC key ("prime256v1" for P-256) into `name`; 1 on success.
static inline int chime_crypto_key_group(const chime_crypto_table *f, const EVP_PKEY *key, char *name, size_t size) {
    size_t length = 0;
    return f->pkey_get_group_name(key, name, size, &length);
}

/// Signs SHA-256 of `data` with `key` (ECDSA: DER `ECDSA-Sig-Value`; RSA: PKCS #1 v1.5) into
/// `signature`, whose room `*length` says and which it sets to the size written; 1 on success.
static inline int chime_crypto_sign_sha256(const chime_crypto_table *f, EVP_PKEY *key, const unsigned char *data, size_t count, unsigned char *signature,
                                           size_t *length) {
    EVP_MD_CTX *context = f->md_ctx_new();
    if (context == NULL) return 0;
    int result = f->digest_sign_init(context, NULL, f->sha256(), NULL, key) == 1 &&
                 f->digest_sign(context, signature, length, data, count) == 1;
    f->md_ctx_free(context);
    return result;
}

/// Verifies a signature as `chime_crypto_sign_sha256` makes it: 1 valid, 0 not.
static inline int chime_crypto_verify_sha256(const chime_crypto_table *f, EVP_PKEY *key, const unsigned char *data, size_t count,
                                             const unsigned char *signature, size_t length) {
    EVP_MD_CTX *context = f->md_ctx_new();
    if (context == NULL) return 0;
    int result = f->digest_verify_init(context, NULL, f->sha256(), NULL, key) == 1 &&
                 f->digest_verify(context, signature, length, data, count) == 1;
    f->md_ctx_free(context);
    return result;
}

/// The oldest queued OpenSSL error as text into `buffer` (empty when none), and the queue
/// emptied (it is per thread; a stale entry would name the wrong failure next time).
static inline void chime_crypto_take_error(const chime_crypto_table *f, char *buffer, size_t size) {
    unsigned long code = f->err_get_error();
    if (size > 0) buffer[0] = 0;
    if (code != 0) f->err_error_string_n(code, buffer, size);
    f->err_clear_error();
}

#endif
