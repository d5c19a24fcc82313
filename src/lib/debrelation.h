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

/* dpkg's pkg_name_is_illegal() (lib/dpkg/parsehelp.c): NULL when name[0..len)
 * is a package name dpkg accepts (one or more of letters, digits and "-+._",
 * starting with a letter or digit), else dpkg's words for what is wrong. */
const char *deb_name_illegal(const char *name, size_t len);

/* A relation field of a database stanza (Depends, Provides, ...), read as
 * dpkg's f_dependency() (lib/dpkg/fields.c) reads it. */
enum relfield {
	RELFIELD_DEPENDS,  /* Depends, Pre-Depends, Recommends, Suggests, Enhances */
	RELFIELD_PROVIDES, /* no alternatives; a version only with '=' serves a versioned relation */
	RELFIELD_NO_ALTS,  /* Conflicts, Breaks, Replaces: no alternatives */
};
struct relfield_item {
	const char *name, *arch, *version; /* not terminated: see the lengths; arch NULL when absent */
	size_t name_len, arch_len, version_len;
	enum rel_op op; /* REL_ANY when unversioned */
};
/* Calls fn for each alternative of each relation of value[0..len) (it
 * returns false to stop the walk). Returns 0, 1 when fn stopped it, or -1
 * with err = what dpkg refuses (its words, the field named). Versions are
 * checked as in the status file (lax: only what dpkg refuses is an error). */
int relfield_walk(const char *field, const char *value, size_t len, enum relfield kind,
		  bool (*fn)(const struct relfield_item *item, void *data), void *data, char *err, size_t err_size);

#endif
