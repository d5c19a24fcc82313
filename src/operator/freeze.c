/* gpugate spec freeze: writes a spec that pins this machine's GPU stack as
 * it is (goss autoadd's idea, for a GPU stack): the installed versions of
 * the vendor's user-mode driver packages, the GPU count and vendor, the
 * models in the Hugging Face cache at their current commits, and with
 * --with-baselines the measured copy bandwidth and launch latency as a
 * baselines folder beside the spec. The rest (deadlines, the hf and
 * runtime settings) comes from the base profile or spec. `gpugate check
 * --spec` on the result passes on the same machine and fails, naming it,
 * when one pinned package changes. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "context.h"
#include "hf/layout.h"
#include "hf/listing.h"
#include "facts/runtime.h"
#include "hf/location.h"
#include "lib/debrelation.h"
#include "lib/dpkg_status.h"
#include "lib/drm_nodes.h"
#include "lib/embedded.h"
#include "lib/escape.h"
#include "lib/util.h"
#include "operator/operator.h"
#include "profile.h"
#include "registry.h"
#include "runner.h"
#include "spec.h"
#include "vendor/vendor.h"

extern char **environ;

struct freeze_options {
	const char *profile; /* base: a built-in profile ... */
	const char *spec;    /* ... or a spec file */
	const char *root;
	const char *output; /* "-": stdout */
	const char *vendor; /* NULL: detected */
	bool floor;         /* >= instead of = */
	bool with_baselines;
};

/* The vendor's user-mode driver packages are its entry's (src/vendor/):
 * kernel modules and firmware are the host's, not the image's. */

/* A node of the base spec, as YAML at the given indent (its key already
 * written by the caller). Scalars stay as written (the loader checked them). */
static void emit_node(struct strbuf *sb, const struct spec *spec, const yaml_node_t *node, int indent)
{
	if (node->type == YAML_SCALAR_NODE) {
		const char *v = (const char *)node->data.scalar.value;
		sb_puts(sb, " ");
		/* a plain scalar of the base stays as written (true, 20%, 10GiB) */
		if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && *v && !strpbrk(v, "\n#\"'") &&
		    !strstr(v, ": "))
			sb_puts(sb, v);
		else
			escape_yaml_scalar(sb, v);
		sb_puts(sb, "\n");
	} else if (node->type == YAML_SEQUENCE_NODE) {
		sb_puts(sb, "\n");
		for (size_t i = 0; i < spec_seq_len(node); i++) {
			const yaml_node_t *item = spec_seq_item(spec, node, i);
			sb_printf(sb, "%*s-", indent, "");
			emit_node(sb, spec, item, indent + 2);
		}
	} else if (node->type == YAML_MAPPING_NODE) {
		sb_puts(sb, "\n");
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(spec_document_of(spec, node), p->key);
			yaml_node_t *v = yaml_document_get_node(spec_document_of(spec, node), p->value);
			sb_printf(sb, "%*s%s:", indent, "", spec_node_str(k));
			emit_node(sb, spec, v, indent + 2);
		}
	}
}

/* The keys of a base section, but those the freeze sets itself. */
static void emit_section_rest(struct strbuf *sb, const struct spec *base, const char *section, const char *const *skip)
{
	yaml_node_t *map = spec_get(base, section);
	if (!map || map->type != YAML_MAPPING_NODE)
		return;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(spec_document_of(base, map), p->key);
		const char *key = spec_node_str(k);
		bool skipped = false;
		for (size_t i = 0; skip && skip[i]; i++)
			skipped |= strcmp(key, skip[i]) == 0;
		if (skipped)
			continue;
		sb_printf(sb, "  %s:", key);
		emit_node(sb, base, yaml_document_get_node(spec_document_of(base, map), p->value), 4);
	}
}

/* --- the GPUs ------------------------------------------------------------- */

/* The GPUs of vendor with a bound driver and a node of theirs under
 * ROOT/dev: what devices.gpus counts as usable. */
static size_t count_gpus(const char *root, const struct vendor *vendor)
{
	struct drm_scan scan;
	drm_scan(root, &scan);
	vendor_scan_proc(root, &scan, NULL);
	size_t count = 0, nvidia_index = 0;
	for (size_t i = 0; i < scan.count; i++) {
		const struct drm_gpu *g = &scan.gpus[i];
		/* CUDA needs /dev/nvidiaN (numbered in PCI order), Level Zero a DRM node */
		char *nodes[2] = { NULL, NULL };
		const struct vendor *of = vendor_by_pci(g->vendor);
		if (of && of->nodes == VENDOR_NODES_NVIDIA)
			nodes[0] = xasprintf("%s/%s%zu", of->node_dir, of->node_prefix, nvidia_index++);
		else
			for (size_t n = 0; n < 2; n++) {
				const char *name = n ? g->render.name : g->card.name;
				nodes[n] = name[0] ? xasprintf("/dev/dri/%s", name) : NULL;
			}
		bool present = false;
		for (size_t n = 0; n < 2; n++) {
			char *p = nodes[n] ? root_path(root, nodes[n]) : NULL;
			present |= p && access(p, F_OK) == 0;
			free(p);
			free(nodes[n]);
		}
		if (present && g->driver[0] && of == vendor)
			count++;
	}
	drm_scan_free(&scan);
	return count;
}

/* --- the packages --------------------------------------------------------- */

/* The package names the base spec's relations mention (NULL-terminated). */
static char **relation_names(const struct spec *base)
{
	yaml_node_t *list = spec_get(base, "packages");
	size_t n = list ? spec_seq_len(list) : 0, k = 0;
	char **names = NULL;
	for (size_t i = 0; i < n; i++) {
		struct relation rel;
		char err[256];
		if (relation_parse(spec_node_str(spec_seq_item(base, list, i)), &rel, err, sizeof(err)) < 0)
			continue; /* the loader has refused a bad one already */
		for (size_t a = 0; a < rel.count; a++) {
			names = xrealloc(names, (k + 2) * sizeof(*names));
			names[k++] = xstrdup(rel.alts[a].name);
			names[k] = NULL;
		}
		relation_free(&rel);
	}
	return names;
}

static bool pinned_package(const char *name, const struct vendor *vendor, char **named)
{
	if (vendor_owns_package(vendor, name))
		return true;
	for (size_t i = 0; named && named[i]; i++)
		if (strcmp(named[i], name) == 0)
			return true;
	return false;
}

static int cmp_pkg(const void *a, const void *b)
{
	const struct dpkg_pkg *x = *(const struct dpkg_pkg *const *)a, *y = *(const struct dpkg_pkg *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->arch, y->arch);
}

/* The packages: section. 0, or -1 with the reason on stderr. When none is
 * pinned, none_why says why (no dpkg database, no vendor package in it). */
static int emit_packages(struct strbuf *sb, const struct freeze_options *o, const struct spec *base,
			 const struct vendor *vendor, size_t *pinned, char *none_why, size_t why_size)
{
	char *path = root_path(o->root, "/var/lib/dpkg/status");
	struct dpkg_status st;
	char err[512];
	int rc = dpkg_status_load(path, NULL, &st, err, sizeof(err));
	*pinned = 0;
	if (rc == -2) { /* not a Debian-based root: no package to pin, the GPUs may still be */
		sb_puts(sb, "# No package is pinned: ");
		escape_yaml_comment(sb, err);
		sb_puts(sb, ".\n\n");
		snprintf(none_why, why_size, "no dpkg database (%s)", err);
		free(path);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "gpugate: spec freeze: cannot read the package database: %s\n", err);
		free(path);
		return -1;
	}
	char **named = relation_names(base);
	const struct dpkg_pkg **keep = xcalloc(st.count + 1, sizeof(*keep));
	size_t n = 0;
	for (size_t i = 0; i < st.count; i++)
		if (dpkg_pkg_installed(&st.pkgs[i]) && st.pkgs[i].version[0] &&
		    pinned_package(st.pkgs[i].name, vendor, named))
			keep[n++] = &st.pkgs[i];
	qsort(keep, n, sizeof(*keep), cmp_pkg);
	sb_printf(sb, "# The %s user-mode driver packages installed in ", vendor->name);
	escape_yaml_comment(sb, path);
	sb_printf(sb, ",\n# pinned %s.\n",
		  o->floor ? "as minimums (>=: a newer build passes, an older one fails)"
			   : "exactly (=: any other version fails, naming the package)");
	if (!n) {
		sb_puts(sb, "# None is installed: nothing to pin.\npackages: []\n\n");
		snprintf(none_why, why_size, "none of the %s user-mode driver packages is installed in %s",
			 vendor->name, path);
	} else {
		sb_puts(sb, "packages:\n");
		for (size_t i = 0; i < n; i++) {
			const struct dpkg_pkg *p = keep[i];
			/* the architecture only where the name alone is ambiguous (multiarch) */
			bool twice = (i > 0 && strcmp(keep[i - 1]->name, p->name) == 0) ||
				     (i + 1 < n && strcmp(keep[i + 1]->name, p->name) == 0);
			char *rel = xasprintf("%s%s%s (%s %s)", p->name, twice && p->arch[0] ? ":" : "",
					      twice ? p->arch : "", o->floor ? ">=" : "=", p->version);
			sb_puts(sb, "  - ");
			escape_yaml_scalar(sb, rel);
			sb_puts(sb, "\n");
			free(rel);
		}
		sb_puts(sb, "\n");
	}
	*pinned = n;
	free(keep);
	free_list(named);
	dpkg_status_free(&st);
	free(path);
	return 0;
}

/* --- the Hugging Face cache ----------------------------------------------- */

/* One hf.models entry. */
static void emit_model(struct strbuf *sb, const char *cache_dir, const struct hf_repo *repo, const char *commit,
		       const char *ref)
{
	/* every name here comes from the cache's folders and files: quoted */
	sb_puts(sb, "    # ");
	escape_yaml_comment(sb, repo->id);
	sb_puts(sb, ref ? " at ref " : " at commit ");
	escape_yaml_comment(sb, ref ? ref : commit);
	sb_puts(sb, "\n    - repo: ");
	escape_yaml_scalar(sb, repo->id);
	sb_puts(sb, "\n");
	if (strcmp(repo->type, "model") != 0) {
		sb_puts(sb, "      type: ");
		escape_yaml_scalar(sb, repo->type);
		sb_puts(sb, "\n");
	}
	sb_puts(sb, "      revision: ");
	escape_yaml_scalar(sb, commit);
	sb_puts(sb, "\n");
	/* the listing as src/hf/listing.c reads it for hf.models and hf verify */
	char *dir = xasprintf("%s/%s", cache_dir, repo->folder);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct hf_listing listing = { 0 };
	hf_listing_read(fd, commit, HF_LISTING_MAX_BYTES, &listing);
	if (fd >= 0)
		close(fd);
	if (listing.state != HF_LISTING_OK) {
		if (listing.state != HF_LISTING_NONE) {
			char *where = xasprintf("%s/trees/%s.json", dir, commit);
			char *shown = escape_line(where);
			char *why =
				escape_line(listing.problem ? listing.problem : hf_listing_state_text(listing.state));
			fprintf(stderr, "gpugate: spec freeze: warning: %s: %s: files not pinned\n", shown, why);
			free(why);
			free(shown);
			free(where);
		}
		sb_puts(sb,
			"      # no usable trees/ listing of this commit: the snapshot's own files count (a file it\n"
			"      # lacks cannot be seen; re-download with a current huggingface_hub or gpugate hf fetch)\n");
	} else {
		sb_printf(sb, "      files: # the %zu %s of its trees/", listing.n_files,
			  count_noun(listing.n_files, "file", "files"));
		escape_yaml_comment(sb, commit);
		sb_puts(sb, ".json listing\n");
		for (size_t i = 0; i < listing.n_files; i++) {
			sb_puts(sb, "        - ");
			escape_yaml_scalar(sb, listing.files[i].path);
			sb_puts(sb, "\n");
		}
	}
	hf_listing_free(&listing);
	free(dir);
}

static bool commit_listed(char **done, size_t n, const char *commit)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(done[i], commit) == 0)
			return true;
	return false;
}

/* The hf: section: the base's settings and the models of the cache. */
static void emit_hf(struct strbuf *sb, const struct freeze_options *o, const struct spec *base, size_t *models)
{
	*models = 0;
	struct hf_location loc;
	hf_location_of_environ(environ, o->root ? o->root : "", false, &loc);
	struct hf_cache cache = { 0 };
	char err[512] = "";
	char *cache_dir = loc.hub_cache[0] == '/' ? root_path(o->root, loc.hub_cache) : NULL;
	bool scanned = cache_dir && hf_cache_scan(cache_dir, &cache, err, sizeof(err)) == 0;
	if (!spec_has(base, "hf") && !(scanned && cache.n_repos)) {
		hf_cache_free(&cache);
		free(cache_dir);
		hf_location_free(&loc);
		return;
	}
	sb_puts(sb, "# The Hugging Face hub cache (");
	escape_yaml_comment(sb, loc.hub_cache[0] ? loc.hub_cache : "unset");
	sb_puts(sb, ", from ");
	escape_yaml_comment(sb, loc.hub_source);
	sb_puts(sb, "):\n"
		    "# every repo in it at the commit its refs point to now (a pinned commit, so a moved\n"
		    "# branch is no change), with the files of the commit's trees/ listing where\n"
		    "# huggingface_hub wrote one.\n");
	sb_puts(sb, "hf:\n");
	static const char *const skip[] = { "models", NULL };
	emit_section_rest(sb, base, "hf", skip);
	struct strbuf list = STRBUF_INIT;
	for (size_t r = 0; scanned && r < cache.n_repos; r++) {
		const struct hf_repo *repo = &cache.repos[r];
		if (!repo->is_repo || !repo->id ||
		    (strcmp(repo->type, "model") && strcmp(repo->type, "dataset") && strcmp(repo->type, "space")))
			continue;
		char **done = xcalloc(repo->n_refs + repo->n_revisions + 1, sizeof(*done));
		size_t n_done = 0;
		/* main first, then the other refs, then commits no ref names */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < repo->n_refs; i++) {
				const struct hf_ref *ref = &repo->refs[i];
				if ((pass == 0) != (strcmp(ref->name, "main") == 0) || !ref->has_snapshot)
					continue;
				char *commit = xstrndup(ref->commit, strcspn(ref->commit, " \t\r\n"));
				if (!commit_listed(done, n_done, commit)) {
					emit_model(&list, cache_dir, repo, commit, ref->name);
					done[n_done++] = commit;
					(*models)++;
				} else {
					free(commit);
				}
			}
		for (size_t i = 0; i < repo->n_revisions; i++) {
			const char *commit = repo->revisions[i].commit;
			if (commit_listed(done, n_done, commit) || n_done)
				continue; /* a revision no ref names is kept only when no ref has a snapshot */
			emit_model(&list, cache_dir, repo, commit, NULL);
			done[n_done++] = xstrdup(commit);
			(*models)++;
		}
		for (size_t i = 0; i < n_done; i++)
			free(done[i]);
		free(done);
	}
	if (*models)
		sb_printf(sb, "  models:\n%s", list.buf);
	else {
		sb_puts(sb, "  # no model in the cache");
		if (!scanned) {
			sb_puts(sb, ": ");
			escape_yaml_comment(sb, err);
		}
		sb_puts(sb, "\n");
	}
	sb_puts(sb, "\n");
	sb_release(&list);
	hf_cache_free(&cache);
	free(cache_dir);
	hf_location_free(&loc);
}

/* --- the performance baselines -------------------------------------------- */

static int no_delivery(const struct run *run, void *arg)
{
	(void)arg;
	return run_exit_code(run);
}

/* Runs the validate measurements (runtime.performance, in probe children as
 * every check does) and returns that check's details (decoded by
 * runtime_performance_decode), or NULL with the reason on stderr. */
static json_t *measure(const struct freeze_options *o, const struct spec *base, const char *vendor, const char *argv0)
{
	const char *buffer = spec_str(base, "runtime.bandwidth_buffer", NULL);
	char *text = xasprintf("runtime:\n  backend: %s\n  smoke: true\n  performance: true\n  timeout: %s\n%s%s%s",
			       key_str(base, "runtime.backend"), spec_str(base, "runtime.timeout", "120s"),
			       buffer ? "  bandwidth_buffer: " : "", buffer ? buffer : "", buffer ? "\n" : "");
	struct spec spec;
	struct spec_error err;
	if (spec_load_buffer(&spec, &registry_schema, "the freeze's measurement", text, strlen(text), &err) < 0) {
		fprintf(stderr, "gpugate: spec freeze: %s\n", err.msg);
		spec_free(&spec);
		free(text);
		return NULL;
	}
	struct context ctx = { 0 };
	ctx.root = o->root ? o->root : "";
	ctx.spec = &spec;
	ctx.profile = "validate";
	ctx.vendor = vendor;
	ctx.env = environ;
	ctx.argv0 = argv0;
	ctx.start = monotonic_seconds();
	ctx.deadline = ctx.start + spec_seconds(&spec, "runtime.timeout", 120) + 10;
	char *only[] = { "runtime", NULL };
	struct selection sel = { .only = only, .skip = NULL };
	struct run run;
	run_checks(&ctx, &sel, &run, no_delivery, NULL, NULL);
	json_t *measured = NULL;
	const struct result *perf = NULL;
	for (size_t i = 0; i < run.count; i++)
		if (strcmp(run.results[i].id, "runtime.performance") == 0)
			perf = &run.results[i];
	struct runtime_facts facts = { 0 };
	char why[512];
	if (perf && runtime_performance_decode(perf->details, &facts, why, sizeof(why)) == 0 && facts.n_figures > 0) {
		measured = json_incref(perf->details);
	} else {
		fprintf(stderr, "gpugate: spec freeze: --with-baselines: nothing was measured: %s\n",
			perf ? perf->summary : "no runtime.performance result");
		for (size_t i = 0; i < run.count; i++)
			if (run.results[i].status == STATUS_FAIL)
				fprintf(stderr, "  %s: %s\n", run.results[i].id, run.results[i].summary);
	}
	runtime_facts_release(&facts);
	run_release(&run);
	spec_free(&spec);
	free(text);
	return measured;
}

/* One baseline per GPU model in folder: the lowest bandwidth and the highest
 * latency its GPUs reached, so that the same machine passes. Returns the
 * number of files written, or -1. */
/* One baseline file's model: the slowest of its GPUs' figures. */
struct model_baseline {
	char file[160];
	const struct figure_fact *first; /* the GPU that named it */
	double bw, lat;
};

static int write_baselines(const char *folder, json_t *details)
{
	if (mkdir(folder, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "gpugate: spec freeze: %s: %s\n", folder, strerror(errno));
		return -1;
	}
	struct runtime_facts facts = { 0 };
	char why[512];
	if (runtime_performance_decode(details, &facts, why, sizeof(why)) < 0) {
		fprintf(stderr, "gpugate: spec freeze: %s\n", why);
		return -1;
	}
	struct model_baseline *model = xcalloc(facts.n_figures ? facts.n_figures : 1, sizeof(*model));
	size_t n_models = 0;
	for (size_t i = 0; i < facts.n_figures; i++) {
		const struct figure_fact *m = &facts.figures[i];
		long vendor = m->vendor_id;
		double bw = m->copy_bandwidth_gbs, lat = m->launch_latency_us;
		if (vendor < 0 || !m->backend || bw <= 0) {
			fprintf(stderr,
				"gpugate: spec freeze: warning: a measurement without its device's ids is not recorded\n");
			continue;
		}
		char file[160], key[64];
		if (m->device_id >= 0) {
			snprintf(key, sizeof(key), "%04lx-%04lx", vendor & 0xffff, m->device_id & 0xffff);
		} else if (m->name) {
			snprintf(key, sizeof(key), "%04lx-%s", vendor & 0xffff, m->name);
			for (char *k = key; *k; k++) /* as runtime.performance names the file */
				*k = (*k >= 'A' && *k <= 'Z') ? (char)(*k - 'A' + 'a') : isalnum_ascii(*k) ? *k : '-';
		} else {
			continue;
		}
		snprintf(file, sizeof(file), "%s-%s.json", key, m->backend);
		struct model_baseline *b = NULL;
		for (size_t k = 0; k < n_models && !b; k++)
			if (strcmp(model[k].file, file) == 0)
				b = &model[k];
		if (!b) {
			b = &model[n_models++];
			snprintf(b->file, sizeof(b->file), "%s", file);
			b->first = m;
			b->bw = bw;
			b->lat = lat;
		} else {
			b->bw = bw < b->bw ? bw : b->bw;
			b->lat = lat > b->lat ? lat : b->lat;
		}
	}
	json_t *models = json_object(); /* file name -> baseline (src/lib/baselines.c reads it) */
	for (size_t k = 0; k < n_models; k++) {
		const struct figure_fact *m = model[k].first;
		char id[16];
		json_t *b = json_object();
		snprintf(id, sizeof(id), "0x%04lx", m->vendor_id & 0xffff);
		json_object_set_new(b, "vendor_id", json_string(id));
		if (m->device_id >= 0) {
			snprintf(id, sizeof(id), "0x%04lx", m->device_id & 0xffff);
			json_object_set_new(b, "device_id", json_string(id));
		}
		json_object_set_new(b, "backend", json_string(m->backend));
		if (m->name)
			json_object_set_new(b, "name", json_text(m->name));
		json_object_set_new(b, "copy_bandwidth_gbs", json_real(round_decimals(model[k].bw, 1)));
		json_object_set_new(b, "launch_latency_us", json_real(round_decimals(model[k].lat, 2)));
		json_t *rec = json_object();
		if (m->buffer_bytes)
			json_object_set(rec, "buffer_bytes", m->buffer_bytes);
		json_object_set_new(rec, "how",
				    json_string("gpugate spec freeze --with-baselines: the slowest GPU of this model"));
		json_object_set_new(b, "recorded", rec);
		json_object_set_new(models, model[k].file, b);
	}
	free(model);
	runtime_facts_release(&facts);
	int written = 0;
	const char *file;
	json_t *b;
	json_object_foreach(models, file, b)
	{
		char *path = xasprintf("%s/%s", folder, file);
		char *text = json_dumps(b, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		char err[512];
		if (!text || operator_write_output(path, text, strlen(text), err, sizeof(err)) < 0) {
			fprintf(stderr, "gpugate: spec freeze: %s\n", text ? err : "out of memory");
			written = -1;
		} else if (written >= 0) {
			written++;
		}
		free(text);
		free(path);
	}
	json_decref(models);
	return written;
}

/* The base's other top-level sections (reports:, and any a later version
 * adds), copied as they are: from the spec and each spec it starts from. */
static void emit_other_sections(struct strbuf *sb, const struct spec *base)
{
	static const char *const known[] = { "profile", "description", "deadline", "extends", "packages",
					     "devices", "system",      "hf",       "runtime", NULL };
	char **done = NULL;
	size_t n = 0;
	for (const struct spec *s = base; s; s = s->base) {
		yaml_node_t *root = s->loaded ? yaml_document_get_root_node((yaml_document_t *)&s->doc) : NULL;
		if (!root || root->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
			const char *key = spec_node_str(yaml_document_get_node((yaml_document_t *)&s->doc, p->key));
			bool skip = !key;
			for (size_t i = 0; !skip && known[i]; i++)
				skip = strcmp(key, known[i]) == 0;
			for (size_t i = 0; !skip && i < n; i++)
				skip = strcmp(key, done[i]) == 0;
			if (skip)
				continue;
			done = xrealloc(done, (n + 1) * sizeof(*done));
			done[n++] = xstrdup(key);
			sb_printf(sb, "# %s, as in the base.\n%s:", key, key);
			emit_node(sb, base, spec_get(base, key), 2);
			sb_puts(sb, "\n");
		}
	}
	for (size_t i = 0; i < n; i++)
		free(done[i]);
	free(done);
}

/* --- the command ---------------------------------------------------------- */

static int parse_options(int argc, char **argv, struct freeze_options *o)
{
	enum { OPT_PROFILE = 256, OPT_SPEC, OPT_ROOT, OPT_FLOOR, OPT_BASELINES, OPT_VENDOR };
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "spec", required_argument, NULL, OPT_SPEC },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "output", required_argument, NULL, 'o' },
		{ "floor", no_argument, NULL, OPT_FLOOR },
		{ "with-baselines", no_argument, NULL, OPT_BASELINES },
		{ "vendor", required_argument, NULL, OPT_VENDOR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->output = "-";
	opterr = 0;
	optind = 1;
	static const char optstring[] = "+o:h";
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PROFILE:
			if (!embedded_find(embedded_profiles, optarg))
				return usage_error(
					"spec freeze: --profile: unknown profile '%s' (healthcheck, ci, validate)",
					optarg);
			o->profile = optarg;
			break;
		case OPT_SPEC:
			o->spec = optarg;
			break;
		case OPT_ROOT:
			o->root = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FLOOR:
			o->floor = true;
			break;
		case OPT_BASELINES:
			o->with_baselines = true;
			break;
		case OPT_VENDOR:
			if (!vendor_known(optarg))
				return usage_error("spec freeze: --vendor: '%s' is not intel or nvidia", optarg);
			o->vendor = optarg;
			break;
		case 'h':
			fputs("usage: gpugate spec freeze [--profile P | --spec BASE.yaml] [--root DIR] [-o FILE]\n"
			      "                           [--floor] [--with-baselines] [--vendor intel|nvidia]\n"
			      "Writes a spec pinning this machine's GPU stack as it is (- or no -o: standard output).\n"
			      "  --profile, --spec  the base its other settings come from (default --profile ci)\n"
			      "  --floor            pin packages with >= instead of =\n"
			      "  --with-baselines   measure every GPU into FILE.baselines/ (needs -o FILE)\n"
			      "exit status: 0 written, 1 the measurement or the write failed, 3 usage or base spec error,\n"
			      "  or nothing to pin (no vendor package and no GPU of the vendor: is --root right?)\n",
			      stdout);
			return -1;
		default: /* '?' or ':' */
			return usage_bad_option("spec freeze", argv, optstring, longopts);
		}
	}
	if (optind < argc)
		return usage_error("spec freeze: unexpected argument '%s'", argv[optind]);
	if (o->profile && o->spec)
		return usage_error("spec freeze: --profile and --spec both name the base: give one");
	if (o->with_baselines && strcmp(o->output, "-") == 0)
		return usage_error("spec freeze: --with-baselines writes a folder beside the spec: give -o FILE");
	return 0;
}

/* The base as `gpugate check` would load it for this vendor: a built-in
 * profile with the vendor's pins, or a file (which may extend one). */
static int load_base(const struct freeze_options *o, const char *vendor, struct spec *base)
{
	struct spec_error err;
	int rc = o->spec ? profile_load_file(base, o->spec, vendor, &err)
			 : profile_load(base, o->profile ? o->profile : "ci", vendor, &err);
	if (rc < 0)
		fprintf(stderr, "gpugate: spec error: %s\n", err.msg);
	return rc;
}

/* FILE.yaml -> FILE.baselines (beside it), absolute so that the spec works
 * from any working directory. */
static char *baselines_folder(const char *output)
{
	char *stem = xstrdup(output);
	char *dot = strrchr(stem, '.'), *slash = strrchr(stem, '/');
	if (dot && (!slash || dot > slash))
		*dot = '\0';
	char *rel = xasprintf("%s.baselines", stem);
	free(stem);
	if (rel[0] == '/')
		return rel;
	char cwd[PATH_MAX];
	char *abs = getcwd(cwd, sizeof(cwd)) ? xasprintf("%s/%s", cwd, rel) : xstrdup(rel);
	free(rel);
	return abs;
}

static int spec_freeze(int argc, char **argv)
{
	struct freeze_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_HEALTHY : rc;
	if (o.root && command_root_option("spec freeze", o.root))
		return EXIT_USAGE;
	/* the vendor as gpugate check decides it, so that the same pins apply */
	const struct vendor *vendor = o.vendor ? vendor_by_name(o.vendor) : vendor_detect_at(o.root);
	const char *vendor_name = vendor->name;
	const char *vendor_from = o.vendor ? "--vendor" : "detected";
	struct spec base;
	if (load_base(&o, vendor_name, &base) < 0) {
		spec_free(&base);
		return EXIT_USAGE;
	}
	const char *base_name = o.spec ? o.spec : o.profile ? o.profile : "ci";
	size_t gpus = count_gpus(o.root, vendor);
	/* the packages first: the header says whether any is pinned */
	struct strbuf packages = STRBUF_INIT;
	size_t pinned = 0, models = 0;
	char no_package[1200] = "";
	if (emit_packages(&packages, &o, &base, vendor, &pinned, no_package, sizeof(no_package)) < 0) {
		sb_release(&packages);
		spec_free(&base);
		return EXIT_UNHEALTHY;
	}
	if (!pinned && !gpus && !o.with_baselines) {
		/* no GPU stack: such a spec would pass on any machine; a wrong
		 * --root (or --vendor) is far likelier than the wish for one.
		 * --with-baselines pins what its measurement finds (a GPU the
		 * runtime sees), or fails when it finds none. */
		fprintf(stderr,
			"gpugate: spec freeze: nothing to pin under %s: %s, and no %s GPU with a bound driver "
			"and a device node (is --root or --vendor wrong?); no spec written\n",
			o.root ? o.root : "/", no_package, vendor->name);
		sb_release(&packages);
		spec_free(&base);
		return EXIT_USAGE;
	}
	if (!pinned)
		fprintf(stderr, "gpugate: spec freeze: warning: no package is pinned: %s\n", no_package);
	if (!gpus)
		fprintf(stderr,
			"gpugate: spec freeze: warning: no %s GPU with a bound driver and a device node: "
			"min_gpus: 0 requires none\n",
			vendor->name);

	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	struct strbuf out = STRBUF_INIT;
	sb_printf(&out, "# Frozen by `gpugate spec freeze` (gpugate %s) on ", GPUGATE_VERSION);
	escape_yaml_comment(&out, host[0] ? host : "?");
	sb_printf(&out, " at %s%s", when, o.root ? ", root " : "");
	escape_yaml_comment(&out, o.root);
	sb_puts(&out, ",\n# from the base ");
	escape_yaml_comment(&out, base_name);
	sb_puts(&out, ": this machine's GPU stack as it was then.\n"
		      "# Check a machine against it: gpugate check --spec THIS_FILE\n");
	sb_puts(&out, pinned ? "# (the same machine passes; a changed package fails, naming it).\n\n"
			     : "# (no package is pinned, see below: a changed package goes unnoticed).\n\n");
	sb_puts(&out, "profile: ");
	escape_yaml_scalar(&out, key_str(&base, "profile"));
	sb_puts(&out, "\ndescription: ");
	char *desc = xasprintf("frozen from %s on %s", host[0] ? host : "?", when);
	escape_yaml_scalar(&out, desc);
	free(desc);
	sb_puts(&out, "\n");
	if (spec_has(&base, "deadline")) {
		sb_puts(&out, "deadline:");
		emit_node(&out, &base, spec_get(&base, "deadline"), 2);
	}
	sb_puts(&out, "\n");

	sb_add(&out, packages.buf, packages.len);
	sb_release(&packages);
	sb_printf(&out, "# The GPUs: %zu %s %s with a bound driver and a device node (vendor %s).\n", gpus,
		  vendor->name, count_noun(gpus, "GPU", "GPUs"), vendor_from);
	sb_printf(&out, "devices:\n  vendor: %s\n  min_gpus: %zu\n", vendor->name, gpus);
	static const char *const dev_skip[] = { "vendor", "min_gpus", NULL };
	/* by-path and the DRM drivers list mean nothing to a vendor that needs no by-path links */
	static const char *const dev_skip_no_by_path[] = { "vendor", "min_gpus", "by_path", "drivers", NULL };
	emit_section_rest(&out, &base, "devices", vendor->by_path ? dev_skip : dev_skip_no_by_path);
	sb_puts(&out, "\n");
	if (spec_has(&base, "system")) {
		sb_puts(&out, "# Container posture, as in the base.\nsystem:");
		emit_node(&out, &base, spec_get(&base, "system"), 2);
		sb_puts(&out, "\n");
	}
	emit_hf(&out, &o, &base, &models);
	emit_other_sections(&out, &base);

	char *folder = NULL;
	int n_baselines = 0;
	if (o.with_baselines) {
		json_t *measured = measure(&o, &base, vendor_name, argv[0]);
		if (!measured) {
			sb_release(&out);
			spec_free(&base);
			return EXIT_UNHEALTHY;
		}
		folder = baselines_folder(o.output);
		n_baselines = write_baselines(folder, measured);
		json_decref(measured);
		if (n_baselines < 0) {
			free(folder);
			sb_release(&out);
			spec_free(&base);
			return EXIT_UNHEALTHY;
		}
	}
	if (spec_has(&base, "runtime") || folder) {
		sb_puts(&out, "# The GPU runtime, as in the base");
		if (folder)
			sb_printf(&out,
				  ", with the copy bandwidth and launch latency measured at the freeze\n"
				  "# as the baselines (%d %s in runtime.baselines; tolerance runtime.tolerance)",
				  n_baselines, count_noun((size_t)n_baselines, "file", "files"));
		sb_puts(&out, ".\nruntime:\n");
		static const char *const rt_skip[] = { "performance", "baselines", "smoke", NULL };
		emit_section_rest(&out, &base, "runtime", folder ? rt_skip : NULL);
		if (folder) {
			sb_puts(&out, "  smoke: true\n  performance: true\n  baselines: ");
			escape_yaml_scalar(&out, folder);
			sb_puts(&out, "\n");
		}
	}
	char err[512];
	rc = operator_write_output(o.output, out.buf, out.len, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "gpugate: spec freeze: %s\n", err);
	else
		fprintf(stderr, "gpugate: spec freeze: %s: %zu %s, %zu %s %s, %zu %s%s%s\n",
			strcmp(o.output, "-") ? o.output : "standard output", pinned,
			count_noun(pinned, "package", "packages"), gpus, vendor->name, count_noun(gpus, "GPU", "GPUs"),
			models, count_noun(models, "model revision", "model revisions"),
			folder ? ", baselines in " : "", folder ? folder : "");
	free(folder);
	sb_release(&out);
	spec_free(&base);
	return rc < 0 ? EXIT_UNHEALTHY : EXIT_HEALTHY;
}

int cmd_spec(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2)
			return usage_error("spec: which command? (freeze)");
		puts("usage: gpugate spec freeze [options]   (gpugate spec freeze --help)");
		return EXIT_HEALTHY;
	}
	if (strcmp(argv[1], "freeze") == 0)
		return spec_freeze(argc - 1, argv + 1);
	return usage_error("spec: unknown command '%s' (freeze)", argv[1]);
}
