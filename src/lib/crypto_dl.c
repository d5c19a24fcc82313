#include "crypto_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct crypto_api api;
static const struct crypto_api *loaded;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(error, sizeof(error), "cannot load libcrypto.so.3 (apt-get install libssl3): %s", dlerror());
		return;
	}
	static const char *const names[] = { "EVP_sha256", "EVP_sha1", "EVP_MD_CTX_new", "EVP_MD_CTX_free",
					     "EVP_DigestInit_ex", "EVP_DigestUpdate", "EVP_DigestFinal_ex", "EVP_Digest" };
	void **slots[] = { (void **)&api.sha256, (void **)&api.sha1, (void **)&api.ctx_new, (void **)&api.ctx_free,
			   (void **)&api.init, (void **)&api.update, (void **)&api.final, (void **)&api.digest };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slots[i] = dlsym(h, names[i]);
		if (!*slots[i]) {
			snprintf(error, sizeof(error), "libcrypto.so.3 lacks %s", names[i]);
			return;
		}
	}
	loaded = &api;
}

const struct crypto_api *crypto_dl(void)
{
	pthread_once(&once, load);
	return loaded;
}

const char *crypto_dl_error(void)
{
	return error;
}
