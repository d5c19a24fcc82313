/* Debian relation expressions ("a (>= 1) | b:any"): parse, then evaluate
 * every alternative against its own version. */
#include "fuzz.h"
#include "lib/debrelation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	struct relation rel;
	char err[256];
	if (relation_parse(text, &rel, err, sizeof(err)) == 0) {
		if (rel.count == 0)
			abort(); /* a parsed relation has at least one alternative */
		for (size_t i = 0; i < rel.count; i++) {
			const struct rel_alt *alt = &rel.alts[i];
			if (!alt->name || !*alt->name || (alt->op != REL_ANY && !alt->version))
				abort();
			(void)rel_op_text(alt->op);
			if (alt->version)
				(void)rel_op_holds(alt->op, alt->version, alt->version);
		}
		relation_free(&rel);
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort(); /* a failure always says why */
	}
	free(text);
	return 0;
}
