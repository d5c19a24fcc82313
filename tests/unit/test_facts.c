/* The typed facts (src/facts/): each encoder's output decodes back
 * to the same facts, a key of the wrong type is an error, and gpugate diff's
 * comparisons (src/operator/diff.c) judged on hand-built facts: package
 * changes, GPUs lost, the tolerance's boundary, newly failing checks and
 * the finding codes they gained. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "facts/devices.h"
#include "facts/packages.h"
#include "facts/runtime.h"
#include "operator/diff.h"
#include "operator/report_decode.h"

static void packages_round_trip(void **state)
{
	(void)state;
	json_t *details = json_object();
	struct package_fact libze = { "libze1", "amd64", "1.17.0-1", "installed", "same", NULL };
	struct package_fact icd = { "intel-opencl-icd", "amd64", "24.26-1", "installed", "", "opencl-icd" };
	json_t *installed = json_array();
	json_array_append_new(installed, package_fact_encode(&libze));
	json_t *second = json_array();
	json_array_append_new(second, package_fact_encode(&icd));
	json_t *rels = json_array();
	json_array_append_new(rels, relation_fact_encode("libze1 (>= 1.17)", true, installed));
	json_array_append_new(rels, relation_fact_encode("opencl-icd | ocl-icd", false, second));
	packages_facts_encode_native(details, "amd64", "dpkg's Architecture");
	packages_facts_encode_relations(details, rels);

	struct packages_facts f;
	char err[256];
	assert_int_equal(packages_facts_decode(details, &f, err, sizeof(err)), 0);
	assert_string_equal(f.native_arch, "amd64");
	assert_string_equal(f.native_from, "dpkg's Architecture");
	assert_int_equal(f.n_relations, 2);
	assert_string_equal(f.relations[0].relation, "libze1 (>= 1.17)");
	assert_true(f.relations[0].holds);
	assert_int_equal(f.relations[0].n_installed, 1);
	assert_string_equal(f.relations[0].installed[0].name, "libze1");
	assert_string_equal(f.relations[0].installed[0].version, "1.17.0-1");
	assert_string_equal(f.relations[0].installed[0].multi_arch, "same");
	assert_null(f.relations[0].installed[0].provides);
	assert_false(f.relations[1].holds);
	assert_string_equal(f.relations[1].installed[0].provides, "opencl-icd");
	assert_null(f.relations[1].installed[0].multi_arch); /* "" is not written */
	packages_facts_release(&f);

	/* a key of the wrong type is an error naming it, not a silent skip */
	json_object_set_new(json_array_get(rels, 0), "relation", json_integer(3));
	assert_int_equal(packages_facts_decode(details, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "relation 1"));
	json_object_set_new(details, "relations", json_string("libze1"));
	assert_int_equal(packages_facts_decode(details, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "\"relations\" is not a list"));
	json_decref(details);

	/* no such check: empty facts */
	assert_int_equal(packages_facts_decode(NULL, &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_relations, 0);
	packages_facts_release(&f);
}

static void devices_round_trip(void **state)
{
	(void)state;
	struct gpu_fact g = { "0000:03:00.0", "0x8086", "0x56a0", "0x030000", "xe", "card1", "renderD129", true, false };
	json_t *gpus = json_array(), *details = json_object();
	json_array_append_new(gpus, gpu_fact_encode(&g));
	devices_facts_encode_gpus(details, gpus);
	struct devices_facts f;
	char err[256];
	assert_int_equal(devices_facts_decode(details, &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_gpus, 1);
	assert_string_equal(f.gpus[0].pci, "0000:03:00.0");
	assert_string_equal(f.gpus[0].vendor, "0x8086");
	assert_string_equal(f.gpus[0].device, "0x56a0");
	assert_string_equal(f.gpus[0].pci_class, "0x030000");
	assert_string_equal(f.gpus[0].driver, "xe");
	assert_string_equal(f.gpus[0].render, "renderD129");
	assert_true(f.gpus[0].selected);
	assert_false(f.gpus[0].present);
	devices_facts_release(&f);
	json_decref(details);
}

static void runtime_round_trip(void **state)
{
	(void)state;
	json_t *loader = json_object(), *devices = json_object(), *perf = json_object();
	json_t *result =
		json_pack("{s:s, s:s}", "driver_version", "1.3.29735", "library", "/usr/lib/libze_intel_gpu.so.1");
	struct probe_run_fact run = { .backend = "level-zero", .seconds = 0.5, .last_stage = "", .result = result };
	json_t *probes = json_array();
	json_array_append_new(probes, probe_run_encode(&run));
	runtime_facts_encode_probes(loader, probes);
	json_t *dev = json_pack("{s:s, s:s}", "name", "Arc A770", "pci", "0000:03:00.0");
	json_t *list = json_array();
	json_array_append_new(list, runtime_device_encode(dev, "level-zero"));
	runtime_facts_encode_devices(devices, list);
	json_t *raw = json_pack("{s:f, s:f, s:I}", "copy_bandwidth_gbs", 400.0, "launch_latency_us", 5.25,
				"buffer_bytes", (json_int_t)1 << 28);
	struct figure_fact whose = { .backend = "level-zero",
				     .index = 0,
				     .pci = "0000:03:00.0",
				     .name = "Arc A770",
				     .vendor_id = 0x8086,
				     .device_id = -1 };
	json_t *measured = json_array();
	json_array_append_new(measured, figure_encode(raw, &whose));
	runtime_facts_encode_measured(perf, measured);
	runtime_facts_encode_tolerance(perf, 15);

	struct runtime_facts f = { 0 };
	char err[256];
	assert_int_equal(runtime_loader_decode(loader, &f, err, sizeof(err)), 0);
	assert_int_equal(runtime_devices_decode(devices, &f, err, sizeof(err)), 0);
	assert_int_equal(runtime_performance_decode(perf, &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_probes, 1);
	assert_string_equal(f.probes[0].backend, "level-zero");
	assert_string_equal(f.probes[0].driver_version, "1.3.29735");
	assert_string_equal(f.probes[0].library, "/usr/lib/libze_intel_gpu.so.1");
	assert_null(f.probes[0].last_stage); /* "" is not written */
	assert_int_equal(f.n_devices, 1);
	assert_string_equal(f.devices[0].backend, "level-zero");
	assert_string_equal(f.devices[0].name, "Arc A770");
	assert_int_equal(f.n_figures, 1);
	assert_true(f.figures[0].copy_bandwidth_gbs == 400.0);
	assert_true(f.figures[0].launch_latency_us == 5.25);
	assert_int_equal(f.figures[0].vendor_id, 0x8086);
	assert_int_equal(f.figures[0].device_id, -1); /* not written, not read */
	assert_string_equal(f.figures[0].name, "Arc A770");
	assert_int_equal(json_integer_value(f.figures[0].buffer_bytes), 1 << 28);
	assert_true(f.tolerance_percent == 15);
	runtime_facts_release(&f);

	json_object_set_new(perf, "measured", json_object());
	assert_int_equal(runtime_performance_decode(perf, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "runtime.performance: \"measured\" is not a list"));
	runtime_facts_release(&f);
	json_decref(result);
	json_decref(dev);
	json_decref(raw);
	json_decref(loader);
	json_decref(devices);
	json_decref(perf);
}

/* runtime.devices' memory and ids, runtime.smoke's per-device verdicts (the
 * per-GPU series of gpugate serve): absent figures stay absent, not 0 */
static void runtime_devices_and_smoke(void **state)
{
	(void)state;
	json_t *dev = json_pack("{s:s, s:s, s:s, s:i, s:I}", "name", "Arc", "pci", "0000:03:00.0", "uuid", "u-0",
				"index", 0, "memory_total", (json_int_t)16 << 30);
	json_t *list = json_array(), *devices = json_object();
	json_array_append_new(list, runtime_device_encode(dev, "level-zero"));
	runtime_facts_encode_devices(devices, list);
	json_t *result = json_pack("{s:s, s:[{s:i, s:s, s:{s:b}}, {s:i, s:s, s:{s:b}}, {s:i}]}", "backend",
				   "level-zero", "devices", "index", 0, "pci", "0000:03:00.0", "smoke", "ok", 1,
				   "index", 1, "pci", "0000:04:00.0", "smoke", "ok", 0, "index", 2);
	struct probe_run_fact run = { .backend = "level-zero", .seconds = 1, .result = result };
	json_t *probes = json_array(), *smoke = json_object();
	json_array_append_new(probes, probe_run_encode(&run));
	runtime_facts_encode_probes(smoke, probes);

	struct runtime_facts f = { 0 };
	char err[256];
	assert_int_equal(runtime_devices_decode(devices, &f, err, sizeof(err)), 0);
	assert_int_equal(runtime_smoke_decode(smoke, &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_devices, 1);
	assert_string_equal(f.devices[0].uuid, "u-0");
	assert_int_equal(f.devices[0].index, 0);
	assert_true(f.devices[0].has_memory_total && f.devices[0].memory_total == (double)(16ULL << 30));
	assert_false(f.devices[0].has_memory_free);
	assert_int_equal(f.n_smoke, 3);
	assert_int_equal(f.smoke[0].ok, 1);
	assert_int_equal(f.smoke[1].ok, 0);
	assert_string_equal(f.smoke[1].pci, "0000:04:00.0");
	assert_string_equal(f.smoke[1].backend, "level-zero"); /* the probe's, the device names none */
	assert_int_equal(f.smoke[2].ok, -1);                   /* never reached its smoke stage */
	runtime_facts_release(&f);

	json_object_set_new(smoke, "probes", json_string("x"));
	assert_int_equal(runtime_smoke_decode(smoke, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "runtime.smoke: \"probes\" is not a list"));
	runtime_facts_release(&f);
	json_decref(dev);
	json_decref(devices);
	json_decref(result);
	json_decref(smoke);
}

/* --- the tables' rules (src/facts/fields.h) -------------------------------- */

/* the exact encodings: key order, omitted keys, how a number is written */
static void encodings_are_exact(void **state)
{
	(void)state;
	struct package_fact p = { "libze1", "amd64", "1.17.0-1", "installed", "", NULL };
	json_t *j = package_fact_encode(&p);
	char *text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(
		text,
		"{\"package\":\"libze1\",\"architecture\":\"amd64\",\"version\":\"1.17.0-1\",\"state\":\"installed\"}");
	free(text);
	json_decref(j);

	json_t *rel = relation_fact_encode("libze1", false, json_array());
	text = json_dumps(rel, JSON_COMPACT);
	assert_string_equal(text, "{\"relation\":\"libze1\",\"holds\":false,\"installed\":[]}");
	free(text);
	json_decref(rel);

	struct probe_run_fact run = { .backend = "cuda", .seconds = 2, .verdict = "crashed\x01", .output = "" };
	j = probe_run_encode(&run);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "{\"backend\":\"cuda\",\"seconds\":2.0,\"verdict\":\"crashed?\"}");
	free(text);
	json_decref(j);

	json_t *raw = json_pack("{s:f}", "copy_bandwidth_gbs", 1.5);
	struct figure_fact whose = { .backend = "cuda", .index = 1, .uuid = "GPU-1", .vendor_id = -1, .device_id = 0 };
	j = figure_encode(raw, &whose);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(
		text,
		"{\"copy_bandwidth_gbs\":1.5,\"backend\":\"cuda\",\"index\":1,\"uuid\":\"GPU-1\",\"device_id\":0}");
	free(text);
	json_decref(j);
	json_decref(raw);

	json_t *details = json_object();
	packages_facts_encode_native(details, NULL, NULL);
	runtime_facts_encode_tolerance(details, 15);
	text = json_dumps(details, JSON_COMPACT);
	assert_string_equal(
		text, "{\"native_architecture\":\"\",\"native_architecture_from\":\"\",\"tolerance_percent\":15.0}");
	free(text);
	json_decref(details);
}

/* A nested item's error names the check, the item and the key; gpugate's
 * own keys are refused when of the wrong type; the probe child's members
 * of another type read as not reported. */
static void nested_and_probe_members(void **state)
{
	(void)state;
	char err[256];
	struct packages_facts pf;
	json_t *details = json_pack("{s:[{s:s, s:b, s:[{s:s}, {s:i}]}]}", "relations", "relation", "libze1", "holds", 1,
				    "installed", "package", "libze1", "package", 7);
	assert_int_equal(packages_facts_decode(details, &pf, err, sizeof(err)), -1);
	assert_string_equal(err, "packages.installed: relation 1, installed package 2: \"package\" is not a string");
	assert_null(pf.relations); /* released */
	json_decref(details);
	details = json_pack("{s:[s]}", "relations", "libze1");
	assert_int_equal(packages_facts_decode(details, &pf, err, sizeof(err)), -1);
	assert_string_equal(err, "packages.installed: relation 1 is not an object");
	json_decref(details);
	details = json_pack("{s:[{s:s, s:s}]}", "relations", "relation", "libze1", "holds", "yes");
	assert_int_equal(packages_facts_decode(details, &pf, err, sizeof(err)), -1);
	assert_string_equal(err, "packages.installed: relation 1: \"holds\" is not true or false");
	json_decref(details);

	struct devices_facts df;
	details = json_pack("{s:[{s:s}, {s:i}]}", "gpus", "pci", "0000:03:00.0", "pci", 3);
	assert_int_equal(devices_facts_decode(details, &df, err, sizeof(err)), -1);
	assert_string_equal(err, "devices.gpus: GPU 2: \"pci\" is not a string");
	json_decref(details);
	details = json_pack("{s:[{s:s}]}", "gpus", "pci", "0000:03:00.0");
	assert_int_equal(devices_facts_decode(details, &df, err, sizeof(err)), 0);
	assert_true(df.gpus[0].selected && df.gpus[0].present); /* absent reads as true */
	assert_null(df.gpus[0].driver);
	devices_facts_release(&df);
	json_decref(details);

	struct runtime_facts rf = { 0 };
	/* the child's members of another type: not reported, not an error */
	details = json_pack("{s:[{s:s, s:s, s:i, s:s, s:b}]}", "devices", "backend", "cuda", "name", "H100", "pci", 5,
			    "index", "zero", "memory_free", 1);
	assert_int_equal(runtime_devices_decode(details, &rf, err, sizeof(err)), 0);
	assert_string_equal(rf.devices[0].name, "H100");
	assert_null(rf.devices[0].pci);
	assert_int_equal(rf.devices[0].index, -1);
	assert_false(rf.devices[0].has_memory_free);
	runtime_facts_release(&rf);
	json_decref(details);
	/* gpugate's own: refused */
	details = json_pack("{s:[{s:i}]}", "devices", "backend", 1);
	assert_int_equal(runtime_devices_decode(details, &rf, err, sizeof(err)), -1);
	assert_string_equal(err, "runtime.devices: device 1: \"backend\" is not a string");
	json_decref(details);
	details = json_pack("{s:[{s:s, s:s}]}", "probes", "backend", "cuda", "seconds", "long");
	assert_int_equal(runtime_loader_decode(details, &rf, err, sizeof(err)), -1);
	assert_string_equal(err, "runtime.loader: probe 1: \"seconds\" is not a number");
	json_decref(details);
	details = json_pack("{s:[], s:s}", "measured", "tolerance_percent", "15");
	assert_int_equal(runtime_performance_decode(details, &rf, err, sizeof(err)), -1);
	assert_string_equal(err, "runtime.performance: \"tolerance_percent\" is not a number");
	json_decref(details);
	runtime_facts_release(&rf);

	/* a run is paired by the child's backend when the check named none, and
	 * dropped with neither; a figure set without an index is its position's */
	details = json_pack("{s:[{s:f}, {s:f, s:{s:s, s:s}}]}", "probes", "seconds", 1.0, "seconds", 1.0, "result",
			    "backend", "level-zero", "driver_version", "1.3");
	assert_int_equal(runtime_loader_decode(details, &rf, err, sizeof(err)), 0);
	assert_int_equal(rf.n_probes, 1);
	assert_string_equal(rf.probes[0].backend, "level-zero");
	assert_string_equal(rf.probes[0].driver_version, "1.3");
	json_decref(details);
	details = json_pack("{s:[{s:s}, {s:s}]}", "measured", "backend", "cuda", "backend", "cuda");
	assert_int_equal(runtime_performance_decode(details, &rf, err, sizeof(err)), 0);
	assert_int_equal(rf.figures[1].index, 1);
	assert_int_equal(rf.figures[1].vendor_id, -1);
	assert_false(rf.figures[1].has_bandwidth);
	runtime_facts_release(&rf);
	json_decref(details);

	/* details that are not an object */
	details = json_string("x");
	assert_int_equal(devices_facts_decode(details, &df, err, sizeof(err)), -1);
	assert_string_equal(err, "devices.gpus: its details are not an object");
	json_decref(details);
}

/* --- diff on hand-built facts --------------------------------------------- */

struct side {
	struct report_doc doc;
	struct report_check checks[2];
	const char *codes[2];
	struct relation_fact rel;
	struct package_fact pkg;
	struct gpu_fact gpu;
	struct figure_fact fig;
};

static void side_init(struct side *s, const char *path, const char *version, bool gpu_present, double bw,
		      const char *status, const char *code)
{
	memset(s, 0, sizeof(*s));
	s->pkg = (struct package_fact){ "libze1", "amd64", version, "installed", NULL, NULL };
	s->rel = (struct relation_fact){ "libze1", true, &s->pkg, 1 };
	s->gpu = (struct gpu_fact){ "0000:03:00.0", "0x8086",     "0x56a0", "0x030000", "xe",
				    "card0",        "renderD128", true,     gpu_present };
	s->fig = (struct figure_fact){ .backend = "level-zero",
				       .pci = "0000:03:00.0",
				       .name = "Arc",
				       .vendor_id = 0x8086,
				       .device_id = 0x56a0,
				       .copy_bandwidth_gbs = bw,
				       .launch_latency_us = 5 };
	s->codes[0] = code;
	s->checks[0] = (struct report_check){ "runtime.performance", status, "figures", s->codes, code ? 1 : 0 };
	s->checks[1] = (struct report_check){ "packages.installed", "pass", "all hold", NULL, 0 };
	s->doc.path = path;
	s->doc.checks = s->checks;
	s->doc.n_checks = 2;
	s->doc.packages = (struct packages_facts){ .relations = &s->rel, .n_relations = 1 };
	s->doc.devices = (struct devices_facts){ .gpus = &s->gpu, .n_gpus = 1 };
	s->doc.runtime.figures = &s->fig;
	s->doc.runtime.n_figures = 1;
	report_index(&s->doc);
}

static json_t *diff_of(struct side *a, struct side *b, double tol)
{
	json_t *d = diff_reports(&a->doc, &b->doc, tol);
	json_decref(a->doc.by_id);
	json_decref(b->doc.by_id);
	return d;
}

static const char *entry_str(json_t *d, const char *list, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(d, list), i), key));
}

static void diff_same_facts_no_regression(void **state)
{
	(void)state;
	struct side a, b;
	side_init(&a, "old.json", "1.17.0-1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1.17.0-1", true, 400, "pass", NULL);
	json_t *d = diff_of(&a, &b, 20);
	assert_false(json_is_true(json_object_get(d, "regressed")));
	assert_int_equal(json_array_size(json_object_get(d, "packages")), 0);
	assert_int_equal(json_array_size(json_object_get(d, "devices")), 0);
	assert_int_equal(json_array_size(json_object_get(d, "checks")), 0);
	json_decref(d);
}

static void diff_package_versions(void **state)
{
	(void)state;
	struct side a, b;
	side_init(&a, "old.json", "1.17.0-1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1.17.0-1+b1", true, 400, "pass", NULL);
	json_t *d = diff_of(&a, &b, 20);
	assert_string_equal(entry_str(d, "packages", 0, "package"), "libze1:amd64");
	assert_string_equal(entry_str(d, "packages", 0, "change"), "upgraded");
	json_decref(d);
	side_init(&a, "old.json", "1.17.0-1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1:1.0-1", true, 400, "pass", NULL); /* the epoch wins */
	d = diff_of(&a, &b, 20);
	assert_string_equal(entry_str(d, "packages", 0, "change"), "upgraded");
	json_decref(d);
	side_init(&a, "old.json", "1.17.0-1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1.17.0~rc1-1", true, 400, "pass", NULL); /* ~ sorts before anything */
	d = diff_of(&a, &b, 20);
	assert_string_equal(entry_str(d, "packages", 0, "change"), "downgraded");
	assert_false(json_is_true(json_object_get(d, "regressed"))); /* a version change alone is no regression */
	json_decref(d);
}

static void diff_gpu_lost_is_a_regression(void **state)
{
	(void)state;
	struct side a, b;
	side_init(&a, "old.json", "1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1", false, 400, "pass", NULL); /* not passed in any more */
	json_t *d = diff_of(&a, &b, 20);
	assert_string_equal(entry_str(d, "devices", 0, "device"), "pci 0000:03:00.0");
	assert_string_equal(entry_str(d, "devices", 0, "change"), "lost");
	assert_true(json_is_true(json_object_get(d, "regressed")));
	json_decref(d);
	/* gained: listed, no regression */
	side_init(&a, "old.json", "1", false, 400, "pass", NULL);
	side_init(&b, "new.json", "1", true, 400, "pass", NULL);
	d = diff_of(&a, &b, 20);
	assert_string_equal(entry_str(d, "devices", 0, "change"), "added");
	assert_false(json_is_true(json_object_get(d, "regressed")));
	json_decref(d);
}

static void diff_tolerance_boundary(void **state)
{
	(void)state;
	struct side a, b;
	/* exactly the tolerance worse is within it */
	side_init(&a, "old.json", "1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1", true, 320, "pass", NULL);
	json_t *d = diff_of(&a, &b, 20);
	assert_false(json_is_true(json_object_get(d, "regressed")));
	json_t *e = json_array_get(json_object_get(d, "performance"), 0);
	assert_true(fabs(json_number_value(json_object_get(e, "bandwidth_change_percent")) + 20) < 1e-9);
	json_decref(d);
	/* a little more is a regression */
	side_init(&a, "old.json", "1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1", true, 319.6, "pass", NULL);
	d = diff_of(&a, &b, 20);
	assert_true(json_is_true(json_object_get(d, "regressed")));
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(d, "performance"), 0), "regressed")));
	json_decref(d);
	/* faster is never a regression */
	side_init(&a, "old.json", "1", true, 400, "pass", NULL);
	side_init(&b, "new.json", "1", true, 900, "pass", NULL);
	d = diff_of(&a, &b, 20);
	assert_false(json_is_true(json_object_get(d, "regressed")));
	json_decref(d);
}

static void diff_newly_failing_check_and_its_codes(void **state)
{
	(void)state;
	struct side a, b;
	side_init(&a, "old.json", "1", true, 400, "warn", "runtime.performance.no_baseline");
	side_init(&b, "new.json", "1", true, 400, "fail", "runtime.performance.slow_copy");
	json_t *d = diff_of(&a, &b, 20);
	assert_true(json_is_true(json_object_get(d, "regressed")));
	assert_string_equal(entry_str(d, "checks", 0, "id"), "runtime.performance");
	assert_string_equal(entry_str(d, "checks", 0, "change"), "worse");
	json_t *e = json_array_get(json_object_get(d, "checks"), 0);
	assert_int_equal(json_array_size(json_object_get(e, "codes_added")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "codes_added"), 0)),
			    "runtime.performance.slow_copy");
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "codes_gone"), 0)),
			    "runtime.performance.no_baseline");
	json_decref(d);
	/* fail -> warn is better, no regression */
	side_init(&a, "old.json", "1", true, 400, "fail", "runtime.performance.slow_copy");
	side_init(&b, "new.json", "1", true, 400, "warn", NULL);
	d = diff_of(&a, &b, 20);
	assert_false(json_is_true(json_object_get(d, "regressed")));
	assert_string_equal(entry_str(d, "checks", 0, "change"), "better");
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(packages_round_trip),
		cmocka_unit_test(devices_round_trip),
		cmocka_unit_test(runtime_round_trip),
		cmocka_unit_test(runtime_devices_and_smoke),
		cmocka_unit_test(encodings_are_exact),
		cmocka_unit_test(nested_and_probe_members),
		cmocka_unit_test(diff_same_facts_no_regression),
		cmocka_unit_test(diff_package_versions),
		cmocka_unit_test(diff_gpu_lost_is_a_regression),
		cmocka_unit_test(diff_tolerance_boundary),
		cmocka_unit_test(diff_newly_failing_check_and_its_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
