/* Allocation that cannot return NULL and formatted strings (the growable
 * string is lib/strbuf.h). lib/util.h includes both, so their users need
 * not name them. */
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

#endif
