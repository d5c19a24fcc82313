/* gpugate diff OLD.json NEW.json: two gpugate/v1 JSON reports side by side
 * (the same machine before and after a driver upgrade, or two machines):
 * checks whose status changed, package versions, runtime driver versions,
 * GPUs gained or lost, and each GPU's copy bandwidth and launch latency
 * with the change in percent. The comparison is built once as JSON
 * (the json format prints it) and rendered as text or Markdown from it.
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
#include "operator/operator.h"
#include "operator/report_decode.h"
#include "result.h"

/* A report is a few hundred KB even with many GPUs; 16 MiB is no report. */
#define REPORT_MAX        ((size_t)16 << 20)
#define DEFAULT_TOLERANCE 20.0 /* runtime.tolerance's default (src/checks/runtime_perf.c) */

/* both reports' check ids, status ranks and facts: src/operator/report_decode.c */
static int status_rank(const char *s)
{
	return strcmp(s, "fail") == 0 ? 3 : strcmp(s, "warn") == 0 ? 2 : strcmp(s, "skip") == 0 ? 1 : 0;
}

static const char * or (const char *s, const char *def)
{
	return s ? s : def;
}

static const char *str_or(const json_t *v, const char *def)
{
	return json_is_string(v) ? json_string_value(v) : def;
}

/* Appends one regression sentence. */
static void regression(json_t *diff, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void regression(json_t *diff, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	json_array_append_new(json_object_get(diff, "regressions"), json_text(s));
	free(s);
}

/* --- the parts of the comparison ------------------------------------------ */

/* The codes of `from` that `other` lacks (NULL: none), as a JSON list. */
static json_t *codes_not_in(const struct report_check *from, const struct report_check *other)
{
	json_t *out = json_array();
	for (size_t i = 0; i < from->n_codes; i++) {
		bool there = false;
		for (size_t k = 0; other && k < other->n_codes && !there; k++)
			there = strcmp(from->codes[i], other->codes[k]) == 0;
		for (size_t k = 0; k < json_array_size(out) && !there; k++)
			there = strcmp(from->codes[i], json_string_value(json_array_get(out, k))) == 0;
		if (!there)
			json_array_append_new(out, json_text(from->codes[i]));
	}
	return out;
}

static void diff_checks(json_t *diff, const struct report_doc *old, const struct report_doc *new)
{
	json_t *out = json_array();
	for (size_t i = 0; i < new->n_checks; i++) {
		const struct report_check *c = &new->checks[i];
		const char *id = c->id, *now = c->status;
		const struct report_check *before = report_check(old, id);
		const char *was = before ? before->status : NULL;
		if (was && strcmp(was, now) == 0)
			continue;
		const char *change = !was ? "added" : status_rank(now) > status_rank(was) ? "worse" : "better";
		/* what was found that was not before, and the reverse, by stable code */
		json_t *e = json_pack("{s:o, s:o?, s:s, s:s, s:o, s:o, s:o}", "id", json_text(id), "old",
				      was ? json_string(was) : NULL, "new", now, "change", change, "summary",
				      json_text(c->summary), "codes_added", codes_not_in(c, before), "codes_gone",
				      before ? codes_not_in(before, c) : json_array());
		json_array_append_new(out, e);
		if (strcmp(now, "fail") == 0 && (!was || strcmp(was, "fail") != 0))
			regression(diff, "%s: %s -> fail: %s", id, was ? was : "absent", c->summary);
	}
	for (size_t i = 0; i < old->n_checks; i++) {
		const char *id = old->checks[i].id;
		if (!report_check(new, id))
			json_array_append_new(out, json_pack("{s:o, s:s, s:n, s:s}", "id", json_text(id), "old",
							     old->checks[i].status, "new", "change", "removed"));
	}
	json_object_set_new(diff, "checks", out);
}

/* package[:arch] -> version, from packages.installed's relations. */
static json_t *installed_packages(const struct report_doc *r)
{
	json_t *map = json_object();
	for (size_t i = 0; i < r->packages.n_relations; i++) {
		const struct relation_fact *rel = &r->packages.relations[i];
		for (size_t k = 0; k < rel->n_installed; k++) {
			const struct package_fact *p = &rel->installed[k];
			if (!p->name || !p->version)
				continue;
			char *key = xasprintf("%s%s%s", p->name, p->arch && *p->arch ? ":" : "", or (p->arch, ""));
			json_object_set_new(map, key, json_text(p->version));
			free(key);
		}
	}
	return map;
}

static void diff_packages(json_t *diff, const struct report_doc *old, const struct report_doc *new)
{
	json_t *a = installed_packages(old), *b = installed_packages(new), *out = json_array();
	const char *key;
	json_t *v;
	json_object_foreach(b, key, v)
	{
		json_t *was = json_object_get(a, key);
		const char *now = json_string_value(v);
		if (was && strcmp(json_string_value(was), now) == 0)
			continue;
		int cmp = was ? debversion_compare(now, json_string_value(was)) : 0;
		json_array_append_new(out, json_pack("{s:s, s:O?, s:s, s:s}", "package", key, "old", was, "new", now,
						     "change",
						     !was      ? "added"
						     : cmp > 0 ? "upgraded"
						     : cmp < 0 ? "downgraded"
							       : "rebuilt"));
	}
	json_object_foreach(a, key, v)
	{
		if (!json_object_get(b, key))
			json_array_append_new(out, json_pack("{s:s, s:O, s:n, s:s}", "package", key, "old", v, "new",
							     "change", "removed"));
	}
	json_object_set_new(diff, "packages", out);
	json_decref(a);
	json_decref(b);
}

/* backend -> {version, library}, from runtime.loader's probes. */
static json_t *drivers_of(const struct report_doc *r)
{
	json_t *map = json_object();
	for (size_t i = 0; i < r->runtime.n_probes; i++) {
		const struct probe_run_fact *p = &r->runtime.probes[i];
		json_object_set_new(map, p->backend,
				    json_pack("{s:o?, s:o?}", "version",
					      p->driver_version ? json_text(p->driver_version) : NULL, "library",
					      p->library ? json_text(p->library) : NULL));
	}
	return map;
}

static void diff_drivers(json_t *diff, const struct report_doc *old, const struct report_doc *new)
{
	json_t *a = drivers_of(old), *b = drivers_of(new), *out = json_array();
	const char *backend;
	json_t *v;
	json_object_foreach(b, backend, v)
	{
		json_t *w = json_object_get(a, backend);
		const char *now = str_or(json_object_get(v, "version"), "?");
		const char *was = w ? str_or(json_object_get(w, "version"), "?") : NULL;
		const char *lib_now = str_or(json_object_get(v, "library"), "?");
		const char *lib_was = w ? str_or(json_object_get(w, "library"), "?") : NULL;
		if (was && strcmp(was, now) == 0 && strcmp(lib_was, lib_now) == 0)
			continue;
		json_array_append_new(out, json_pack("{s:s, s:o?, s:s, s:o?, s:s}", "backend", backend, "old",
						     was ? json_text(was) : NULL, "new", now, "old_library",
						     lib_was ? json_text(lib_was) : NULL, "new_library", lib_now));
	}
	json_object_foreach(a, backend, v)
	{
		if (!json_object_get(b, backend))
			json_array_append_new(out, json_pack("{s:s, s:O?, s:n}", "backend", backend, "old",
							     json_object_get(v, "version"), "new"));
	}
	json_object_set_new(diff, "drivers", out);
	json_decref(a);
	json_decref(b);
}

/* The GPUs a report saw: "pci ADDRESS" from devices.gpus (those present),
 * and "BACKEND ADDRESS-or-index" from runtime.devices, each with a label. */
static json_t *gpus_of(const struct report_doc *r)
{
	json_t *map = json_object();
	for (size_t i = 0; i < r->devices.n_gpus; i++) {
		const struct gpu_fact *g = &r->devices.gpus[i];
		if (!g->pci || !g->present || !g->selected)
			continue;
		char *key = xasprintf("pci %s", g->pci);
		char *label = xasprintf("%s %s (driver %s)", or (g->vendor, "?"), or (g->device, "?"),
					or (g->driver, "none"));
		json_object_set_new(map, key, json_text(label));
		free(key);
		free(label);
	}
	for (size_t i = 0; i < r->runtime.n_devices; i++) {
		const struct runtime_device_fact *g = &r->runtime.devices[i];
		char *key = g->pci ? xasprintf("%s %s", or (g->backend, "runtime"), g->pci)
				   : xasprintf("%s device %zu", or (g->backend, "runtime"), i);
		json_object_set_new(map, key, json_text(or (g->name, "?")));
		free(key);
	}
	return map;
}

static void diff_devices(json_t *diff, const struct report_doc *old, const struct report_doc *new)
{
	json_t *a = gpus_of(old), *b = gpus_of(new), *out = json_array();
	const char *key;
	json_t *v;
	json_object_foreach(a, key, v)
	{
		if (json_object_get(b, key))
			continue;
		json_array_append_new(out, json_pack("{s:s, s:O, s:s}", "device", key, "name", v, "change", "lost"));
		regression(diff, "GPU lost: %s (%s) is in %s but not in %s", key, json_string_value(v), old->path,
			   new->path);
	}
	json_object_foreach(b, key, v)
	{
		if (!json_object_get(a, key))
			json_array_append_new(
				out, json_pack("{s:s, s:O, s:s}", "device", key, "name", v, "change", "added"));
	}
	json_object_set_new(diff, "devices", out);
	json_decref(a);
	json_decref(b);
}

/* "BACKEND ADDRESS" (or "device N") -> the figures of runtime.performance. */
static json_t *figures_of(const struct report_doc *r)
{
	json_t *map = json_object(); /* key -> index into r->runtime.figures */
	for (size_t i = 0; i < r->runtime.n_figures; i++) {
		const struct figure_fact *m = &r->runtime.figures[i];
		const char *backend = or (m->backend, "runtime");
		char *key = m->pci ? xasprintf("%s %s", backend, m->pci) : xasprintf("%s device %zu", backend, i);
		json_object_set_new(map, key, json_integer((json_int_t)i));
		free(key);
	}
	return map;
}

/* Percent change of b against a; NaN when a is not positive. */
static double change_percent(double a, double b)
{
	return a > 0 ? 100.0 * (b - a) / a : NAN;
}

static void diff_performance(json_t *diff, const struct report_doc *old, const struct report_doc *new, double tol)
{
	json_t *a = figures_of(old), *b = figures_of(new), *out = json_array();
	const char *key;
	json_t *index;
	json_object_foreach(b, key, index)
	{
		json_t *was_index = json_object_get(a, key);
		if (!was_index)
			continue;
		const struct figure_fact *was = &old->runtime.figures[json_integer_value(was_index)];
		const struct figure_fact *now = &new->runtime.figures[json_integer_value(index)];
		double bw0 = was->copy_bandwidth_gbs, bw1 = now->copy_bandwidth_gbs;
		double lat0 = was->launch_latency_us, lat1 = now->launch_latency_us;
		double dbw = change_percent(bw0, bw1), dlat = change_percent(lat0, lat1);
		bool slow_copy = isfinite(dbw) && -dbw > tol, slow_launch = isfinite(dlat) && dlat > tol;
		const char *name = or (now->name, "");
		json_t *e = json_pack("{s:s, s:s, s:f, s:f, s:o, s:f, s:f, s:o, s:b}", "device", key, "name", name,
				      "old_bandwidth_gbs", bw0, "new_bandwidth_gbs", bw1, "bandwidth_change_percent",
				      isfinite(dbw) ? json_real(round_decimals(dbw, 1)) : json_null(), "old_latency_us",
				      lat0, "new_latency_us", lat1, "latency_change_percent",
				      isfinite(dlat) ? json_real(round_decimals(dlat, 1)) : json_null(), "regressed",
				      slow_copy || slow_launch);
		json_array_append_new(out, e);
		if (slow_copy)
			regression(diff, "%s%s%s: copy bandwidth %.1f -> %.1f GB/s (%.1f%%, tolerance %.0f%%)", key,
				   *name ? " " : "", name, bw0, bw1, dbw, tol);
		if (slow_launch)
			regression(diff, "%s%s%s: launch latency %.2f -> %.2f µs (+%.1f%%, tolerance %.0f%%)", key,
				   *name ? " " : "", name, lat0, lat1, dlat, tol);
	}
	json_object_set_new(diff, "performance", out);
	json_decref(a);
	json_decref(b);
}

static json_t *side(const struct report_doc *r)
{
	json_t *s = json_pack("{s:s}", "file", r->path);
	const char *const keys[] = { "verdict", "profile", "version", "hostname", "timestamp", "spec_digest" };
	const char *const values[] = { r->verdict, r->profile, r->version, r->hostname, r->timestamp, r->spec_digest };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (values[i])
			json_object_set_new(s, keys[i], json_text(values[i]));
	return s;
}

/* The tolerance the NEW run judged with (runtime.tolerance), else OLD's. */
static double report_tolerance(const struct report_doc *old, const struct report_doc *new)
{
	if (new->runtime.tolerance_percent > 0)
		return new->runtime.tolerance_percent;
	if (old->runtime.tolerance_percent > 0)
		return old->runtime.tolerance_percent;
	return DEFAULT_TOLERANCE;
}

json_t *diff_reports(const struct report_doc *old, const struct report_doc *new, double tol)
{
	json_t *diff = json_object();
	json_object_set_new(diff, "schema", json_string("gpugate-diff/v1"));
	json_object_set_new(diff, "old", side(old));
	json_object_set_new(diff, "new", side(new));
	json_object_set_new(diff, "tolerance_percent", json_real(tol));
	const char *d0 = old->spec_digest, *d1 = new->spec_digest;
	if (d0 && d1) /* a different spec explains checks that appear or vanish */
		json_object_set_new(diff, "same_spec", json_boolean(strcmp(d0, d1) == 0));
	json_object_set_new(diff, "regressions", json_array());
	diff_checks(diff, old, new);
	diff_packages(diff, old, new);
	diff_drivers(diff, old, new);
	diff_devices(diff, old, new);
	diff_performance(diff, old, new, tol);
	json_object_set_new(diff, "regressed", json_boolean(json_array_size(json_object_get(diff, "regressions")) > 0));
	return diff;
}

/* --- rendering ------------------------------------------------------------ */

static const char *s_of(const json_t *o, const char *key)
{
	return str_or(json_object_get(o, key), "-");
}

static void percent_text(char *buf, size_t size, const json_t *v)
{
	if (json_is_number(v))
		snprintf(buf, size, "%+.1f%%", json_number_value(v));
	else
		snprintf(buf, size, "n/a");
}

/* A copy of v whose every string is escaped for target (lib/escape.h):
 * names from the reports reach a terminal or a Markdown table only so. */
static json_t *escaped_copy(const json_t *v, enum escape_target target)
{
	if (json_is_string(v)) {
		struct strbuf sb = STRBUF_INIT;
		escape_add(&sb, json_string_value(v), target);
		json_t *s = json_string(sb.buf);
		sb_release(&sb);
		return s ? s : json_string("?");
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
		{
			json_array_append_new(a, escaped_copy(e, target));
		}
		return a;
	}
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		json_t *e;
		json_object_foreach((json_t *)v, k, e)
		{
			json_object_set_new(o, k, escaped_copy(e, target));
		}
		return o;
	}
	return json_copy((json_t *)v);
}

/* Text and Markdown differ in the frame only: md is true for Markdown. */
static void render(struct strbuf *sb, const json_t *diff, bool md)
{
	const json_t *old = json_object_get(diff, "old"), *new = json_object_get(diff, "new");
	size_t i;
	json_t *e;
	if (md)
		sb_printf(
			sb,
			"## gpugate diff\n\n| | report | verdict | profile | host | time |\n|---|---|---|---|---|---|\n"
			"| old | `%s` | %s | %s | %s | %s |\n| new | `%s` | %s | %s | %s | %s |\n",
			s_of(old, "file"), s_of(old, "verdict"), s_of(old, "profile"), s_of(old, "hostname"),
			s_of(old, "timestamp"), s_of(new, "file"), s_of(new, "verdict"), s_of(new, "profile"),
			s_of(new, "hostname"), s_of(new, "timestamp"));
	else
		for (int k = 0; k < 2; k++) {
			const json_t *r = k ? new : old;
			sb_printf(sb, "%s: %s (%s, profile %s", k ? "new" : "old", s_of(r, "file"), s_of(r, "verdict"),
				  s_of(r, "profile"));
			static const char *const more[] = { "hostname", "timestamp", "version" };
			static const char *const label[] = { ", host ", ", ", ", gpugate " };
			for (size_t m = 0; m < ARRAY_SIZE(more); m++)
				if (json_is_string(json_object_get(r, more[m])))
					sb_printf(sb, "%s%s", label[m], s_of(r, more[m]));
			sb_puts(sb, ")\n");
		}

	if (json_is_false(json_object_get(diff, "same_spec")))
		sb_puts(sb, md ? "\nThe two runs used different specs (spec_digest).\n"
			       : "the two runs used different specs (spec_digest)\n");
	json_t *list = json_object_get(diff, "checks");
	sb_printf(sb, md ? "\n### Checks whose status changed (%zu)\n\n" : "\nchecks whose status changed: %zu\n",
		  json_array_size(list));
	if (md && !json_array_size(list))
		sb_puts(sb, "None.\n");
	if (md && json_array_size(list))
		sb_puts(sb, "| check | old | new | |\n|---|---|---|---|\n");
	json_array_foreach(list, i, e)
	{
		sb_printf(sb, md ? "| `%s` | %s | %s | %s |\n" : "  %-28s %s -> %s (%s)\n", s_of(e, "id"),
			  s_of(e, "old"), s_of(e, "new"), s_of(e, "change"));
	}

	list = json_object_get(diff, "packages");
	sb_printf(sb, md ? "\n### Packages (%zu changed)\n\n" : "\npackages changed: %zu\n", json_array_size(list));
	if (md && !json_array_size(list))
		sb_puts(sb, "None.\n");
	if (md && json_array_size(list))
		sb_puts(sb, "| package | old | new | |\n|---|---|---|---|\n");
	json_array_foreach(list, i, e)
	{
		sb_printf(sb, md ? "| `%s` | %s | %s | %s |\n" : "  %-28s %s -> %s (%s)\n", s_of(e, "package"),
			  s_of(e, "old"), s_of(e, "new"), s_of(e, "change"));
	}

	list = json_object_get(diff, "drivers");
	sb_printf(sb, md ? "\n### Runtime drivers (%zu changed)\n\n" : "\nruntime drivers changed: %zu\n",
		  json_array_size(list));
	if (md && !json_array_size(list))
		sb_puts(sb, "None.\n");
	if (md && json_array_size(list))
		sb_puts(sb, "| backend | old | new | library |\n|---|---|---|---|\n");
	json_array_foreach(list, i, e)
	{
		sb_printf(sb, md ? "| %s | %s | %s | `%s` |\n" : "  %-28s %s -> %s (%s)\n", s_of(e, "backend"),
			  s_of(e, "old"), s_of(e, "new"), s_of(e, "new_library"));
	}

	list = json_object_get(diff, "devices");
	sb_printf(sb, md ? "\n### GPUs gained or lost (%zu)\n\n" : "\nGPUs gained or lost: %zu\n",
		  json_array_size(list));
	if (md && !json_array_size(list))
		sb_puts(sb, "None.\n");
	json_array_foreach(list, i, e)
	{
		sb_printf(sb, md ? "- %s: `%s` %s\n" : "  %s: %s %s\n", s_of(e, "change"), s_of(e, "device"),
			  s_of(e, "name"));
	}

	list = json_object_get(diff, "performance");
	sb_printf(sb, md ? "\n### Performance (tolerance %.0f%%)\n\n" : "\nperformance (tolerance %.0f%%):\n",
		  json_number_value(json_object_get(diff, "tolerance_percent")));
	if (!json_array_size(list))
		sb_puts(sb, md ? "No GPU was measured in both reports (runtime.performance).\n"
			       : "  no GPU measured in both reports (runtime.performance)\n");
	else if (md)
		sb_puts(sb, "| GPU | copy GB/s old | new | change | launch µs old | new | change | |\n"
			    "|---|---|---|---|---|---|---|---|\n");
	json_array_foreach(list, i, e)
	{
		char dbw[32], dlat[32];
		percent_text(dbw, sizeof(dbw), json_object_get(e, "bandwidth_change_percent"));
		percent_text(dlat, sizeof(dlat), json_object_get(e, "latency_change_percent"));
		const char *flag = json_is_true(json_object_get(e, "regressed")) ? "REGRESSED" : "ok";
		sb_printf(sb,
			  md ? "| %s %s | %.1f | %.1f | %s | %.2f | %.2f | %s | %s |\n"
			     : "  %s %s: copy %.1f -> %.1f GB/s (%s), launch %.2f -> %.2f µs (%s) %s\n",
			  s_of(e, "device"), s_of(e, "name"),
			  json_number_value(json_object_get(e, "old_bandwidth_gbs")),
			  json_number_value(json_object_get(e, "new_bandwidth_gbs")), dbw,
			  json_number_value(json_object_get(e, "old_latency_us")),
			  json_number_value(json_object_get(e, "new_latency_us")), dlat, flag);
	}

	list = json_object_get(diff, "regressions");
	if (json_array_size(list)) {
		sb_printf(sb,
			  md ? "\n### Verdict: NEW regressed (%zu)\n\n"
			     : "\nverdict: NEW regressed against OLD (%zu):\n",
			  json_array_size(list));
		json_array_foreach(list, i, e)
		{
			sb_printf(sb, md ? "- %s\n" : "  - %s\n", json_string_value(e));
		}
	} else {
		sb_puts(sb, md ? "\n### Verdict: no regression\n" : "\nverdict: no regression\n");
	}
}

/* --- the command ---------------------------------------------------------- */

static int parse_tolerance(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%") != 0) || !(v >= 0 && v < 100))
		return -1;
	*out = v;
	return 0;
}

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
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
			      "the runtime.tolerance the NEW run used), 0 otherwise, 3 on unusable input.\n",
			      stdout);
			return EXIT_HEALTHY;
		default:
			if (optopt >= OPT_FORMAT)
				return usage_error("diff: option '%s' needs an argument", argv[optind - 1]);
			return usage_error("diff: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("diff: give two reports: gpugate diff OLD.json NEW.json");
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
	json_t *diff = diff_reports(&old, &new, tol);
	bool regressed = json_is_true(json_object_get(diff, "regressed"));
	struct strbuf out = STRBUF_INIT;
	if (strcmp(format, "json") == 0) {
		char *text = json_dumps(diff, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		escape_json_document(&out, text ? text : "{}");
		sb_puts(&out, "\n");
		free(text);
	} else {
		bool md = strcmp(format, "markdown") == 0;
		json_t *shown = escaped_copy(diff, md ? ESCAPE_MARKDOWN_CELL : ESCAPE_LINE);
		render(&out, shown, md);
		json_decref(shown);
	}
	char err[4352];
	int rc = operator_write_output("-", out.buf, out.len, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "gpugate: diff: %s\n", err);
	sb_release(&out);
	json_decref(diff);
	report_release(&old);
	report_release(&new);
	return regressed ? EXIT_UNHEALTHY : EXIT_HEALTHY;
}
