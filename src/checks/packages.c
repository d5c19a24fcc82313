/* Check group `packages`: the GPU user-mode driver packages in this image are
 * the versions the spec pins, read from the dpkg database under --root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/debrelation.h"
#include "../lib/debversion.h"
#include "../lib/dpkg_status.h"
#include "../lib/util.h"
#include "groups.h"

static const struct spec_key packages_keys[] = {
	{ "packages", SPEC_SEQ, SCALAR_STR, NULL,
	  "Debian relation expressions that must hold: 'name (op version) | alt:arch (op version)'" },
	{ "packages[]", SPEC_SCALAR, SCALAR_STR, NULL, "one relation" },
	{ NULL, 0, 0, NULL, NULL },
};

static int packages_validate(const struct spec *spec, struct spec_error *err)
{
	yaml_node_t *list = spec_get(spec, "packages");
	for (size_t i = 0; i < spec_seq_len(list); i++) {
		yaml_node_t *item = spec_seq_item(spec, list, i);
		struct relation rel;
		char why[512];
		if (relation_parse(spec_node_str(item) ? spec_node_str(item) : "", &rel, why, sizeof(why)) < 0)
			return spec_error_at(err, spec, item, "bad package relation: %s", why);
		relation_free(&rel);
	}
	return 0;
}

static bool arch_matches(const struct rel_alt *alt, const struct dpkg_pkg *p, const char *native)
{
	if (!alt->arch || strcmp(alt->arch, "any") == 0)
		return true;
	if (strcmp(p->arch, "all") == 0)
		return true; /* an arch-independent package serves every architecture */
	const char *want = strcmp(alt->arch, "native") == 0 ? native : alt->arch;
	return want && strcmp(p->arch, want) == 0;
}

static void alt_text(struct strbuf *sb, const struct rel_alt *alt)
{
	sb_puts(sb, alt->name);
	if (alt->arch)
		sb_printf(sb, ":%s", alt->arch);
	if (alt->op != REL_ANY)
		sb_printf(sb, " (%s %s)", rel_op_text(alt->op), alt->version);
}

/* Evaluates one relation; appends what was found to `found` and returns
 * whether it holds. */
static bool relation_holds(const struct relation *rel, const struct dpkg_status *st,
			   struct strbuf *found, json_t *installed)
{
	bool holds = false;
	for (size_t a = 0; a < rel->count; a++) {
		const struct rel_alt *alt = &rel->alts[a];
		for (size_t i = 0; i < st->count; i++) {
			const struct dpkg_pkg *p = &st->pkgs[i];
			if (strcmp(p->name, alt->name) != 0)
				continue;
			bool ok_arch = arch_matches(alt, p, st->native_arch);
			bool ok_state = dpkg_pkg_installed(p);
			/* dpkg refuses to compare a malformed version; so do we */
			const char *bad_version = alt->op != REL_ANY ? debversion_invalid(p->version) : NULL;
			bool ok_version = ok_state && !bad_version &&
					  rel_op_holds(alt->op, p->version, alt->version ? alt->version : "");
			json_t *j = json_object();
			json_object_set_new(j, "package", json_text(p->name));
			json_object_set_new(j, "architecture", json_text(p->arch));
			json_object_set_new(j, "version", json_text(p->version));
			json_object_set_new(j, "state", json_text(p->state));
			json_array_append_new(installed, j);
			if (found->len)
				sb_puts(found, "; ");
			sb_printf(found, "%s:%s %s", p->name, *p->arch ? p->arch : "?", *p->version ? p->version : "(no version)");
			if (!ok_state)
				sb_printf(found, " is not installed (state %s)", *p->state ? p->state : "unknown");
			else if (!ok_arch)
				sb_printf(found, " has the wrong architecture");
			else if (bad_version)
				sb_printf(found, " has an invalid version (%s)", bad_version);
			else if (!ok_version)
				sb_printf(found, " is %s", alt->op == REL_LT || alt->op == REL_LE ? "too new" :
					  alt->op == REL_EQ ? "another version" : "too old");
			if (ok_arch && ok_version)
				holds = true;
		}
	}
	if (!found->len)
		sb_puts(found, "not installed");
	return holds;
}

static void run_installed(const struct context *ctx, void *state, struct result *r)
{
	(void)state;
	yaml_node_t *list = spec_get(ctx->spec, "packages");
	size_t n = spec_seq_len(list);
	if (n == 0) {
		result_set(r, STATUS_SKIP, "the spec pins no packages");
		return;
	}
	struct relation *rels = xcalloc(n, sizeof(*rels));
	size_t names_n = 0;
	const char **names = NULL;
	for (size_t i = 0; i < n; i++) {
		char why[512];
		/* validated when the spec was loaded */
		if (relation_parse(spec_node_str(spec_seq_item(ctx->spec, list, i)), &rels[i], why, sizeof(why)) < 0)
			continue;
		names = xrealloc(names, (names_n + rels[i].count + 1) * sizeof(*names));
		for (size_t a = 0; a < rels[i].count; a++)
			names[names_n++] = rels[i].alts[a].name;
	}
	names = xrealloc(names, (names_n + 1) * sizeof(*names));
	names[names_n] = NULL;

	char *admindir = ctx_path(ctx, "/var/lib/dpkg");
	char *path = ctx_path(ctx, "/var/lib/dpkg/status");
	struct dpkg_status st;
	char err[1024];
	int rc = dpkg_status_load(path, names, &st, err, sizeof(err));
	if (rc == -2) {
		result_set(r, STATUS_FAIL, "no dpkg database at %s (not a Debian/Ubuntu image?): %s", admindir, err);
		result_remedy(r, "run gpugate inside the Debian or Ubuntu image that holds the GPU stack, or point --root at its unpacked root filesystem");
	} else if (rc == -3) {
		result_set(r, STATUS_FAIL, "cannot read the dpkg database: %s", err);
		result_remedy(r, "dpkg keeps %s as a regular file readable by every user (0644): check its mode, the user gpugate runs as and the image's copy of it", path);
	} else if (rc < 0) {
		result_set(r, STATUS_FAIL, "cannot read the dpkg database: %s", err);
		result_remedy(r, "the status file is corrupt: restore %s from %s-old (dpkg keeps a backup) or rebuild the image", path, path);
	} else {
		json_t *all = json_array();
		size_t bad = 0;
		struct strbuf bad_names = STRBUF_INIT;
		for (size_t i = 0; i < n; i++) {
			if (!rels[i].count)
				continue;
			struct strbuf want = STRBUF_INIT, found = STRBUF_INIT;
			for (size_t a = 0; a < rels[i].count; a++) {
				if (a)
					sb_puts(&want, " | ");
				alt_text(&want, &rels[i].alts[a]);
			}
			json_t *installed = json_array();
			bool holds = relation_holds(&rels[i], &st, &found, installed);
			json_t *j = json_object();
			json_object_set_new(j, "relation", json_text(want.buf));
			json_object_set_new(j, "holds", json_boolean(holds));
			json_object_set_new(j, "installed", installed);
			json_array_append_new(all, j);
			if (!holds) {
				bad++;
				sb_printf(&bad_names, "%s%s", bad > 1 ? ", " : "", rels[i].alts[0].name);
				result_finding(r, STATUS_FAIL, "%s: %s", want.buf, found.buf);
				if (rels[i].count > 1)
					result_remedy(r, "install one of: %s", want.buf);
				else if (rels[i].alts[0].op == REL_ANY)
					result_remedy(r, "install %s: apt-get install %s", want.buf, rels[i].alts[0].name);
				else
					result_remedy(r, "install %s at a version %s %s (apt-get install %s from the repository that carries it)",
						      rels[i].alts[0].name, rel_op_text(rels[i].alts[0].op),
						      rels[i].alts[0].version, rels[i].alts[0].name);
			}
			sb_release(&want);
			sb_release(&found);
		}
		json_object_set_new(result_details(r), "relations", all);
		if (bad)
			result_set(r, STATUS_FAIL, "%zu of %zu pinned package relations do not hold: %s", bad, n, bad_names.buf);
		else
			result_set(r, STATUS_PASS, "all %zu pinned package relations hold", n);
		sb_release(&bad_names);
		dpkg_status_free(&st);
	}
	free(admindir);
	free(path);
	for (size_t i = 0; i < n; i++)
		relation_free(&rels[i]);
	free(rels);
	free(names);
}

static const struct check_def packages_checks[] = {
	{ "packages.installed", "the pinned GPU driver packages are installed at the required versions (dpkg database)",
	  NULL, false, run_installed },
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group packages_group = {
	.name = "packages",
	.description = "GPU user-mode driver packages pinned by the spec",
	.spec_keys = packages_keys,
	.validate = packages_validate,
	.checks = packages_checks,
};
