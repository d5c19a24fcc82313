/* Allocation that cannot return NULL (out of memory ends the process, one of
 * the few places that may: HACKING.md, error conventions). A leaf:
 * lib/strbuf.c, lib/util.c and lib/safe_io.c build on it. */
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void out_of_memory(void)
{
	static const char msg[] = "gpugate: out of memory\n";
	ssize_t n = write(2, msg, sizeof(msg) - 1);
	(void)n; /* when even this fails there is nothing more to do */
	_exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t count, size_t n)
{
	void *p = calloc(count ? count : 1, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	char *s = xmalloc(n < 0 ? 1 : (size_t)n + 1);
	if (n < 0)
		s[0] = '\0';
	else
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
