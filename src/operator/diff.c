/* gpugate diff OLD.json NEW.json: two gpugate/v1 JSON reports side by side
 * (the same machine before and after a driver upgrade, or two machines):
 * checks whose status changed, package versions, runtime driver versions,
 * GPUs gained or lost, each GPU's copy bandwidth and launch latency
 * with the change in percent, and the hf and system facts that differ
 * (shown by a stable key; their checks, not diff, judge them). The comparison is built once as a typed
 * result (diff.h) from the decoded reports (report_decode.h); the json
 * format encodes it, the text and Markdown formats render it.
 * Exit 1 when NEW regressed against OLD (a check newly failing, a GPU lost,
 * a figure worse than the tolerance), 0 otherwise, 3 on unusable input. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commands.h"
#include "lib/debversion.h"
#include "lib/escape.h"
#include "lib/util.h"
#include "operator/diff.h"
#include "operator/operator.h"
#include "operator/report_decode.h"
#include "registry.h"
#include "result.h"

/* A report is a few hundred KB even with many GPUs; 16 MiB is no report. */
#define REPORT_MAX ((size_t)16 << 20)

static int status_rank(const char *s)
{
	return strcmp(s, "fail") == 0 ? 3 : strcmp(s, "warn") == 0 ? 2 : strcmp(s, "skip") == 0 ? 1 : 0;
}

static const char * or (const char *s, const char *def)
{
	return s ? s : def;
}

/* A result's own copy of s: sanitized as the report's text is (NULL stays NULL). */
static char *own(const char *s)
{
	if (!s)
		return NULL;
	char *copy = xstrdup(s);
	text_sanitize(copy);
	return copy;
}

static void strings_add(struct diff_strings *l, char *s)
{
	if ((l->n & (l->n - 1)) == 0) /* 0, 1, 2, 4, ...: double it */
		l->s = xrealloc(l->s, (l->n ? 2 * l->n : 1) * sizeof(*l->s));
	l->s[l->n++] = s;
}

static void strings_release(struct diff_strings *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	*l = (struct diff_strings){ 0 };
}

/* Appends one regression sentence. */
static void regression(struct diff_result *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void regression(struct diff_result *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	text_sanitize(s);
	strings_add(&d->regressions, s);
}

/* "20%" or "20": a percentage from 0 to below 100. */
static int parse_tolerance(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%") != 0) || !(v >= 0 && v < 100))
		return -1;
	*out = v;
	return 0;
}

/* --- items by key --------------------------------------------------------- */

/* Items named by a key, kept as a map keeps them: each key once, at the
 * place it first came, naming the last item given for it; found in
 * O(log n), so a hostile report of 100,000 packages stays fast. */
struct keyed {
	char *key;
	size_t item, pos;
};
struct key_index {
	struct keyed *by_key, *by_pos;
	size_t n;
};

static int cmp_key_then_pos(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_pos(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* keys: n keys (taken; freed by key_index_release), key i naming item i */
static void key_index_build(struct key_index *ix, char **keys, size_t n)
{
	struct keyed *all = xcalloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; i < n; i++)
		all[i] = (struct keyed){ keys[i], i, i };
	qsort(all, n, sizeof(*all), cmp_key_then_pos);
	size_t u = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && strcmp(all[j + 1].key, all[i].key) == 0)
			free(all[++j].key);
		all[u++] = (struct keyed){ all[i].key, all[j].item, all[i].pos };
		i = j + 1;
	}
	ix->by_key = all;
	ix->n = u;
	ix->by_pos = xcalloc(u ? u : 1, sizeof(*ix->by_pos));
	if (u)
		memcpy(ix->by_pos, all, u * sizeof(*all));
	qsort(ix->by_pos, u, sizeof(*ix->by_pos), cmp_pos);
}

static int cmp_find(const void *key, const void *e)
{
	return strcmp(key, ((const struct keyed *)e)->key);
}

/* The item key names, or NULL. */
static const struct keyed *key_find(const struct key_index *ix, const char *key)
{
	return ix->n ? bsearch(key, ix->by_key, ix->n, sizeof(*ix->by_key), cmp_find) : NULL;
}

static void key_index_release(struct key_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		free(ix->by_key[i].key);
	free(ix->by_key);
	free(ix->by_pos);
	*ix = (struct key_index){ 0 };
}

/* --- the parts of the comparison ------------------------------------------ */

/* The codes of `from` that `other` lacks (NULL: none), each once. */
static struct diff_strings codes_not_in(const struct report_check *from, const struct report_check *other)
{
	struct diff_strings out = { 0 };
	for (size_t i = 0; from && i < from->n_codes; i++) {
		bool there = false;
		for (size_t k = 0; other && k < other->n_codes && !there; k++)
			there = strcmp(from->codes[i], other->codes[k]) == 0;
		char *code = own(from->codes[i]);
		for (size_t k = 0; k < out.n && !there; k++)
			there = strcmp(code, out.s[k]) == 0;
		if (there)
			free(code);
		else
			strings_add(&out, code);
	}
	return out;
}

static void diff_checks(struct diff_result *d, const struct report_doc *old, const struct report_doc *new)
{
	d->checks = xcalloc(new->n_checks + old->n_checks + 1, sizeof(*d->checks));
	for (size_t i = 0; i < new->n_checks; i++) {
		const struct report_check *c = &new->checks[i];
		const char *id = c->id, *now = c->status;
		const struct report_check *before = report_check(old, id);
		const char *was = before ? before->status : NULL;
		if (was && strcmp(was, now) == 0)
			continue;
		/* what was found that was not before, and the reverse, by stable code */
		d->checks[d->n_checks++] = (struct diff_check){
			.id = own(id),
			.old = own(was),
			.new = own(now),
			.summary = own(c->summary),
			.change = !was                                  ? "added"
				  : status_rank(now) > status_rank(was) ? "worse"
									: "better",
			.codes_added = codes_not_in(c, before),
			.codes_gone = before ? codes_not_in(before, c) : (struct diff_strings){ 0 },
		};
		if (strcmp(now, "fail") == 0 && (!was || strcmp(was, "fail") != 0))
			regression(d, "%s: %s -> fail: %s", id, was ? was : "absent", c->summary);
	}
	for (size_t i = 0; i < old->n_checks; i++) {
		const struct report_check *c = &old->checks[i];
		if (!report_check(new, c->id))
			d->checks[d->n_checks++] =
				(struct diff_check){ .id = own(c->id), .old = own(c->status), .change = "removed" };
	}
}

/* package[:arch] -> version, from packages.installed's relations. */
static void installed_packages(const struct report_doc *r, struct key_index *ix, const char ***versions)
{
	size_t n = 0;
	for (size_t i = 0; i < r->packages.n_relations; i++)
		n += r->packages.relations[i].n_installed;
	char **keys = xcalloc(n + 1, sizeof(*keys));
	*versions = xcalloc(n + 1, sizeof(**versions));
	n = 0;
	for (size_t i = 0; i < r->packages.n_relations; i++) {
		const struct relation_fact *rel = &r->packages.relations[i];
		for (size_t k = 0; k < rel->n_installed; k++) {
			const struct package_fact *p = &rel->installed[k];
			if (!p->name || !p->version)
				continue;
			keys[n] = xasprintf("%s%s%s", p->name, p->arch && *p->arch ? ":" : "", or (p->arch, ""));
			(*versions)[n++] = p->version;
		}
	}
	key_index_build(ix, keys, n);
	free(keys);
}

static void diff_packages(struct diff_result *d, const struct report_doc *old, const struct report_doc *new)
{
	struct key_index a, b;
	const char **va, **vb;
	installed_packages(old, &a, &va);
	installed_packages(new, &b, &vb);
	d->packages = xcalloc(a.n + b.n + 1, sizeof(*d->packages));
	for (size_t i = 0; i < b.n; i++) {
		const struct keyed *k = &b.by_pos[i], *w = key_find(&a, k->key);
		const char *now = vb[k->item], *was = w ? va[w->item] : NULL;
		if (was && strcmp(was, now) == 0)
			continue;
		int cmp = was ? debversion_compare(now, was) : 0;
		d->packages[d->n_packages++] = (struct diff_package){
			own(k->key),
			own(was),
			own(now),
			!was      ? "added"
			: cmp > 0 ? "upgraded"
			: cmp < 0 ? "downgraded"
				  : "rebuilt",
		};
	}
	for (size_t i = 0; i < a.n; i++) {
		const struct keyed *k = &a.by_pos[i];
		if (!key_find(&b, k->key))
			d->packages[d->n_packages++] =
				(struct diff_package){ own(k->key), own(va[k->item]), NULL, "removed" };
	}
	key_index_release(&a);
	key_index_release(&b);
	free(va);
	free(vb);
}

/* backend -> its probe in runtime.loader (the driver version and library). */
static void drivers_of(const struct report_doc *r, struct key_index *ix)
{
	char **keys = xcalloc(r->runtime.n_probes + 1, sizeof(*keys));
	for (size_t i = 0; i < r->runtime.n_probes; i++)
		keys[i] = xstrdup(r->runtime.probes[i].backend);
	key_index_build(ix, keys, r->runtime.n_probes);
	free(keys);
}

static void diff_drivers(struct diff_result *d, const struct report_doc *old, const struct report_doc *new)
{
	struct key_index a, b;
	drivers_of(old, &a);
	drivers_of(new, &b);
	d->drivers = xcalloc(a.n + b.n + 1, sizeof(*d->drivers));
	for (size_t i = 0; i < b.n; i++) {
		const struct keyed *k = &b.by_pos[i], *w = key_find(&a, k->key);
		const struct probe_run_fact *v = &new->runtime.probes[k->item];
		const struct probe_run_fact *was_p = w ? &old->runtime.probes[w->item] : NULL;
		const char *now = or (v->driver_version, "?"), *lib_now = or (v->library, "?");
		const char *was = was_p ? or (was_p->driver_version, "?") : NULL;
		const char *lib_was = was_p ? or (was_p->library, "?") : NULL;
		if (was && strcmp(was, now) == 0 && strcmp(lib_was, lib_now) == 0)
			continue;
		d->drivers[d->n_drivers++] =
			(struct diff_driver){ own(k->key), own(was), own(now), own(lib_was), own(lib_now) };
	}
	for (size_t i = 0; i < a.n; i++) {
		const struct keyed *k = &a.by_pos[i];
		if (!key_find(&b, k->key))
			d->drivers[d->n_drivers++] =
				(struct diff_driver){ .backend = own(k->key),
						      .old = own(old->runtime.probes[k->item].driver_version) };
	}
	key_index_release(&a);
	key_index_release(&b);
}

/* The GPUs a report saw: "pci ADDRESS" from devices.gpus (those present),
 * and "BACKEND ADDRESS-or-index" from runtime.devices, each with a label
 * (labels[item], owned). */
static void gpus_of(const struct report_doc *r, struct key_index *ix, char ***labels)
{
	size_t n = 0, cap = r->devices.n_gpus + r->runtime.n_devices;
	char **keys = xcalloc(cap + 1, sizeof(*keys));
	*labels = xcalloc(cap + 1, sizeof(**labels));
	for (size_t i = 0; i < r->devices.n_gpus; i++) {
		const struct gpu_fact *g = &r->devices.gpus[i];
		if (!g->pci || !g->present || !g->selected)
			continue;
		keys[n] = xasprintf("pci %s", g->pci);
		(*labels)[n++] = xasprintf("%s %s (driver %s)", or (g->vendor, "?"), or (g->device, "?"),
					   or (g->driver, "none"));
	}
	for (size_t i = 0; i < r->runtime.n_devices; i++) {
		const struct runtime_device_fact *g = &r->runtime.devices[i];
		keys[n] = g->pci ? xasprintf("%s %s", or (g->backend, "runtime"), g->pci)
				 : xasprintf("%s device %zu", or (g->backend, "runtime"), i);
		(*labels)[n++] = xstrdup(or (g->name, "?"));
	}
	key_index_build(ix, keys, n);
	free(keys);
}

static void free_labels(char **labels, size_t cap)
{
	for (size_t i = 0; i < cap; i++)
		free(labels[i]);
	free(labels);
}

static void diff_devices(struct diff_result *d, const struct report_doc *old, const struct report_doc *new)
{
	struct key_index a, b;
	char **la, **lb;
	gpus_of(old, &a, &la);
	gpus_of(new, &b, &lb);
	d->devices = xcalloc(a.n + b.n + 1, sizeof(*d->devices));
	for (size_t i = 0; i < a.n; i++) {
		const struct keyed *k = &a.by_pos[i];
		if (key_find(&b, k->key))
			continue;
		d->devices[d->n_devices++] = (struct diff_device){ own(k->key), own(la[k->item]), "lost" };
		regression(d, "GPU lost: %s (%s) is in %s but not in %s", k->key, la[k->item], old->path, new->path);
	}
	for (size_t i = 0; i < b.n; i++) {
		const struct keyed *k = &b.by_pos[i];
		if (!key_find(&a, k->key))
			d->devices[d->n_devices++] = (struct diff_device){ own(k->key), own(lb[k->item]), "added" };
	}
	free_labels(la, old->devices.n_gpus + old->runtime.n_devices);
	free_labels(lb, new->devices.n_gpus + new->runtime.n_devices);
	key_index_release(&a);
	key_index_release(&b);
}

/* "BACKEND ADDRESS" (or "device N") -> the figures of runtime.performance. */
static void figures_of(const struct report_doc *r, struct key_index *ix)
{
	char **keys = xcalloc(r->runtime.n_figures + 1, sizeof(*keys));
	for (size_t i = 0; i < r->runtime.n_figures; i++) {
		const struct figure_fact *m = &r->runtime.figures[i];
		const char *backend = or (m->backend, "runtime");
		keys[i] = m->pci ? xasprintf("%s %s", backend, m->pci) : xasprintf("%s device %zu", backend, i);
	}
	key_index_build(ix, keys, r->runtime.n_figures);
	free(keys);
}

/* Percent change of b against a, to one decimal; NaN when a is not positive. */
static double change_percent(double a, double b)
{
	return a > 0 ? round_decimals(100.0 * (b - a) / a, 1) : NAN;
}

static void diff_performance(struct diff_result *d, const struct report_doc *old, const struct report_doc *new,
			     double tol)
{
	struct key_index a, b;
	figures_of(old, &a);
	figures_of(new, &b);
	d->performance = xcalloc(b.n + 1, sizeof(*d->performance));
	for (size_t i = 0; i < b.n; i++) {
		const struct keyed *k = &b.by_pos[i], *w = key_find(&a, k->key);
		if (!w)
			continue;
		const struct figure_fact *was = &old->runtime.figures[w->item];
		const struct figure_fact *now = &new->runtime.figures[k->item];
		double bw0 = was->copy_bandwidth_gbs, bw1 = now->copy_bandwidth_gbs;
		double lat0 = was->launch_latency_us, lat1 = now->launch_latency_us;
		/* judged on the unrounded change, shown rounded */
		double raw_bw = bw0 > 0 ? 100.0 * (bw1 - bw0) / bw0 : NAN;
		double raw_lat = lat0 > 0 ? 100.0 * (lat1 - lat0) / lat0 : NAN;
		bool slow_copy = isfinite(raw_bw) && -raw_bw > tol, slow_launch = isfinite(raw_lat) && raw_lat > tol;
		const char *name = or (now->name, "");
		d->performance[d->n_performance++] = (struct diff_figure){
			.device = own(k->key),
			.name = own(name),
			.old_bandwidth_gbs = bw0,
			.new_bandwidth_gbs = bw1,
			.bandwidth_change_percent = change_percent(bw0, bw1),
			.old_latency_us = lat0,
			.new_latency_us = lat1,
			.latency_change_percent = change_percent(lat0, lat1),
			.regressed = slow_copy || slow_launch,
		};
		if (slow_copy)
			regression(d, "%s%s%s: copy bandwidth %.1f -> %.1f GB/s (%.1f%%, tolerance %.0f%%)", k->key,
				   *name ? " " : "", name, bw0, bw1, raw_bw, tol);
		if (slow_launch)
			regression(d, "%s%s%s: launch latency %.2f -> %.2f µs (+%.1f%%, tolerance %.0f%%)", k->key,
				   *name ? " " : "", name, lat0, lat1, raw_lat, tol);
	}
	key_index_release(&a);
	key_index_release(&b);
}

/* --- hf and system facts -------------------------------------------------- */

static void fact_add(struct diff_facts *l, const char *fact, const char *old, const char *new, const char *change)
{
	if ((l->n & (l->n - 1)) == 0) /* 0, 1, 2, 4, ...: double it */
		l->f = xrealloc(l->f, (l->n ? 2 * l->n : 1) * sizeof(*l->f));
	l->f[l->n++] = (struct diff_fact){ own(fact), own(old), own(new), change };
}

/* a text fact ("none" standing for NULL) that changed */
static void fact_text(struct diff_facts *l, const char *fact, const char *old, const char *new)
{
	old = or (old, "none");
	new = or (new, "none");
	if (strcmp(old, new) != 0)
		fact_add(l, fact, old, new, "changed");
}

static void fact_bool(struct diff_facts *l, const char *fact, bool old, bool new)
{
	fact_text(l, fact, old ? "true" : "false", new ? "true" : "false");
}

enum direction { NEUTRAL, MORE_IS_WORSE };

static void fact_count(struct diff_facts *l, const char *fact, uint64_t old, uint64_t new, enum direction dir)
{
	if (old == new)
		return;
	char a[32], b[32];
	snprintf(a, sizeof(a), "%llu", (unsigned long long)old);
	snprintf(b, sizeof(b), "%llu", (unsigned long long)new);
	fact_add(l, fact, a, b, dir == NEUTRAL ? "changed" : new > old ? "worse" : "better");
}

/* "3.0 GiB free, min 10.0 GiB" */
static void space_text(const struct hf_space_fact *s, char *buf, size_t size)
{
	char f[32], m[32];
	human_bytes(s->free_bytes, f, sizeof(f));
	human_bytes(s->min_free_bytes, m, sizeof(m));
	snprintf(buf, size, "%s free, min %s", f, m);
}

void diff_hf_facts(struct diff_facts *out, const struct hf_cache_facts *old, const struct hf_cache_facts *new)
{
	if (old->has_location && new->has_location) {
		const struct hf_location_fact *a = &old->location, *b = &new->location;
		fact_text(out, "hf.location.hub_cache", a->hub_cache, b->hub_cache);
		fact_bool(out, "hf.location.offline", a->offline, b->offline);
		fact_text(out, "hf.location.token", a->token, b->token); /* where it comes from, never the token */
	}
	if (old->has_mount && new->has_mount) {
		const struct hf_mount_fact *a = &old->mount, *b = &new->mount;
		/* a cache on the root filesystem is lost with the container (checks/hf.c, hf.mounted) */
		bool own_a = a->mount_point && strcmp(a->mount_point, "/") != 0;
		bool own_b = b->mount_point && strcmp(b->mount_point, "/") != 0;
		if (own_a != own_b)
			fact_add(out, "hf.mounted.own_mount", own_a ? "true" : "false", own_b ? "true" : "false",
				 own_b ? "better" : "worse");
		fact_text(out, "hf.mounted.mount_point", a->mount_point, b->mount_point);
		fact_text(out, "hf.mounted.fstype", a->fstype, b->fstype);
		fact_text(out, "hf.mounted.source", a->source, b->source);
	}
	if (old->has_space && new->has_space) {
		/* free space moves all the time: what matters is crossing min_free (hf.space's own rule) */
		bool short_a = old->space.free_bytes < old->space.min_free_bytes;
		bool short_b = new->space.free_bytes < new->space.min_free_bytes;
		if (short_a != short_b) {
			char a[80], b[80];
			space_text(&old->space, a, sizeof(a));
			space_text(&new->space, b, sizeof(b));
			fact_add(out, "hf.space.below_min_free", a, b, short_b ? "worse" : "better");
		}
	}
	if (old->has_layout && new->has_layout) {
		const struct hf_layout_fact *a = &old->layout, *b = &new->layout;
		fact_count(out, "hf.layout.repos", a->repos, b->repos, NEUTRAL);
		fact_count(out, "hf.layout.revisions", a->revisions, b->revisions, NEUTRAL);
		fact_count(out, "hf.layout.revisions_without_listing", a->revisions_without_listing,
			   b->revisions_without_listing, MORE_IS_WORSE);
		fact_count(out, "hf.layout.size_on_disk", a->size_on_disk, b->size_on_disk, NEUTRAL);
	}
	if (old->has_integrity && new->has_integrity) {
		const struct hf_integrity_fact *a = &old->integrity, *b = &new->integrity;
		fact_text(out, "hf.integrity.scope", a->scope, b->scope);
		fact_count(out, "hf.integrity.files", a->files, b->files, NEUTRAL);
		fact_count(out, "hf.integrity.matching", a->matching, b->matching, NEUTRAL);
		fact_count(out, "hf.integrity.unverified", a->unverified, b->unverified, MORE_IS_WORSE);
		/* neither matching nor unverified: a wrong hash, or not hashed before the deadline */
		uint64_t bad_a = a->files - a->matching - a->unverified, bad_b = b->files - b->matching - b->unverified;
		if (a->matching + a->unverified > a->files)
			bad_a = 0;
		if (b->matching + b->unverified > b->files)
			bad_b = 0;
		fact_count(out, "hf.integrity.not_matching", bad_a, bad_b, MORE_IS_WORSE);
	}
}

/* /proc/self/status's Seccomp (proc(5)) */
static void seccomp_mode_text(long long mode, char *buf, size_t size)
{
	static const char *const modes[] = { "off", "strict", "filter" };
	if (mode >= 0 && mode < (long long)ARRAY_SIZE(modes))
		snprintf(buf, size, "%s", modes[mode]);
	else
		snprintf(buf, size, "%lld", mode);
}

void diff_system_facts(struct diff_facts *out, const struct system_facts *old, const struct system_facts *new)
{
	if (old->has_seccomp && new->has_seccomp) {
		char a[32], b[32];
		seccomp_mode_text(old->seccomp.mode, a, sizeof(a));
		seccomp_mode_text(new->seccomp.mode, b, sizeof(b));
		fact_text(out, "system.seccomp.mode", a, b);
		/* the filters around gpugate, not its own sandbox's */
		long long fa = old->seccomp.filters - old->seccomp.sandbox_filters;
		long long fb = new->seccomp.filters - new->seccomp.sandbox_filters;
		if (fa != fb) {
			snprintf(a, sizeof(a), "%lld", fa);
			snprintf(b, sizeof(b), "%lld", fb);
			fact_add(out, "system.seccomp.filters", a, b, "changed");
		}
	}
	if (old->has_caps && new->has_caps) {
		uint64_t a = old->caps.cap_eff, b = new->caps.cap_eff;
		for (unsigned bit = 0; bit < 64; bit++) {
			uint64_t m = (uint64_t)1 << bit;
			if ((a & m) == (b & m))
				continue;
			const char *name = system_cap_name(bit);
			char *fact = name ? xasprintf("system.capabilities.%s", name)
					  : xasprintf("system.capabilities.bit%u", bit);
			fact_add(out, fact, a & m ? "effective" : "not effective",
				 b & m ? "effective" : "not effective", b & m ? "gained" : "lost");
			free(fact);
		}
	}
	if (old->has_container && new->has_container)
		fact_text(out, "system.container.engine", old->container.engine, new->container.engine);
	if (old->has_kernel_log && new->has_kernel_log)
		fact_count(out, "system.kernel_log.gpu_errors", old->kernel_log.gpu_errors, new->kernel_log.gpu_errors,
			   MORE_IS_WORSE);
}

void diff_facts_release(struct diff_facts *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->f[i].fact);
		free(l->f[i].old);
		free(l->f[i].new);
	}
	free(l->f);
	*l = (struct diff_facts){ 0 };
}

static struct diff_side side(const struct report_doc *r)
{
	return (struct diff_side){ own(r->path),     own(r->verdict),   own(r->profile),    own(r->version),
				   own(r->hostname), own(r->timestamp), own(r->spec_digest) };
}

/* The tolerance the NEW run judged with (runtime.tolerance), else OLD's,
 * else that key's default (its one owner, the runtime group's key table). */
static double report_tolerance(const struct report_doc *old, const struct report_doc *new)
{
	if (new->runtime.tolerance_percent > 0)
		return new->runtime.tolerance_percent;
	if (old->runtime.tolerance_percent > 0)
		return old->runtime.tolerance_percent;
	double t = 0;
	(void)parse_tolerance(key_default("runtime.tolerance", false), &t);
	return t;
}

void diff_compare(const struct report_doc *old, const struct report_doc *new, double tol, struct diff_result *d)
{
	*d = (struct diff_result){ .old = side(old), .new = side(new), .tolerance_percent = tol, .same_spec = -1 };
	const char *d0 = old->spec_digest, *d1 = new->spec_digest;
	if (d0 && d1) /* a different spec explains checks that appear or vanish */
		d->same_spec = strcmp(d0, d1) == 0;
	diff_checks(d, old, new);
	diff_packages(d, old, new);
	diff_drivers(d, old, new);
	diff_devices(d, old, new);
	diff_performance(d, old, new, tol);
	diff_hf_facts(&d->hf, &old->hf, &new->hf);
	diff_system_facts(&d->system, &old->system, &new->system);
	d->regressed = d->regressions.n > 0;
}

static void side_release(struct diff_side *s)
{
	char *fields[] = { s->file, s->verdict, s->profile, s->version, s->hostname, s->timestamp, s->spec_digest };
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		free(fields[i]);
}

void diff_result_release(struct diff_result *d)
{
	side_release(&d->old);
	side_release(&d->new);
	strings_release(&d->regressions);
	for (size_t i = 0; i < d->n_checks; i++) {
		struct diff_check *c = &d->checks[i];
		free(c->id);
		free(c->old);
		free(c->new);
		free(c->summary);
		strings_release(&c->codes_added);
		strings_release(&c->codes_gone);
	}
	for (size_t i = 0; i < d->n_packages; i++) {
		free(d->packages[i].package);
		free(d->packages[i].old);
		free(d->packages[i].new);
	}
	for (size_t i = 0; i < d->n_drivers; i++) {
		struct diff_driver *v = &d->drivers[i];
		free(v->backend);
		free(v->old);
		free(v->new);
		free(v->old_library);
		free(v->new_library);
	}
	for (size_t i = 0; i < d->n_devices; i++) {
		free(d->devices[i].device);
		free(d->devices[i].name);
	}
	for (size_t i = 0; i < d->n_performance; i++) {
		free(d->performance[i].device);
		free(d->performance[i].name);
	}
	diff_facts_release(&d->hf);
	diff_facts_release(&d->system);
	free(d->checks);
	free(d->packages);
	free(d->drivers);
	free(d->devices);
	free(d->performance);
	*d = (struct diff_result){ 0 };
}

/* --- the gpugate-diff/v1 document ------------------------------------------ */

/* s as a JSON string, NULL as absent (json_object_set_new of NULL sets nothing) */
static json_t *text_or_absent(const char *s)
{
	return s ? json_text(s) : NULL;
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(o, key, v);
}

static json_t *strings_json(const struct diff_strings *l)
{
	json_t *a = json_array();
	for (size_t i = 0; i < l->n; i++)
		json_array_append_new(a, json_text(l->s[i]));
	return a;
}

static json_t *side_json(const struct diff_side *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", json_text(s->file));
	set(o, "verdict", text_or_absent(s->verdict));
	set(o, "profile", text_or_absent(s->profile));
	set(o, "version", text_or_absent(s->version));
	set(o, "hostname", text_or_absent(s->hostname));
	set(o, "timestamp", text_or_absent(s->timestamp));
	set(o, "spec_digest", text_or_absent(s->spec_digest));
	return o;
}

static json_t *number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *facts_json(const struct diff_facts *l)
{
	json_t *a = json_array();
	for (size_t i = 0; i < l->n; i++) {
		const struct diff_fact *f = &l->f[i];
		json_array_append_new(a, json_pack("{s:o, s:o, s:o, s:s}", "fact", json_text(f->fact), "old",
						   json_text(f->old), "new", json_text(f->new), "change", f->change));
	}
	return a;
}

json_t *diff_result_json(const struct diff_result *d)
{
	json_t *doc = json_object(), *list;
	json_object_set_new(doc, "schema", json_string("gpugate-diff/v1"));
	json_object_set_new(doc, "old", side_json(&d->old));
	json_object_set_new(doc, "new", side_json(&d->new));
	json_object_set_new(doc, "tolerance_percent", json_real(d->tolerance_percent));
	if (d->same_spec >= 0)
		json_object_set_new(doc, "same_spec", json_boolean(d->same_spec));
	json_object_set_new(doc, "regressions", strings_json(&d->regressions));

	json_object_set_new(doc, "checks", list = json_array());
	for (size_t i = 0; i < d->n_checks; i++) {
		const struct diff_check *c = &d->checks[i];
		json_t *e = json_object();
		json_object_set_new(e, "id", json_text(c->id));
		json_object_set_new(e, "old", json_text_or_null(c->old));
		json_object_set_new(e, "new", json_text_or_null(c->new));
		json_object_set_new(e, "change", json_string(c->change));
		if (c->new) { /* a removed check has no summary or codes to tell */
			json_object_set_new(e, "summary", json_text(c->summary));
			json_object_set_new(e, "codes_added", strings_json(&c->codes_added));
			json_object_set_new(e, "codes_gone", strings_json(&c->codes_gone));
		}
		json_array_append_new(list, e);
	}

	json_object_set_new(doc, "packages", list = json_array());
	for (size_t i = 0; i < d->n_packages; i++) {
		const struct diff_package *p = &d->packages[i];
		json_t *e = json_object();
		json_object_set_new(e, "package", json_text(p->package));
		json_object_set_new(e, "old", json_text_or_null(p->old));
		json_object_set_new(e, "new", json_text_or_null(p->new));
		json_object_set_new(e, "change", json_string(p->change));
		json_array_append_new(list, e);
	}

	json_object_set_new(doc, "drivers", list = json_array());
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct diff_driver *v = &d->drivers[i];
		json_t *e = json_object();
		json_object_set_new(e, "backend", json_text(v->backend));
		json_object_set_new(e, "old", json_text_or_null(v->old));
		json_object_set_new(e, "new", json_text_or_null(v->new));
		if (v->new) { /* a backend that is gone has no library to tell */
			json_object_set_new(e, "old_library", json_text_or_null(v->old_library));
			json_object_set_new(e, "new_library", json_text(v->new_library));
		}
		json_array_append_new(list, e);
	}

	json_object_set_new(doc, "devices", list = json_array());
	for (size_t i = 0; i < d->n_devices; i++) {
		const struct diff_device *g = &d->devices[i];
		json_array_append_new(list, json_pack("{s:o, s:o, s:s}", "device", json_text(g->device), "name",
						      json_text(g->name), "change", g->change));
	}

	json_object_set_new(doc, "performance", list = json_array());
	for (size_t i = 0; i < d->n_performance; i++) {
		const struct diff_figure *m = &d->performance[i];
		json_array_append_new(list,
				      json_pack("{s:o, s:o, s:f, s:f, s:o, s:f, s:f, s:o, s:b}", "device",
						json_text(m->device), "name", json_text(m->name), "old_bandwidth_gbs",
						m->old_bandwidth_gbs, "new_bandwidth_gbs", m->new_bandwidth_gbs,
						"bandwidth_change_percent", number_or_null(m->bandwidth_change_percent),
						"old_latency_us", m->old_latency_us, "new_latency_us",
						m->new_latency_us, "latency_change_percent",
						number_or_null(m->latency_change_percent), "regressed", m->regressed));
	}
	json_object_set_new(doc, "hf", facts_json(&d->hf));
	json_object_set_new(doc, "system", facts_json(&d->system));
	json_object_set_new(doc, "regressed", json_boolean(d->regressed));
	return doc;
}

json_t *diff_reports(const struct report_doc *old, const struct report_doc *new, double tol)
{
	struct diff_result d;
	diff_compare(old, new, tol, &d);
	json_t *doc = diff_result_json(&d);
	diff_result_release(&d);
	return doc;
}

/* --- rendering ------------------------------------------------------------ */

/* Strings of a result shown escaped for the output (lib/escape.h): names
 * from the reports reach a terminal or a Markdown table only so. Each call
 * takes the next of a few buffers, enough for the strings of one line. */
struct shown {
	struct strbuf buf[8];
	size_t next;
	enum escape_target target;
};

/* A driver's version or library as diff_drivers keeps it: "?" when the run
 * did not report it (a probe that failed before the driver answered), NULL
 * when the backend is gone from NEW. */
static bool driver_known(const char *s)
{
	return s && strcmp(s, "?") != 0;
}

static const char *driver_word(const char *s)
{
	return driver_known(s) ? s : s ? "not reported" : "none";
}

static const char *show(struct shown *sh, const char *s)
{
	if (!s)
		return "-";
	struct strbuf *b = &sh->buf[sh->next++ % ARRAY_SIZE(sh->buf)];
	sb_release(b);
	escape_add(b, s, sh->target);
	return b->buf;
}

static void percent_text(char *buf, size_t size, double v)
{
	if (isfinite(v))
		snprintf(buf, size, "%+.1f%%", v);
	else
		snprintf(buf, size, "n/a");
}

static void render_facts(struct strbuf *sb, struct shown *sh, const struct diff_facts *l, bool md, const char *title,
			 const char *label)
{
	if (md)
		sb_printf(sb, "\n### %s (%zu changed)\n\n%s", title, l->n,
			  l->n ? "| fact | old | new | |\n|---|---|---|---|\n" : "None.\n");
	else
		sb_printf(sb, "\n%s changed: %zu\n", label, l->n);
	for (size_t i = 0; i < l->n; i++) {
		const struct diff_fact *f = &l->f[i];
		sb_printf(sb, md ? "| `%s` | %s | %s | %s |\n" : "  %-28s %s -> %s (%s)\n", show(sh, f->fact),
			  show(sh, f->old), show(sh, f->new), show(sh, f->change));
	}
}

/* Text and Markdown differ in the frame only: md is true for Markdown. */
static void render(struct strbuf *sb, const struct diff_result *d, bool md)
{
	struct shown sh = { .target = md ? ESCAPE_MARKDOWN_CELL : ESCAPE_LINE };
	for (size_t i = 0; i < ARRAY_SIZE(sh.buf); i++)
		sb_init(&sh.buf[i]);
	const struct diff_side *old = &d->old, *new = &d->new;
	if (md) {
		sb_printf(
			sb,
			"## gpugate diff\n\n| | report | verdict | profile | host | time |\n|---|---|---|---|---|---|\n"
			"| old | `%s` | %s | %s | %s | %s |\n",
			show(&sh, old->file), show(&sh, old->verdict), show(&sh, old->profile),
			show(&sh, old->hostname), show(&sh, old->timestamp));
		sb_printf(sb, "| new | `%s` | %s | %s | %s | %s |\n", show(&sh, new->file), show(&sh, new->verdict),
			  show(&sh, new->profile), show(&sh, new->hostname), show(&sh, new->timestamp));
	} else {
		for (int k = 0; k < 2; k++) {
			const struct diff_side *r = k ? new : old;
			sb_printf(sb, "%s: %s (%s, profile %s", k ? "new" : "old", show(&sh, r->file),
				  show(&sh, r->verdict), show(&sh, r->profile));
			const char *const more[] = { r->hostname, r->timestamp, r->version };
			static const char *const label[] = { ", host ", ", ", ", gpugate " };
			for (size_t m = 0; m < ARRAY_SIZE(more); m++)
				if (more[m])
					sb_printf(sb, "%s%s", label[m], show(&sh, more[m]));
			sb_puts(sb, ")\n");
		}
	}

	if (d->same_spec == 0)
		sb_puts(sb, md ? "\nThe two runs used different specs (spec_digest).\n"
			       : "the two runs used different specs (spec_digest)\n");
	sb_printf(sb, md ? "\n### Checks whose status changed (%zu)\n\n" : "\nchecks whose status changed: %zu\n",
		  d->n_checks);
	if (md && !d->n_checks)
		sb_puts(sb, "None.\n");
	if (md && d->n_checks)
		sb_puts(sb, "| check | old | new | |\n|---|---|---|---|\n");
	for (size_t i = 0; i < d->n_checks; i++) {
		const struct diff_check *c = &d->checks[i];
		sb_printf(sb, md ? "| `%s` | %s | %s | %s |\n" : "  %-28s %s -> %s (%s)\n", show(&sh, c->id),
			  show(&sh, c->old), show(&sh, c->new), show(&sh, c->change));
	}

	sb_printf(sb, md ? "\n### Packages (%zu changed)\n\n" : "\npackages changed: %zu\n", d->n_packages);
	if (md && !d->n_packages)
		sb_puts(sb, "None.\n");
	if (md && d->n_packages)
		sb_puts(sb, "| package | old | new | |\n|---|---|---|---|\n");
	for (size_t i = 0; i < d->n_packages; i++) {
		const struct diff_package *p = &d->packages[i];
		sb_printf(sb, md ? "| `%s` | %s | %s | %s |\n" : "  %-28s %s -> %s (%s)\n", show(&sh, p->package),
			  show(&sh, p->old), show(&sh, p->new), show(&sh, p->change));
	}

	sb_printf(sb, md ? "\n### Runtime drivers (%zu changed)\n\n" : "\nruntime drivers changed: %zu\n",
		  d->n_drivers);
	if (md && !d->n_drivers)
		sb_puts(sb, "None.\n");
	if (md && d->n_drivers)
		sb_puts(sb, "| backend | old | new | library |\n|---|---|---|---|\n");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct diff_driver *v = &d->drivers[i];
		const char *lib = driver_known(v->new_library) ? show(&sh, v->new_library) : NULL;
		sb_printf(sb, md ? "| %s | %s | %s | " : "  %-28s %s -> %s", show(&sh, v->backend),
			  show(&sh, driver_word(v->old)), show(&sh, driver_word(v->new)));
		if (md)
			sb_printf(sb, lib ? "`%s` |\n" : "%s |\n", lib ? lib : "-");
		else
			sb_printf(sb, lib ? " (%s)\n" : "%s\n", lib ? lib : "");
	}

	sb_printf(sb, md ? "\n### GPUs gained or lost (%zu)\n\n" : "\nGPUs gained or lost: %zu\n", d->n_devices);
	if (md && !d->n_devices)
		sb_puts(sb, "None.\n");
	for (size_t i = 0; i < d->n_devices; i++) {
		const struct diff_device *g = &d->devices[i];
		sb_printf(sb, md ? "- %s: `%s` %s\n" : "  %s: %s %s\n", show(&sh, g->change), show(&sh, g->device),
			  show(&sh, g->name));
	}

	render_facts(sb, &sh, &d->hf, md, "Hugging Face cache", "hf cache facts");
	render_facts(sb, &sh, &d->system, md, "System", "system facts");

	sb_printf(sb, md ? "\n### Performance (tolerance %.0f%%)\n\n" : "\nperformance (tolerance %.0f%%):\n",
		  d->tolerance_percent);
	if (!d->n_performance)
		sb_puts(sb, md ? "No GPU was measured in both reports (runtime.performance).\n"
			       : "  no GPU measured in both reports (runtime.performance)\n");
	else if (md)
		sb_puts(sb, "| GPU | copy GB/s old | new | change | launch µs old | new | change | |\n"
			    "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < d->n_performance; i++) {
		const struct diff_figure *m = &d->performance[i];
		char dbw[32], dlat[32];
		percent_text(dbw, sizeof(dbw), m->bandwidth_change_percent);
		percent_text(dlat, sizeof(dlat), m->latency_change_percent);
		sb_printf(sb,
			  md ? "| %s %s | %.1f | %.1f | %s | %.2f | %.2f | %s | %s |\n"
			     : "  %s %s: copy %.1f -> %.1f GB/s (%s), launch %.2f -> %.2f µs (%s) %s\n",
			  show(&sh, m->device), show(&sh, m->name), m->old_bandwidth_gbs, m->new_bandwidth_gbs, dbw,
			  m->old_latency_us, m->new_latency_us, dlat, m->regressed ? "REGRESSED" : "ok");
	}

	if (d->regressions.n) {
		sb_printf(sb,
			  md ? "\n### Verdict: NEW regressed (%zu)\n\n"
			     : "\nverdict: NEW regressed against OLD (%zu):\n",
			  d->regressions.n);
		for (size_t i = 0; i < d->regressions.n; i++)
			sb_printf(sb, md ? "- %s\n" : "  - %s\n", show(&sh, d->regressions.s[i]));
	} else {
		sb_puts(sb, md ? "\n### Verdict: no regression\n" : "\nverdict: no regression\n");
	}
	for (size_t i = 0; i < ARRAY_SIZE(sh.buf); i++)
		sb_release(&sh.buf[i]);
}

/* --- the command ---------------------------------------------------------- */

int cmd_diff(int argc, char **argv)
{
	enum { OPT_FORMAT = 256, OPT_TOLERANCE };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "text";
	double tol = -1;
	opterr = 0;
	optind = 1;
	static const char optstring[] = "h";
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "markdown"))
				return usage_error("diff: --format: '%s' is not text, json or markdown", optarg);
			format = optarg;
			break;
		case OPT_TOLERANCE:
			if (parse_tolerance(optarg, &tol) < 0)
				return usage_error(
					"diff: --tolerance: '%s' is not a percentage from 0 to 100 (e.g. 20%%)",
					optarg);
			break;
		case 'h':
			fputs("usage: gpugate diff [--format text|json|markdown] [--tolerance PCT] OLD.json NEW.json\n"
			      "Compares two gpugate JSON reports; exit 1 when NEW regressed against OLD (a check newly\n"
			      "failing, a GPU lost, copy bandwidth or launch latency worse than the tolerance: by default\n"
			      "the runtime.tolerance the NEW run used), 0 otherwise, 3 on unusable input.\n"
			      "Either report (not both) may be - for standard input, a file or a pipe:\n"
			      "  gpugate check --format json | gpugate diff base.json -\n",
			      stdout);
			return EXIT_HEALTHY;
		default:
			return usage_bad_option("diff", argv, optstring, longopts);
		}
	}
	if (argc - optind != 2)
		return usage_error("diff: give two reports: gpugate diff OLD.json NEW.json");
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		return usage_error("diff: only one of OLD and NEW can be standard input ('-')");
	struct report_doc old, new;
	char why[4608];
	if (report_load(argv[optind], REPORT_MAX, &old, why, sizeof(why)) < 0) {
		fprintf(stderr, "gpugate: diff: %s\n", why);
		return EXIT_USAGE;
	}
	if (report_load(argv[optind + 1], REPORT_MAX, &new, why, sizeof(why)) < 0) {
		fprintf(stderr, "gpugate: diff: %s\n", why);
		report_release(&old);
		return EXIT_USAGE;
	}
	if (tol < 0)
		tol = report_tolerance(&old, &new);
	struct diff_result diff;
	diff_compare(&old, &new, tol, &diff);
	bool regressed = diff.regressed;
	struct strbuf out = STRBUF_INIT;
	if (strcmp(format, "json") == 0) {
		json_t *doc = diff_result_json(&diff);
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		escape_json_document(&out, text ? text : "{}");
		sb_puts(&out, "\n");
		free(text);
		json_decref(doc);
	} else {
		render(&out, &diff, strcmp(format, "markdown") == 0);
	}
	char err[4352];
	int rc = operator_write_output("-", out.buf, out.len, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "gpugate: diff: %s\n", err);
	sb_release(&out);
	diff_result_release(&diff);
	report_release(&old);
	report_release(&new);
	return regressed ? EXIT_UNHEALTHY : EXIT_HEALTHY;
}
