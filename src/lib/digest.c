/* Content hashes (digest.h) over OpenSSL's EVP interface, loaded by
 * crypto_dl. */
#include "digest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "crypto_dl.h"
#include "xalloc.h"

struct digest {
	const struct crypto_api *api;
	EVP_MD_CTX *ctx;
	enum digest_kind kind;
};

struct digest *digest_new(enum digest_kind kind, uint64_t size)
{
	const struct crypto_api *c = crypto_dl();
	if (!c)
		return NULL;
	struct digest *d = xcalloc(1, sizeof(*d));
	d->api = c;
	d->ctx = c->ctx_new();
	if (!d->ctx || !digest_restart(d, kind, size)) {
		digest_free(d);
		return NULL;
	}
	return d;
}

bool digest_restart(struct digest *d, enum digest_kind kind, uint64_t size)
{
	const struct crypto_api *c = d->api;
	d->kind = kind;
	if (!c->init(d->ctx, kind == DIGEST_SHA256 ? c->sha256_md : c->sha1_md, NULL))
		return false;
	if (kind == DIGEST_GIT_BLOB) {
		char head[48];
		int n = snprintf(head, sizeof(head), "blob %" PRIu64, size);
		return c->update(d->ctx, head, (size_t)n + 1); /* the NUL is part of git's object header */
	}
	return true;
}

bool digest_update(struct digest *d, const void *p, size_t n)
{
	return d->api->update(d->ctx, p, n);
}

bool digest_result_hex(struct digest *d, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	bool ok = d->api->final(d->ctx, md, &n);
	digest_to_hex(md, ok ? n : 0, out);
	return ok;
}

void digest_final_hex(struct digest *d, char *out)
{
	(void)digest_result_hex(d, out);
	digest_free(d);
}

void digest_free(struct digest *d)
{
	if (!d)
		return;
	if (d->ctx)
		d->api->ctx_free(d->ctx);
	free(d);
}

bool digest_sha256_hex(const void *p, size_t n, char out[65])
{
	struct digest *d = digest_new(DIGEST_SHA256, n);
	bool ok = d && digest_update(d, p, n) && digest_result_hex(d, out);
	digest_free(d);
	return ok;
}

size_t digest_hex_len(enum digest_kind kind)
{
	return kind == DIGEST_SHA256 ? 64 : 40;
}

void digest_to_hex(const unsigned char *bytes, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[bytes[i] >> 4];
		out[2 * i + 1] = hex[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

static bool hex_digits(const char *s, size_t n, bool lower_only)
{
	size_t i = 0;
	for (; i < n && s[i]; i++) {
		char c = s[i];
		bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (!lower_only && c >= 'A' && c <= 'F');
		if (!ok)
			return false;
	}
	return i == n && s[i] == '\0';
}

bool digest_is_hex(const char *s, size_t n)
{
	return hex_digits(s, n, false);
}

bool digest_is_lower_hex(const char *s, size_t n)
{
	return hex_digits(s, n, true);
}

size_t digest_name_length(const char *s)
{
	return digest_is_hex(s, 64) ? 64 : digest_is_hex(s, 40) ? 40 : 0;
}

size_t digest_lower_hex_span(const char *s)
{
	size_t n = 0;
	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))
		n++;
	return n;
}
