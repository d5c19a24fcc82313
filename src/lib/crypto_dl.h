/* OpenSSL's digests, loaded with dlopen on first use. Linking libcrypto costs
 * every process start about a millisecond of relocations (performance.md),
 * and only `hf verify`, hf.integrity and the probe's module cache hash. */
#ifndef GPUGATE_CRYPTO_DL_H
#define GPUGATE_CRYPTO_DL_H

#include <openssl/evp.h>

struct crypto_api {
	const EVP_MD *(*sha256)(void);
	const EVP_MD *(*sha1)(void);
	EVP_MD_CTX *(*ctx_new)(void);
	void (*ctx_free)(EVP_MD_CTX *ctx);
	int (*init)(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl);
	int (*update)(EVP_MD_CTX *ctx, const void *d, size_t cnt);
	int (*final)(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s);
	int (*digest)(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type,
		      ENGINE *impl);
	EVP_MD *(*fetch)(OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties);
	/* SHA-256 and SHA-1 fetched once: EVP_sha256() makes every init fetch
	 * the digest again ("Performance" in OpenSSL's crypto(7)) */
	const EVP_MD *sha256_md, *sha1_md;
};

/* The loaded functions, or NULL when libcrypto.so.3 cannot be loaded (the
 * reason is then in crypto_dl_error()). Thread-safe. */
const struct crypto_api *crypto_dl(void);
/* Starts loading it on a thread of its own, so that a caller that will hash
 * later does not wait for dlopen then (about 2 ms, OpenSSL's start-up). The
 * caller joins that thread before it returns to exit: a process that exits
 * while the loader runs races OpenSSL's start-up, and under LeakSanitizer
 * hangs (its exit check stops the threads, one of them holding the loader's
 * lock, then asks the loader for the modules). */
void crypto_dl_preload(void);
void crypto_dl_preload_join(void);
const char *crypto_dl_error(void);

#endif
