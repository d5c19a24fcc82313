/* Debian version comparison: two versions split at the first newline. Beyond
 * "no crash", the order must be an order: cmp(a,a) == 0 and cmp(a,b) ==
 * -cmp(b,a) in sign. */
#include "fuzz.h"
#include "lib/debversion.h"

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a = fuzz_cstring(data, size);
	char *nl = strchr(a, '\n');
	const char *b = "";
	if (nl) {
		*nl = '\0';
		b = nl + 1;
	}
	(void)debversion_invalid(a);
	(void)debversion_invalid(b);
	if (debversion_compare(a, a) != 0 || debversion_compare(b, b) != 0)
		abort();
	if (sign(debversion_compare(a, b)) != -sign(debversion_compare(b, a)))
		abort();
	free(a);
	return 0;
}
