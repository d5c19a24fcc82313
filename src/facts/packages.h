/* The packages group's facts: the pinned relations and the installed
 * packages that could serve each, as packages.installed read them from the
 * dpkg database. One encoder (the check writes details with it) and one
 * decoder (gpugate diff reads reports with it) own the details keys, so a
 * renamed key breaks the build, not diff. checks/report.schema.json
 * describes the encoding ($defs.details, "packages.installed"). */
#ifndef GPUGATE_FACTS_PACKAGES_H
#define GPUGATE_FACTS_PACKAGES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct package_fact {
	const char *name, *arch, *version, *state;
	const char *multi_arch; /* "" or NULL: not said */
	const char *provides;   /* the virtual name it serves the relation through, or NULL */
};

struct relation_fact {
	const char *relation; /* as the spec names it, alternatives joined by " | " */
	bool holds;
	struct package_fact *installed;
	size_t n_installed;
};

struct packages_facts {
	const char *native_arch, *native_from; /* NULL: not read (the database was unreadable) */
	struct relation_fact *relations;
	size_t n_relations;
};

/* Encoders: one installed package, one relation (taking `installed`, an
 * array of package encodings), and the group's top-level keys. */
json_t *package_fact_encode(const struct package_fact *p);
json_t *relation_fact_encode(const char *relation, bool holds, json_t *installed);
void packages_facts_encode_native(json_t *details, const char *native_arch, const char *native_from);
void packages_facts_encode_relations(json_t *details, json_t *relations);

/* Decodes packages.installed's details (NULL: no such check; empty facts).
 * The strings point into details, which must outlive f. 0, or -1 with the
 * reason in err when a key has the wrong type. */
int packages_facts_decode(const json_t *details, struct packages_facts *f, char *err, size_t errsz);
void packages_facts_release(struct packages_facts *f);

#endif
