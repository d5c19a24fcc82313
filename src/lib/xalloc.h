/* Allocation that cannot return NULL, formatted strings, and git's strbuf.
 * lib/util.h includes it, so its users need not name it. */
#ifndef GPUGATE_XALLOC_H
#define GPUGATE_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* A growable string, as git's strbuf: always NUL-terminated. */
struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};
#define STRBUF_INIT        \
	{                  \
		NULL, 0, 0 \
	}
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
char *sb_detach(struct strbuf *sb); /* never NULL; caller frees */
void sb_release(struct strbuf *sb);

#endif
