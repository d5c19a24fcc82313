/* A growable string, after git's strbuf (strbuf.h there).
 *
 * The invariant: buf is never NULL and always NUL-terminated, so that
 * sb.buf can be handed to any function that takes a C string, empty or not.
 * An empty strbuf points at a shared, read-only "slop" byte (alloc == 0):
 * nothing is allocated until the first byte is added. Write to it only
 * through sb_*; sb.len bytes are the content (it may hold NUL bytes).
 *
 * Ownership: the strbuf owns buf once alloc > 0. sb_release frees it and
 * leaves an empty strbuf (usable again); sb_detach hands a malloc'ed string
 * to the caller (never NULL, never the slop byte) and leaves an empty one.
 *
 * Initialise with STRBUF_INIT (or sb_init): a zeroed struct strbuf (memset,
 * calloc) has buf NULL and breaks the invariant until sb_init. */
#ifndef GPUGATE_STRBUF_H
#define GPUGATE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

extern char strbuf_slopbuf[1];

struct strbuf {
	char *buf;    /* never NULL: strbuf_slopbuf while alloc == 0 */
	size_t len;   /* bytes of content, buf[len] == '\0' */
	size_t alloc; /* bytes allocated at buf; 0: buf is the slop byte */
};
#define STRBUF_INIT                  \
	{                            \
		strbuf_slopbuf, 0, 0 \
	}

void sb_init(struct strbuf *sb);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
char *sb_detach(struct strbuf *sb); /* never NULL; caller frees */
void sb_release(struct strbuf *sb);

#endif
