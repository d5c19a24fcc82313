/* The one way every subcommand reports a usage error: one line, the hint, 3. */
#include <stdarg.h>
#include <stdio.h>

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
