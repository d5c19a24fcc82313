/* LD_PRELOAD for the deadline tests: an open of a path that contains
 * $GPUGATE_HANG_PATH never returns, as on a dead NFS mount. gpugate refuses a
 * FIFO where a file belongs at once (lib/safe_io.h), so a planted FIFO no
 * longer hangs a check; this does, without a hook in gpugate itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void hang_if_named(const char *path)
{
	const char *want = getenv("GPUGATE_HANG_PATH");
	if (!want || !*want || !path || !strstr(path, want))
		return;
	/* GPUGATE_HANG_SPIN=1: busy on its CPU instead of asleep (a parser in
	 * an endless loop), which the watchdog's CPU must still leave it */
	const char *spin = getenv("GPUGATE_HANG_SPIN");
	for (volatile unsigned long n = 0; spin && strcmp(spin, "1") == 0;)
		n++;
	for (;;) {
		struct timespec ts = { 3600, 0 };
		nanosleep(&ts, NULL);
	}
}

typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_fn)(const char *, int, ...);

static mode_t mode_of(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_of(flags, ap);
	va_end(ap);
	hang_if_named(path);
	static openat_fn real;
	if (!real)
		real = (openat_fn)dlsym(RTLD_NEXT, "openat");
	return real(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_of(flags, ap);
	va_end(ap);
	hang_if_named(path);
	static open_fn real;
	if (!real)
		real = (open_fn)dlsym(RTLD_NEXT, "open");
	return real(path, flags, mode);
}
