/* The probe's plan (src/backend/probe_plan.h) built by hand, with no
 * context: what probe_plan_resolve() makes of a root and an environment
 * (backends, libraries, children per backend, the state folder), the
 * session's children run from it (this binary stands in for `gpugate probe`:
 * the parent execs /proc/self/exe, and main() below answers "probe"), and
 * the state cache's staleness decision (probe_cache_stale) on each thing the
 * stack identity stands for, and on the kernel log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/probe_cache.h"
#include "backend/probe_plan.h"
#include "backend/session.h"
#include "backend/stack_identity.h"
#include "lib/util.h"

/* The stand-in probe child: says on stdout how it was started, logs its
 * device to $STAND_IN_LOG, and on fd 3 enumerates $STAND_IN_COUNT devices
 * (default 1) and reports its own; with $STAND_IN_FAIL it fails in init. */
static int stand_in(int argc, char **argv)
{
	const char *backend = "", *device = "-1";
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--backend"))
			backend = argv[i + 1];
		if (!strcmp(argv[i], "--device"))
			device = argv[i + 1];
	}
	printf("argv0=%s\n", argv[0]);
	fflush(stdout);
	const char *log = getenv("STAND_IN_LOG");
	int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT, 0600) : -1;
	if (fd >= 0) {
		dprintf(fd, "%s %s\n", backend, device);
		close(fd);
	}
	if (getenv("STAND_IN_FAIL")) {
		dprintf(3, "stage init\nresult {\"ok\":false,\"backend\":\"%s\",\"stage\":\"init\",\"error\":\"X\"}\n",
			backend);
		return 3;
	}
	const char *count = getenv("STAND_IN_COUNT");
	dprintf(3, "stage devices\nenumerated {\"device_count\":%s,\"devices\":[{\"index\":%s}]}\n",
		count ? count : "1", device);
	dprintf(3, "result {\"ok\":true,\"backend\":\"%s\",\"devices\":[{\"index\":%s}]}\n", backend, device);
	return 0;
}

static char tmp[64], root[128];

static char *at(const char *rel)
{
	static char path[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmp, rel);
	return path[k];
}

static void put(const char *rel, const char *text)
{
	char *path = at(rel);
	for (char *s = strchr(path + strlen(tmp) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0700);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int unlink_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int make_root(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/gpugate-plan-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(root, sizeof(root), "%s/root", tmp);
	put("root/usr/lib/x86_64-linux-gnu/libcuda.so.1", "a stand-in: found, never loaded here\n");
	put("root/usr/lib/x86_64-linux-gnu/libze_loader.so.1", "a stand-in\n");
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof(name), "root/dev/nvidia%d", i);
		put(name, "");
	}
	put("root/dev/nvidiactl", ""); /* not a GPU: no digits */
	put("root/dev/dri/renderD128", "");
	put("root/dev/dri/renderD129", "");
	put("root/dev/dri/card0", "");
	put("root/dev/dri/renderD130.bak", ""); /* not a node: digits, then more */
	put("root/etc/ld.so.cache", "cache\n");
	put("root/proc/sys/kernel/random/boot_id", "11111111-aaaa\n");
	put("root/dev/kmsg", "6,5,100,-;Linux version 6.8.0\n");
	/* a render node bound to i915, as sysfs links it */
	put("root/sys/devices/pci0000:00/0000:03:00.0/x", "");
	put("root/sys/bus/pci/drivers/i915/x", "");
	put("root/sys/module/i915/version", "1.0\n");
	put("root/sys/class/drm/renderD128/x", "");
	assert_int_equal(
		symlink("../../../devices/pci0000:00/0000:03:00.0", at("root/sys/class/drm/renderD128/device")), 0);
	assert_int_equal(
		symlink("../../../bus/pci/drivers/i915", at("root/sys/devices/pci0000:00/0000:03:00.0/driver")), 0);
	assert_int_equal(mkdir(at("xdg"), 0700), 0);
	return 0;
}

static int remove_root(void **state)
{
	(void)state;
	return nftw(tmp, unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A plan as runtime_prepare would fill it, with env (NULL-terminated) and
 * the root made above. */
static struct probe_plan plan_of(char **env)
{
	return (struct probe_plan){ .root = root,
				    .env = env,
				    .self_exe = "gpugate-by-hand",
				    .vendor = &nvidia_vendor,
				    .deadline = monotonic_seconds() + 20 };
}

static const struct probe_plan_backend *planned(const struct probe_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->backends[i].be->name, name))
			return &p->backends[i];
	return NULL;
}

static size_t cuda_children(const char *visible)
{
	char xdg[600], var[600];
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", at("xdg"));
	snprintf(var, sizeof(var), "CUDA_VISIBLE_DEVICES=%s", visible ? visible : "");
	char *env[] = { xdg, visible ? var : NULL, NULL };
	struct probe_plan p = plan_of(env);
	struct probe_session_request req = { .backend = "cuda", .smoke = true };
	probe_plan_resolve(&p, &req);
	assert_int_equal(p.n, 1);
	size_t n = p.backends[0].children;
	probe_plan_release(&p);
	return n;
}

static void resolves_backends_children_and_folder(void **state)
{
	(void)state;
	char xdg[600];
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", at("xdg"));
	char *env[] = { xdg, "CUDA_VISIBLE_DEVICES=0,2", NULL };
	struct probe_plan p = plan_of(env);
	struct probe_session_request req = { .backend = "auto", .smoke = true };
	probe_plan_resolve(&p, &req);
	assert_int_equal(p.n, 2);
	const struct probe_plan_backend *ze = planned(&p, "level-zero"), *cuda = planned(&p, "cuda");
	assert_non_null(ze);
	assert_non_null(cuda);
	assert_int_equal(ze->children, 2);   /* renderD128, renderD129; card0 is no render node */
	assert_int_equal(cuda->children, 2); /* 4 nodes, the variable shows 2 */
	/* under --root the children load the root's copy, by path */
	assert_string_equal(cuda->library, at("root/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	assert_null(p.none_found);
	char want[600];
	snprintf(want, sizeof(want), "%s/gpugate", at("xdg"));
	assert_non_null(p.cache_dir); /* the smoke keeps compiled modules there */
	assert_string_equal(p.cache_dir, want);
	probe_plan_release(&p);

	/* the driver's rules, as the devices check reads them */
	assert_int_equal(cuda_children(NULL), 4);
	assert_int_equal(cuda_children("0,0"), 1); /* none visible: one child says so */
	assert_int_equal(cuda_children("4"), 1);   /* N on N GPUs */
	assert_int_equal(cuda_children("3,1,0,2"), 4);

	/* no smoke: one enumerating child per backend */
	req.smoke = false;
	p = plan_of(env);
	probe_plan_resolve(&p, &req);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.backends[0].children, 1);
	assert_int_equal(p.backends[1].children, 1);
	assert_null(p.cache_dir); /* neither cached nor smoked: no state folder */
	probe_plan_release(&p);
}

static void resolves_nothing_under_an_empty_root(void **state)
{
	(void)state;
	char xdg[600];
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s/none", at("xdg"));
	char *env[] = { xdg, NULL };
	char empty[600];
	snprintf(empty, sizeof(empty), "%s", at("xdg"));
	struct probe_plan p = plan_of(env);
	p.root = empty; /* a root with no library */
	struct probe_session_request req = { .backend = "auto", .smoke = true, .use_cache = true };
	probe_plan_resolve(&p, &req);
	assert_int_equal(p.n, 0);
	assert_non_null(strstr(p.none_found, "under --root "));
	assert_non_null(strstr(p.none_found, "libcuda.so.1 (cuda: "));
	assert_non_null(strstr(p.none_found, "libze_loader.so.1 (level-zero: "));
	assert_null(p.cache_dir); /* nothing to probe: no folder made */
	struct stat st;
	assert_int_equal(stat(at("xdg/none"), &st), -1);
	/* the session says so, with the fix of the plan's vendor */
	struct probe_session *s = probe_session_run(&p, &req);
	assert_int_equal(s->n, 0);
	assert_string_equal(s->none_found, p.none_found);
	assert_non_null(strstr(s->none_remedy, cuda_backend.missing_remedy));
	assert_null(strstr(s->none_remedy, ze_backend.missing_remedy));
	probe_session_free(s);
	probe_plan_release(&p);
}

static size_t lines_of(const char *path)
{
	char *text = NULL;
	size_t len = 0, n = 0;
	if (read_file(path, &text, &len) < 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	free(text);
	return n;
}

/* The session runs the plan's children: as many as the plan says in the
 * first round, the rest of what the runtime reports in a second, each
 * started as the plan's binary with the plan's environment. */
static void session_runs_the_plan(void **state)
{
	(void)state;
	char log[600], xdg[600];
	snprintf(log, sizeof(log), "STAND_IN_LOG=%s", at("children.log"));
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", at("xdg"));
	char *env[] = { log, xdg, "CUDA_VISIBLE_DEVICES=0,2", "STAND_IN_COUNT=3", NULL };
	struct probe_plan p = plan_of(env);
	struct probe_session_request req = { .backend = "cuda", .smoke = true };
	probe_plan_resolve(&p, &req);
	assert_int_equal(p.backends[0].children, 2);
	struct probe_session *s = probe_session_run(&p, &req);
	probe_plan_release(&p); /* the session keeps nothing of it */
	assert_int_equal(s->n, 1);
	assert_null(s->probes[0].enumeration.verdict);
	assert_int_equal(s->probes[0].n_devices, 3); /* 2 planned, 1 more in round 2 */
	assert_int_equal(lines_of(at("children.log")), 3);
	for (size_t d = 0; d < 3; d++) {
		assert_null(s->probes[0].devices[d].verdict);
		assert_non_null(strstr(s->probes[0].devices[d].output, "argv0=gpugate-by-hand"));
		assert_non_null(probe_device_result(&s->probes[0], d));
	}
	assert_true(s->cache_age < 0); /* no health check: no cached result */
	probe_session_free(s);
	unlink(at("children.log"));

	/* the plan's count is what starts: 2 children, of which the one beyond
	 * the runtime's single device is dropped */
	env[3] = "STAND_IN_COUNT=1";
	p = plan_of(env);
	probe_plan_resolve(&p, &req);
	s = probe_session_run(&p, &req);
	probe_plan_release(&p);
	assert_int_equal(lines_of(at("children.log")), 2);
	assert_int_equal(s->probes[0].n_devices, 1);
	assert_null(s->probes[0].devices[0].verdict);
	probe_session_free(s);
	unlink(at("children.log"));
}

/* The health check through the plan: a pass is stored, reused while the
 * stack stands, and dropped (the children run again) once it changed. */
static void session_reuses_the_cache_until_the_stack_changes(void **state)
{
	(void)state;
	char log[600], xdg[600];
	snprintf(log, sizeof(log), "STAND_IN_LOG=%s", at("children.log"));
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", at("xdg"));
	char *env[] = { log, xdg, NULL, NULL };
	struct probe_session_request req = { .backend = "cuda", .use_cache = true, .cache_ttl = 300 };
	for (int round = 0; round < 3; round++) {
		if (round == 1)
			env[2] = "STAND_IN_FAIL=1"; /* a fresh probe would fail now */
		if (round == 2)
			put("root/proc/sys/kernel/random/boot_id", "22222222-bbbb\n");
		struct probe_plan p = plan_of(env);
		probe_plan_resolve(&p, &req);
		struct probe_session *s = probe_session_run(&p, &req);
		probe_plan_release(&p);
		assert_string_equal(s->cache_path, at("xdg/gpugate"));
		assert_null(s->cache_note);
		if (round == 0) {
			assert_true(s->cache_age < 0);
			assert_null(s->probes[0].enumeration.verdict);
		} else if (round == 1) { /* no child ran: the cached pass */
			assert_true(s->cache_age >= 0);
			assert_null(s->probes[0].enumeration.verdict);
		} else {
			assert_string_equal(s->cache_discarded, "the machine rebooted");
			assert_true(s->cache_age < 0);
			assert_non_null(s->probes[0].enumeration.verdict);
		}
		assert_int_equal(lines_of(at("children.log")), round < 2 ? 1 : 2);
		probe_session_free(s);
	}
	put("root/proc/sys/kernel/random/boot_id", "11111111-aaaa\n");
	unlink(at("children.log"));
	unlink(at("xdg/gpugate/runtime.json"));
}

/* What probe_cache_stale says of a cached identity after one change. */
static char *stale_after(const json_t *cached, void (*change)(int undo))
{
	const struct backend *bes[] = { &cuda_backend, NULL };
	change(0);
	char *why = probe_cache_stale(root, bes, 1, cached);
	change(1);
	return why;
}

static void nothing(int undo)
{
	(void)undo;
}
/* another file in its place (the original kept aside, so that undoing it
 * gives back its very identity: inode, size, mtime) */
static void library_rewritten(int undo)
{
	char lib[600], kept[600];
	snprintf(lib, sizeof(lib), "%s", at("root/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	snprintf(kept, sizeof(kept), "%s", at("libcuda.so.1.kept"));
	if (undo) {
		assert_int_equal(rename(kept, lib), 0);
	} else {
		assert_int_equal(rename(lib, kept), 0);
		put("root/usr/lib/x86_64-linux-gnu/libcuda.so.1", "another build of the driver\n");
	}
}
static void gpu_added(int undo)
{
	if (undo)
		unlink(at("root/dev/nvidia4"));
	else
		put("root/dev/nvidia4", "");
}
static void rebooted(int undo)
{
	put("root/proc/sys/kernel/random/boot_id", undo ? "11111111-aaaa\n" : "33333333-cccc\n");
}
static void driver_updated(int undo)
{
	put("root/sys/module/i915/version", undo ? "1.0\n" : "1.1\n");
}
static void gpu_hang_logged(int undo)
{
	put("root/dev/kmsg",
	    undo ? "6,5,100,-;Linux version 6.8.0\n"
		 : "6,5,100,-;Linux version 6.8.0\n6,6,200,-;i915 0000:03:00.0: [drm] GPU HANG: ecode 1\n");
}
static void hang_before_the_mark(int undo)
{
	put("root/dev/kmsg",
	    undo ? "6,5,100,-;Linux version 6.8.0\n"
		 : "6,4,90,-;i915 0000:03:00.0: [drm] GPU HANG: ecode 1\n6,5,100,-;Linux version 6.8.0\n");
}
static void log_restarted(int undo)
{
	put("root/dev/kmsg", undo ? "6,5,100,-;Linux version 6.8.0\n" : "6,1,1,-;Linux version 6.8.0\n");
}

static void staleness_decision(void **state)
{
	(void)state;
	const struct backend *bes[] = { &cuda_backend, NULL };
	json_t *paths = json_array();
	json_array_append_new(paths, json_string(at("root/usr/lib/x86_64-linux-gnu/libcuda.so.1")));
	json_t *cached = json_object();
	json_object_set_new(cached, "stack", stack_identity(root, bes, 1, paths));
	json_object_set_new(cached, "kmsg_seq", json_integer(5));
	json_decref(paths);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(cached, "stack"), "kernel_drivers")),
			       "i915=1.0;"));

	assert_null(stale_after(cached, nothing));
	assert_null(stale_after(cached, hang_before_the_mark)); /* logged before the cached run */
	struct {
		void (*change)(int);
		const char *why;
	} cases[] = {
		{ library_rewritten, "the file " },
		{ gpu_added, "the GPU set (device nodes, PCI addresses) changed" },
		{ rebooted, "the machine rebooted" },
		{ driver_updated, "the kernel driver's version changed" },
		{ gpu_hang_logged, "the kernel log reports a GPU fault since: " },
		{ log_restarted, "the kernel log " },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *why = stale_after(cached, cases[i].change);
		assert_non_null(why);
		assert_true(str_starts_with(why, cases[i].why));
		free(why);
	}
	char *why = stale_after(cached, library_rewritten);
	assert_non_null(strstr(why, "libcuda.so.1 changed"));
	free(why);
	why = stale_after(cached, log_restarted);
	assert_non_null(strstr(why, "restarted"));
	free(why);
	/* a cached object without a kernel-log mark is judged on the stack alone */
	json_object_del(cached, "kmsg_seq");
	assert_null(stale_after(cached, gpu_hang_logged));
	json_decref(cached);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "probe") == 0)
		return stand_in(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resolves_backends_children_and_folder),
		cmocka_unit_test(resolves_nothing_under_an_empty_root),
		cmocka_unit_test(session_runs_the_plan),
		cmocka_unit_test(session_reuses_the_cache_until_the_stack_changes),
		cmocka_unit_test(staleness_decision),
	};
	return cmocka_run_group_tests(tests, make_root, remove_root);
}
