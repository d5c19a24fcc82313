/* The growable string (strbuf.h), with git's slop-buffer invariant. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The empty string every empty strbuf points at. Never written: sb_grow
 * allocates before the first byte is stored (a stray write would show as
 * a non-empty slop byte, which sb_init and sb_release do not hide). */
char strbuf_slopbuf[1];

void sb_init(struct strbuf *sb)
{
	sb->buf = strbuf_slopbuf;
	sb->len = sb->alloc = 0;
}

static void sb_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->alloc)
		return;
	size_t want = sb->alloc ? sb->alloc * 2 : 64;
	while (want < sb->len + extra + 1)
		want *= 2;
	char *old = sb->alloc ? sb->buf : NULL; /* the slop byte is not ours to realloc */
	sb->buf = xrealloc(old, want);
	if (!sb->alloc)
		sb->buf[0] = '\0';
	sb->alloc = want;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	sb_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

char *sb_detach(struct strbuf *sb)
{
	char *s = sb->alloc ? sb->buf : xstrdup("");
	sb_init(sb);
	return s;
}

void sb_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sb_init(sb);
}
