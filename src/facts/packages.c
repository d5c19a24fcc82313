#include "facts/packages.h"

#include <stdio.h>
#include <stdlib.h>

#include "../lib/util.h"
#include "../result.h"
#include "facts/decode.h"

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

json_t *package_fact_encode(const struct package_fact *p)
{
	json_t *j = json_object();
	json_object_set_new(j, K_PACKAGE, json_text(p->name));
	json_object_set_new(j, K_ARCH, json_text(p->arch));
	json_object_set_new(j, K_VERSION, json_text(p->version));
	json_object_set_new(j, K_STATE, json_text(p->state));
	if (p->multi_arch && *p->multi_arch)
		json_object_set_new(j, K_MULTI_ARCH, json_text(p->multi_arch));
	if (p->provides)
		json_object_set_new(j, K_PROVIDES, json_text(p->provides));
	return j;
}

json_t *relation_fact_encode(const char *relation, bool holds, json_t *installed)
{
	json_t *j = json_object();
	json_object_set_new(j, K_RELATION, json_text(relation));
	json_object_set_new(j, K_HOLDS, json_boolean(holds));
	json_object_set_new(j, K_INSTALLED, installed);
	return j;
}

void packages_facts_encode_native(json_t *details, const char *native_arch, const char *native_from)
{
	json_object_set_new(details, K_NATIVE, json_text(native_arch ? native_arch : ""));
	json_object_set_new(details, K_NATIVE_FROM, json_text(native_from));
}

void packages_facts_encode_relations(json_t *details, json_t *relations)
{
	json_object_set_new(details, K_RELATIONS, relations);
}

/* A string member, NULL when absent; -1 when present and not a string. */
static int get_str(const json_t *o, const char *key, const char **out, char *err, size_t errsz)
{
	return facts_str(o, "packages.installed", key, out, err, errsz);
}

static int decode_package(const json_t *j, struct package_fact *p, char *err, size_t errsz)
{
	if (!json_is_object(j)) {
		snprintf(err, errsz, "packages.installed: an installed package is not an object");
		return -1;
	}
	if (get_str(j, K_PACKAGE, &p->name, err, errsz) < 0 || get_str(j, K_ARCH, &p->arch, err, errsz) < 0 ||
	    get_str(j, K_VERSION, &p->version, err, errsz) < 0 || get_str(j, K_STATE, &p->state, err, errsz) < 0 ||
	    get_str(j, K_MULTI_ARCH, &p->multi_arch, err, errsz) < 0 ||
	    get_str(j, K_PROVIDES, &p->provides, err, errsz) < 0)
		return -1;
	return 0;
}

int packages_facts_decode(const json_t *details, struct packages_facts *f, char *err, size_t errsz)
{
	*f = (struct packages_facts){ 0 };
	if (!details)
		return 0;
	if (get_str(details, K_NATIVE, &f->native_arch, err, errsz) < 0 ||
	    get_str(details, K_NATIVE_FROM, &f->native_from, err, errsz) < 0)
		return -1;
	const json_t *rels = json_object_get(details, K_RELATIONS);
	if (rels && !json_is_array(rels)) {
		snprintf(err, errsz, "packages.installed: \"%s\" is not a list", K_RELATIONS);
		return -1;
	}
	f->n_relations = json_array_size(rels);
	f->relations = xcalloc(f->n_relations ? f->n_relations : 1, sizeof(*f->relations));
	for (size_t i = 0; i < f->n_relations; i++) {
		const json_t *rel = json_array_get(rels, i);
		struct relation_fact *r = &f->relations[i];
		const json_t *inst = json_object_get(rel, K_INSTALLED);
		if (!json_is_object(rel) || get_str(rel, K_RELATION, &r->relation, err, errsz) < 0 ||
		    (inst && !json_is_array(inst))) {
			snprintf(err, errsz, "packages.installed: relation %zu is not a relation object", i + 1);
			goto fail;
		}
		r->holds = json_is_true(json_object_get(rel, K_HOLDS));
		r->n_installed = json_array_size(inst);
		r->installed = xcalloc(r->n_installed ? r->n_installed : 1, sizeof(*r->installed));
		for (size_t k = 0; k < r->n_installed; k++)
			if (decode_package(json_array_get(inst, k), &r->installed[k], err, errsz) < 0)
				goto fail;
	}
	return 0;
fail:
	packages_facts_release(f);
	return -1;
}

void packages_facts_release(struct packages_facts *f)
{
	for (size_t i = 0; f->relations && i < f->n_relations; i++)
		free(f->relations[i].installed);
	free(f->relations);
	*f = (struct packages_facts){ 0 };
}
