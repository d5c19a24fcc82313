#include "crypto_dl.h"

#include "dynlib.h"

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>

static struct crypto_api api;
static const struct crypto_api *loaded;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define CRYPTO_SYM(field, name)                                 \
	{                                                       \
		name, offsetof(struct crypto_api, field), false \
	}
static const struct dynlib_symbol symbols[] = {
	CRYPTO_SYM(sha256, "EVP_sha256"),        CRYPTO_SYM(sha1, "EVP_sha1"),
	CRYPTO_SYM(ctx_new, "EVP_MD_CTX_new"),   CRYPTO_SYM(ctx_free, "EVP_MD_CTX_free"),
	CRYPTO_SYM(init, "EVP_DigestInit_ex"),   CRYPTO_SYM(update, "EVP_DigestUpdate"),
	CRYPTO_SYM(final, "EVP_DigestFinal_ex"), CRYPTO_SYM(digest, "EVP_Digest"),
	CRYPTO_SYM(fetch, "EVP_MD_fetch"),
};

static void load(void)
{
	char why[200];
	void *h = dynlib_open("libcrypto.so.3", why, sizeof why);
	if (!h) {
		snprintf(error, sizeof(error), "cannot load libcrypto.so.3 (apt-get install libssl3): %s", why);
		return;
	}
	const char *missing = dynlib_resolve(h, &api, symbols, sizeof symbols / sizeof symbols[0]);
	if (missing) {
		snprintf(error, sizeof(error), "libcrypto.so.3 lacks %s", missing);
		return;
	}
	/* kept for the life of the process, as the legacy objects are */
	api.sha256_md = api.fetch(NULL, "SHA256", NULL);
	api.sha1_md = api.fetch(NULL, "SHA1", NULL);
	if (!api.sha256_md)
		api.sha256_md = api.sha256();
	if (!api.sha1_md)
		api.sha1_md = api.sha1();
	loaded = &api;
}

const struct crypto_api *crypto_dl(void)
{
	pthread_once(&once, load);
	return loaded;
}

static void *load_now(void *arg)
{
	(void)arg;
	crypto_dl();
	return NULL;
}

static pthread_t preload_thread;
static bool preloading;

void crypto_dl_preload(void)
{
	preloading = pthread_create(&preload_thread, NULL, load_now, NULL) == 0;
}

void crypto_dl_preload_join(void)
{
	if (preloading)
		pthread_join(preload_thread, NULL);
	preloading = false;
}

const char *crypto_dl_error(void)
{
	return error;
}
