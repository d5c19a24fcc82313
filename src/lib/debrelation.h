/* Debian relation expressions as in Depends: "a (>= 1.0) | b:amd64 (<< 2)". */
#ifndef GPUGATE_DEBRELATION_H
#define GPUGATE_DEBRELATION_H

#include <stdbool.h>
#include <stddef.h>

enum rel_op { REL_ANY = 0, REL_LT, REL_LE, REL_EQ, REL_GE, REL_GT };

struct rel_alt {
	char *name;
	char *arch; /* NULL: unqualified; "any", "all" or a name ("native" is a name, as to dpkg) */
	enum rel_op op;
	char *version; /* NULL when op is REL_ANY */
	char *warning; /* what dpkg would only warn about in this alternative, or NULL */
};

struct relation {
	struct rel_alt *alts;
	size_t count;
};

/* Returns 0, or -1 with a message in err (what is wrong, and where). What
 * dpkg refuses is an error; what it only warns about (a version it reads
 * leniently, the obsolete '<' and '>', a version without an operator) is
 * accepted the way dpkg takes it and noted in the alternative's warning. */
int relation_parse(const char *text, struct relation *out, char *err, size_t err_size);
void relation_free(struct relation *rel);
const char *rel_op_text(enum rel_op op);
/* Does installed version v satisfy op version? */
bool rel_op_holds(enum rel_op op, const char *installed, const char *required);

#endif
