/* The one way every subcommand reports a usage error: one line, the hint, 3. */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"

int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpugate: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'gpugate --help' for usage.\n", stderr);
	return EXIT_USAGE;
}

int check_root_option(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return usage_error("--root %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return usage_error("--root %s: not a directory", dir);
	return 0;
}
