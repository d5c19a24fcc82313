/* Check group `packages`: the GPU user-mode driver packages in this image are
 * the versions the spec pins, read from the dpkg database under --root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_packages.h"
#include "../lib/debrelation.h"
#include "../facts/packages.h"
#include "../lib/debversion.h"
#include "../lib/dpkg_status.h"
#include "../lib/parallel.h"
#include "../lib/timeline.h"
#include "../lib/util.h"
#include "../registry.h"

static const struct spec_key packages_keys[] = {
	{ "packages", SPEC_SEQ, SCALAR_STR, NULL,
	  "Debian relation expressions that must hold: 'name (op version) | alt:arch (op version)'", NULL, NULL },
	{ "packages[]", SPEC_SCALAR, SCALAR_STR, NULL, "one relation", NULL, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
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

/* The architecture gpugate itself was built for: dpkg's own built-in native
 * architecture when the image is this machine's (the ARCHITECTURE define of
 * dpkg's lib/dpkg/arch.c), used only when the database does not say. */
static const char *built_arch(void)
{
#if defined(__x86_64__)
	return "amd64";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__i386__)
	return "i386";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return "ppc64el";
#elif defined(__s390x__)
	return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#else
	return NULL;
#endif
}

/* The native architecture dpkg would use for this root, and where it came
 * from. dpkg's dpkg_arch_load_native() (lib/dpkg/arch.c, dpkg >= 1.22.16)
 * reads ADMINDIR/arch-native when run with --root; otherwise the native
 * architecture is the one dpkg was built for, which is the Architecture of
 * the image's own dpkg package. */
static char *native_arch(const struct context *ctx, const struct dpkg_status *st, const char **source)
{
	if (!root_is_real(ctx->root)) {
		char *path = ctx_path(ctx, "/var/lib/dpkg/arch-native");
		char line[64];
		int rc = read_line_file(path, line, sizeof(line));
		free(path);
		if (rc == 0) {
			line[strcspn(line, "\n")] = '\0';
			if (line[0]) {
				*source = "/var/lib/dpkg/arch-native";
				return xstrdup(line);
			}
		}
	}
	if (st->native_arch && *st->native_arch) {
		*source = "the Architecture of the dpkg package in the status file";
		return xstrdup(st->native_arch);
	}
	*source = "the architecture gpugate was built for (no dpkg package in the status file)";
	const char *built = built_arch();
	return built ? xstrdup(built) : NULL;
}

/* dpkg's deparchsatisfied() (lib/dpkg/depcon.c): whether a package of
 * architecture pkg_arch and Multi-Arch multiarch serves the alternative.
 * An unqualified name means the native architecture (the probe's and the
 * spec's depending side is Architecture: all) unless the package is
 * Multi-Arch: foreign; ':any' needs Multi-Arch: allowed; ':all' means
 * native; a package of Architecture: all counts as native. ':native' is
 * apt's spelling, not dpkg's: lib/dpkg/arch.c knows "any", "all" and the
 * native architecture's own name, so "native" is an architecture no
 * package has and the alternative never holds (arch_mismatch says why). */
static bool arch_satisfied(const struct rel_alt *alt, const char *pkg_arch, const char *multiarch, const char *native)
{
	if (!alt->arch && strcmp(multiarch, "foreign") == 0)
		return true;
	if (alt->arch && strcmp(alt->arch, "any") == 0)
		return strcmp(multiarch, "allowed") == 0;
	const char *want = alt->arch && strcmp(alt->arch, "all") != 0 ? alt->arch : native;
	/* a package with no Architecture (dpkg only warns) has the empty
	 * architecture, which is not the native one (DPKG_ARCH_EMPTY) */
	const char *have = strcmp(pkg_arch, "all") != 0 ? pkg_arch : native;
	return want && have && strcmp(want, have) == 0;
}

static const char *arch_mismatch(const struct rel_alt *alt, const char *multiarch, const char *native)
{
	if (alt->arch && strcmp(alt->arch, "any") == 0)
		return "is not Multi-Arch: allowed, which ':any' needs";
	if (!alt->arch)
		return native ? "is not the native architecture (and not Multi-Arch: foreign)"
			      : "has an architecture, and the native one is unknown";
	(void)multiarch;
	if (strcmp(alt->arch, "native") == 0)
		return "is not of an architecture named 'native': dpkg knows no such architecture (':native' is "
		       "apt's spelling), so no package satisfies it; write the name alone for the native architecture";
	return "has another architecture";
}

static void alt_text(struct strbuf *sb, const struct rel_alt *alt)
{
	sb_puts(sb, alt->name);
	if (alt->arch)
		sb_printf(sb, ":%s", alt->arch);
	if (alt->op != REL_ANY)
		sb_printf(sb, " (%s %s)", rel_op_text(alt->op), alt->version);
}

static json_t *pkg_json(const struct dpkg_pkg *p, const char *provides)
{
	struct package_fact f = { .name = p->name,
				  .arch = p->arch,
				  .version = p->version,
				  .state = p->state,
				  .multi_arch = p->multiarch,
				  .provides = provides };
	return package_fact_encode(&f);
}

/* The Provides items of p that name alt->name, as dpkg's f_dependency()
 * reads them (a package may provide one name at several versions, and its
 * own name too). The item's arch is the provider's own unless it says one. */
struct provided {
	const char *want;
	struct rel_alt *items;
	size_t count;
};

static bool collect_provided(const struct relfield_item *it, void *data)
{
	struct provided *pr = data;
	if (it->name_len != strlen(pr->want) || strncasecmp(it->name, pr->want, it->name_len) != 0)
		return true;
	pr->items = xrealloc(pr->items, (pr->count + 1) * sizeof(*pr->items));
	struct rel_alt *a = &pr->items[pr->count++];
	memset(a, 0, sizeof(*a));
	a->name = xstrndup(it->name, it->name_len);
	a->arch = it->arch ? xstrndup(it->arch, it->arch_len) : NULL;
	a->op = it->op;
	a->version = it->op != REL_ANY ? xstrndup(it->version, it->version_len) : NULL;
	return true;
}

static void provided_free(struct provided *pr)
{
	struct relation r = { pr->items, pr->count };
	relation_free(&r);
}

/* Judges one candidate for alt: p itself (pv NULL) or p's Provides item pv;
 * appends what was found and returns whether it serves alt. */
static bool candidate_serves(const struct rel_alt *alt, const struct dpkg_pkg *p, const struct rel_alt *pv,
			     const char *native, struct strbuf *found, json_t *installed, struct result *r)
{
	bool ok_state = dpkg_pkg_installed(p);
	bool ok_version, ok_arch;
	const char *bad_version = NULL;
	enum debversion_level level = DEBVERSION_OK;
	if (!pv) {
		ok_arch = arch_satisfied(alt, p->arch, p->multiarch, native);
		bad_version = alt->op != REL_ANY ? debversion_check(p->version, &level) : NULL;
		ok_version = level != DEBVERSION_ERROR &&
			     rel_op_holds(alt->op, p->version, alt->version ? alt->version : "");
	} else {
		/* pkg_virtual_deppossi_satisfied() (lib/dpkg/depcon.c): a provided
		 * version other than '=' serves nothing, an unversioned one only an
		 * unversioned relation */
		ok_arch = arch_satisfied(alt, pv->arch ? pv->arch : p->arch, p->multiarch, native);
		ok_version = pv->op == REL_EQ ? alt->op == REL_ANY || rel_op_holds(alt->op, pv->version, alt->version)
					      : pv->op == REL_ANY && alt->op == REL_ANY;
	}
	json_array_append_new(installed, pkg_json(p, pv ? alt->name : NULL));
	if (found->len)
		sb_puts(found, "; ");
	sb_printf(found, "%s:%s %s", p->name, *p->arch ? p->arch : "?", *p->version ? p->version : "(no version)");
	if (pv) {
		sb_printf(found, " provides %s", alt->name);
		if (pv->op != REL_ANY)
			sb_printf(found, " (%s %s)", rel_op_text(pv->op), pv->version);
	}
	if (!ok_state)
		sb_printf(found, " is not installed (state %s)", *p->state ? p->state : "unknown");
	else if (!ok_arch)
		sb_printf(found, " %s", arch_mismatch(alt, p->multiarch, native));
	else if (bad_version && level == DEBVERSION_ERROR)
		sb_printf(found, " has a version dpkg cannot read (%s)", bad_version);
	else if (!ok_version && pv && pv->op != REL_ANY && pv->op != REL_EQ)
		sb_printf(found, " with a version that is not exact ('='), which dpkg lets serve no relation");
	else if (!ok_version && pv && pv->op == REL_ANY)
		sb_printf(found, " without a version, which serves only an unversioned relation");
	else if (!ok_version)
		sb_printf(found, " is %s",
			  alt->op == REL_LT || alt->op == REL_LE ? "too new"
			  : alt->op == REL_EQ                    ? "another version"
								 : "too old");
	if (ok_state && bad_version && level == DEBVERSION_WARN)
		result_finding(r, STATUS_WARN, "packages.installed.lenient_version",
			       "%s %s has version '%s': %s (dpkg reads its database leniently "
			       "and compares it anyway)",
			       p->name, p->arch, p->version, bad_version);
	if (ok_state && ok_arch && ok_version && strcmp(p->state, "triggers-awaited") == 0)
		result_finding(r, STATUS_PASS, "packages.installed.triggers_awaited",
			       "%s is triggers-awaited: configured, waiting for another "
			       "package's triggers, which dpkg runs before it checks dependencies",
			       p->name);
	return ok_state && ok_arch && ok_version;
}

/* Evaluates one relation the way dpkg's dependencies_ok() and
 * deppossi_ok_found() (src/main/packages.c) do for a Depends of an
 * Architecture: all package: the package of that name, then every package
 * that provides it; appends what was found to `found` and returns whether
 * it holds. */
bool packages_relation_holds(const struct relation *rel, const struct dpkg_status *st, const char *native,
			     struct strbuf *found, json_t *installed, struct result *r)
{
	bool holds = false;
	for (size_t a = 0; a < rel->count; a++) {
		const struct rel_alt *alt = &rel->alts[a];
		for (size_t i = 0; i < st->count; i++) {
			const struct dpkg_pkg *p = &st->pkgs[i];
			if (strcmp(p->name, alt->name) == 0)
				holds |= candidate_serves(alt, p, NULL, native, found, installed, r);
		}
		for (size_t i = 0; i < st->count; i++) {
			const struct dpkg_pkg *p = &st->pkgs[i];
			struct provided pr = { alt->name, NULL, 0 };
			char why[256];
			if (*p->provides)
				relfield_walk("Provides", p->provides, strlen(p->provides), RELFIELD_PROVIDES,
					      collect_provided, &pr, why, sizeof(why));
			for (size_t k = 0; k < pr.count; k++)
				holds |= candidate_serves(alt, p, &pr.items[k], native, found, installed, r);
			provided_free(&pr);
		}
	}
	if (!found->len)
		sb_puts(found, "not installed");
	return holds;
}

static void run_installed(const struct context *ctx, void *state, struct result *r)
{
	(void)state;
	tl_mark("packages.installed start");
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

	char *path = ctx_path(ctx, "/var/lib/dpkg/status");
	struct dpkg_status st;
	char err[1024];
	int rc = dpkg_status_load(path, names, &st, err, sizeof(err));
	/* the workers a check run starts ahead (parallel_prestart) were for
	 * that parse's parts: any it did not use end now, not at the exit */
	parallel_release();
	if (rc == -2) {
		char *admindir = ctx_path(ctx, "/var/lib/dpkg"); /* (only here: a path lookup of its own) */
		result_set(r, STATUS_FAIL, "no dpkg database at %s (not a Debian/Ubuntu image?): %s", admindir, err);
		free(admindir);
		result_remedy(
			r,
			"run gpugate inside the Debian or Ubuntu image that holds the GPU stack, or point --root at its unpacked root filesystem");
	} else if (rc == -3) {
		result_set(r, STATUS_FAIL, "cannot read the dpkg database: %s", err);
		result_remedy(
			r,
			"dpkg keeps %s as a regular file readable by every user (0644): check its mode, the user gpugate runs as and the image's copy of it",
			path);
	} else if (rc < 0) {
		result_set(r, STATUS_FAIL, "cannot read the dpkg database: %s", err);
		result_remedy(
			r,
			"the status file is corrupt: restore %s from %s-old (dpkg keeps a backup) or rebuild the image",
			path, path);
	} else {
		const char *native_from = NULL;
		char *native = native_arch(ctx, &st, &native_from);
		packages_facts_encode_native(result_details(r), native, native_from);
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
			for (size_t a = 0; a < rels[i].count; a++)
				if (rels[i].alts[a].warning)
					result_finding(r, STATUS_WARN, "packages.installed.relation_note", "%s: %s",
						       want.buf, rels[i].alts[a].warning);
			bool holds = packages_relation_holds(&rels[i], &st, native, &found, installed, r);
			json_array_append_new(all, relation_fact_encode(want.buf, holds, installed));
			if (!holds) {
				bad++;
				sb_printf(&bad_names, "%s%s", bad > 1 ? ", " : "", rels[i].alts[0].name);
				result_finding(r, STATUS_FAIL, "packages.installed.unsatisfied", "%s: %s", want.buf,
					       found.buf);
				if (rels[i].count > 1)
					result_remedy(r, "install one of: %s", want.buf);
				else if (rels[i].alts[0].op == REL_ANY)
					result_remedy(r, "install %s: apt-get install %s", want.buf,
						      rels[i].alts[0].name);
				else
					result_remedy(
						r,
						"install %s at a version %s %s (apt-get install %s from the repository that carries it)",
						rels[i].alts[0].name, rel_op_text(rels[i].alts[0].op),
						rels[i].alts[0].version, rels[i].alts[0].name);
			}
			sb_release(&want);
			sb_release(&found);
		}
		packages_facts_encode_relations(result_details(r), all);
		if (bad)
			result_set(r, STATUS_FAIL, "%zu of %zu pinned package %s %s not hold: %s", bad, n,
				   count_noun(n, "relation", "relations"), count_noun(n, "does", "do"), bad_names.buf);
		else
			result_set(r, r->status, "%s %zu pinned package %s%s", n == 1 ? "the" : "all", n,
				   count_noun(n, "relation holds", "relations hold"),
				   r->status == STATUS_WARN ? " (with warnings: see the findings)" : "");
		sb_release(&bad_names);
		free(native);
		dpkg_status_free(&st);
	}
	free(path);
	for (size_t i = 0; i < n; i++)
		relation_free(&rels[i]);
	free(rels);
	free(names);
	tl_mark("packages.installed end");
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
	/* the whole status file read with dpkg's strictness, the longest part
	 * of a health check's static path, beside the devices, system and hf
	 * groups' file lookups */
	.own_thread = true,
	.checks = packages_checks,
};
