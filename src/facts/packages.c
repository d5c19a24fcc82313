#include "facts/packages.h"

#include "facts/fields.h"

/* the details keys of packages.installed: written and read only here */
#define K_NATIVE      "native_architecture"
#define K_NATIVE_FROM "native_architecture_from"
#define K_RELATIONS   "relations"
#define K_RELATION    "relation"
#define K_HOLDS       "holds"
#define K_INSTALLED   "installed"
#define K_PACKAGE     "package"
#define K_ARCH        "architecture"
#define K_VERSION     "version"
#define K_STATE       "state"
#define K_MULTI_ARCH  "multi_arch"
#define K_PROVIDES    "provides"

/* one installed package; multi_arch "" (dpkg's default) is not written */
static const struct fact_field package_fields[] = {
	{ K_PACKAGE, FACT_TEXT, FACT_MEMBER(struct package_fact, name) },
	{ K_ARCH, FACT_TEXT, FACT_MEMBER(struct package_fact, arch) },
	{ K_VERSION, FACT_TEXT, FACT_MEMBER(struct package_fact, version) },
	{ K_STATE, FACT_TEXT, FACT_MEMBER(struct package_fact, state) },
	{ K_MULTI_ARCH, FACT_TEXT, FACT_MEMBER(struct package_fact, multi_arch), .flags = FACT_OMIT_EMPTY },
	{ K_PROVIDES, FACT_TEXT, FACT_MEMBER(struct package_fact, provides), .flags = FACT_OMIT_NULL },
};
FACT_TABLE(package_table, struct package_fact, "installed package", package_fields);

/* one pinned relation; its installed list is built package by package */
static const struct fact_field relation_fields[] = {
	{ K_RELATION, FACT_TEXT, FACT_MEMBER(struct relation_fact, relation) },
	{ K_HOLDS, FACT_BOOL, FACT_MEMBER(struct relation_fact, holds) },
	{ K_INSTALLED, FACT_ITEMS, FACT_MEMBER(struct relation_fact, installed), .items = &package_table,
	  FACT_COUNT_OF(struct relation_fact, n_installed) },
};
FACT_TABLE(relation_table, struct relation_fact, "relation", relation_fields);

static const struct fact_field packages_fields[] = {
	{ K_NATIVE, FACT_TEXT, FACT_MEMBER(struct packages_facts, native_arch) },
	{ K_NATIVE_FROM, FACT_TEXT, FACT_MEMBER(struct packages_facts, native_from) },
	{ K_RELATIONS, FACT_ITEMS, FACT_MEMBER(struct packages_facts, relations), .items = &relation_table,
	  FACT_COUNT_OF(struct packages_facts, n_relations) },
};
FACT_TABLE(packages_table, struct packages_facts, NULL, packages_fields);

json_t *package_fact_encode(const struct package_fact *p)
{
	return facts_encode_new(&package_table, p);
}

json_t *relation_fact_encode(const char *relation, bool holds, json_t *installed)
{
	json_t *j = facts_encode_new(&relation_table, &(struct relation_fact){ .relation = relation, .holds = holds });
	/* the check builds this list package by package (package_fact_encode) */
	json_object_set_new(j, K_INSTALLED, installed);
	return j;
}

void packages_facts_encode_native(json_t *details, const char *native_arch, const char *native_from)
{
	facts_encode(details, &packages_table,
		     &(struct packages_facts){ .native_arch = native_arch, .native_from = native_from });
}

void packages_facts_encode_relations(json_t *details, json_t *relations)
{
	json_object_set_new(details, K_RELATIONS, relations);
}

int packages_facts_decode(const json_t *details, struct packages_facts *f, char *err, size_t errsz)
{
	*f = (struct packages_facts){ 0 };
	return facts_decode(details, &packages_table, f, "packages.installed", NULL, err, errsz);
}

void packages_facts_release(struct packages_facts *f)
{
	facts_release(&packages_table, f);
}
