/* Content hashes, one module for every reader and writer of them: streaming
 * SHA-256 and git's blob id (sha1 of "blob <size>\0" + content, what the Hub
 * names non-LFS files by), hex encoding, and the hex-name checks. OpenSSL's
 * digests through lib/crypto_dl.h (loaded on first use: gpugate's checks
 * that never hash never pay for libcrypto). Used by gpugate-provision's
 * downloads, hash_file and the tree listing's names, by hf/verify.c's blob
 * hashing and the hub cache's name checks (hf/, checks/hf.c). */
#ifndef GPUGATE_DIGEST_H
#define GPUGATE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum digest_kind {
	DIGEST_SHA256,   /* 64 hex digits */
	DIGEST_GIT_BLOB, /* 40 hex digits: sha1 over git's "blob <size>\0" header and the content */
};

struct digest;

/* A running hash; size is the content's length (DIGEST_GIT_BLOB puts it in
 * the header, so it must be known first). NULL when libcrypto cannot be
 * loaded: crypto_dl_error() says why. */
struct digest *digest_new(enum digest_kind kind, uint64_t size);
/* False when OpenSSL refuses (the hash is then worthless). */
bool digest_update(struct digest *d, const void *p, size_t n);
/* The hash in lower-case hex into out (digest_hex_len(kind) + 1 bytes), and
 * frees d. */
void digest_final_hex(struct digest *d, char *out);
/* The same, keeping d: digest_restart then hashes another content with the
 * same context (a context made and freed per file costs each of many
 * threads a share of OpenSSL's locks: hf/verify.c's workers keep one).
 * Both return false when OpenSSL refuses. */
bool digest_result_hex(struct digest *d, char *out);
bool digest_restart(struct digest *d, enum digest_kind kind, uint64_t size);
/* Frees d without a result; NULL is fine. */
void digest_free(struct digest *d);
/* SHA-256 of one buffer in lower-case hex (65 bytes with the NUL); false
 * when libcrypto cannot be loaded or refuses. */
bool digest_sha256_hex(const void *p, size_t n, char out[65]);
/* Hex digits of a kind's hash: 64 or 40. */
size_t digest_hex_len(enum digest_kind kind);

/* bytes as lower-case hex: 2 * n characters and a NUL into out. */
void digest_to_hex(const unsigned char *bytes, size_t n, char *out);
/* Exactly n hex digits of either case, then the end of s. */
bool digest_is_hex(const char *s, size_t n);
/* Exactly n lower-case hex digits, then the end of s: the form
 * huggingface_hub and git write hashes in (a blob name, a commit). */
bool digest_is_lower_hex(const char *s, size_t n);
/* 64 or 40 when s is exactly that many hex digits of either case (a SHA-256
 * or a git blob id: the names the Hub gives content), else 0. */
size_t digest_name_length(const char *s);
/* How many lower-case hex digits s starts with (a commit inside a path). */
size_t digest_lower_hex_span(const char *s);

#endif
