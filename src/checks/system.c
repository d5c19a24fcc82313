/* Check group `system`: the container's posture for GPU work. /sys visible
 * (why it matters is the vendor's to say: vendor_sysfs_use), the seccomp mode,
 * the capabilities whose absence breaks GPU features under Docker's default
 * seccomp profile, whether we run in a container, and (validate only) the
 * kernel log's signs of a sick GPU. Warnings, never failures, except the
 * kernel log when it is turned on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "judge_system.h"
#include "../facts/system.h"
#include "../lib/kmsg.h"
#include "../lib/util.h"
#include "../registry.h"
#include "../vendor/vendor.h"

#define SYSFS_MAGIC_NUMBER 0x62656572

static const struct spec_key system_keys[] = {
	{ "system", SPEC_MAP, SCALAR_STR, NULL, "the container's posture for GPU work", NULL, NULL },
	{ "system.kernel_log", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "scan /dev/kmsg for GPU hangs, GuC/firmware failures, forcewake timeouts, i915/xe drm errors (the validate profile turns it on)",
	  "false", NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* system.sysfs ------------------------------------------------------------ */

static void run_sysfs(const struct context *ctx, void *state, struct result *r)
{
	(void)state;
	char *sys = ctx_path(ctx, "/sys");
	char *drm = ctx_path(ctx, "/sys/class/drm");
	char *pci = ctx_path(ctx, "/sys/bus/pci/devices");
	struct stat st;
	static const char fix[] =
		"keep the host's /sys mounted in the container (Docker and Kubernetes mount it read-only by default; "
		"do not mask or replace it)";
	if (stat(sys, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* why it matters is the vendor's to say (src/vendor/) */
		const struct vendor *v = ctx->vendor ? vendor_by_name(ctx->vendor) : NULL;
		result_set(r, STATUS_WARN, "%s is not visible: %s", sys, vendor_sysfs_use(v));
		result_remedy(r, "%s", fix);
	} else {
		struct statfs fs;
		bool real_root = root_is_real(ctx->root);
		if (real_root && statfs(sys, &fs) == 0 && (unsigned long)fs.f_type != SYSFS_MAGIC_NUMBER) {
			result_finding(r, STATUS_WARN, "system.sysfs.not_sysfs",
				       "%s is not a sysfs mount (filesystem type 0x%lx)", sys,
				       (unsigned long)fs.f_type);
		}
		if (stat(pci, &st) < 0)
			result_finding(r, STATUS_WARN, "system.sysfs.no_pci",
				       "%s: %s (the driver reads /sys/bus/pci/devices/<address>/driver)", pci,
				       strerror(errno));
		if (stat(drm, &st) < 0)
			result_finding(r, STATUS_PASS, "system.sysfs.no_drm",
				       "%s: %s (no GPU kernel driver loaded, see devices.gpus)", drm, strerror(errno));
		if (r->status == STATUS_WARN) {
			result_set(r, STATUS_WARN, "%s is visible but incomplete", sys);
			result_remedy(r, "%s", fix);
		} else {
			result_set(r, STATUS_PASS, "%s is visible", sys);
		}
	}
	free(sys);
	free(drm);
	free(pci);
}

/* /proc/self/status ------------------------------------------------------- */

void system_discount_sandbox(struct proc_status *ps, int sandbox_filters)
{
	if (sandbox_filters > 0 && ps->seccomp == 2 && ps->seccomp_filters >= 0) {
		ps->seccomp_filters -= sandbox_filters;
		if (ps->seccomp_filters <= 0) {
			ps->seccomp_filters = 0;
			ps->seccomp = 0;
		}
	}
}

/* The number after "KEY:" at the start of line, in base; false when line is
 * another field or holds no number there: what sscanf(line, "KEY: %d")
 * matched, without sscanf's cost on each of the file's ~55 lines. */
static bool status_field(const char *line, const char *key, int base, unsigned long long *out)
{
	size_t n = strlen(key);
	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return false;
	const char *v = line + n + 1;
	char *end;
	*out = strtoull(v, &end, base); /* blanks first, a sign, "0x" in base 16: as %d and %llx */
	return end != v;
}

static int read_proc_status(const struct context *ctx, struct proc_status *ps, const char *path)
{
	memset(ps, 0, sizeof(*ps));
	ps->seccomp_filters = -1;
	char *text;
	size_t len;
	int err = read_file(path, &text, &len);
	if (err)
		return err;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		unsigned long long v;
		if (status_field(line, "Seccomp", 10, &v)) {
			ps->have_seccomp = true;
			ps->seccomp = (int)v;
		} else if (status_field(line, "Seccomp_filters", 10, &v)) {
			ps->seccomp_filters = (long)v;
		} else if (status_field(line, "CapEff", 16, &v)) {
			ps->have_caps = true;
			ps->cap_eff = v;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	/* gpugate's own sandbox (src/lib/sandbox.h) is not the container's
	 * filter: leave it out when reading this process's real status */
	if (root_is_real(ctx->root))
		system_discount_sandbox(ps, ctx->sandbox_filters);
	return 0;
}

/* The group's state: /proc/self/status, read once on first use by
 * system.seccomp or system.capabilities (both read it; a health check runs
 * both every 30 s). Checks run one after another on one thread. */
struct system_state {
	bool read;
	int err;
	char *path;
	struct proc_status ps;
};

static void *system_prepare(const struct context *ctx)
{
	(void)ctx;
	return xcalloc(1, sizeof(struct system_state));
}

static void system_release(void *state)
{
	struct system_state *st = state;
	free(st->path);
	free(st);
}

/* The parsed status (0), or -errno; st->path names the file either way. */
static int proc_status(const struct context *ctx, struct system_state *st)
{
	if (!st->read) {
		st->path = ctx_path(ctx, "/proc/self/status");
		st->err = read_proc_status(ctx, &st->ps, st->path);
		st->read = true;
	}
	return st->err;
}

/* system.seccomp ---------------------------------------------------------- */

void system_judge_seccomp(const struct proc_status *ps, const char *path, int sandbox_filters, struct result *r)
{
	system_seccomp_encode(result_details(r),
			      &(struct system_seccomp_fact){ ps->seccomp, ps->seccomp_filters, sandbox_filters });
	if (ps->seccomp == 0) {
		result_set(r, STATUS_PASS, "no seccomp filter");
	} else if (ps->seccomp == 2) {
		result_set(
			r, STATUS_PASS,
			"seccomp filter active (%ld %s): under Docker's default profile "
			"mbind/set_mempolicy need CAP_SYS_NICE, pidfd_getfd CAP_SYS_PTRACE, perf_event_open CAP_PERFMON "
			"(see system.capabilities)",
			ps->seccomp_filters, count_noun((size_t)ps->seccomp_filters, "filter", "filters"));
	} else if (ps->seccomp == 1) {
		result_set(
			r, STATUS_WARN,
			"seccomp strict mode: only read, write, exit and sigreturn are allowed; no GPU work can run");
		result_remedy(r, "run without strict seccomp (it is set by the program that started this one)");
	} else {
		result_set(r, STATUS_WARN, "unknown seccomp mode %d in %s", ps->seccomp, path);
	}
}

static void run_seccomp(const struct context *ctx, void *state, struct result *r)
{
	struct system_state *st = state;
	int err = proc_status(ctx, st);
	const struct proc_status ps = st->ps;
	const char *path = st->path;
	if (err) {
		result_set(r, STATUS_SKIP, "cannot read %s: %s", path, strerror(-err));
	} else if (!ps.have_seccomp) {
		result_set(r, STATUS_SKIP, "%s has no Seccomp field (kernel without seccomp)", path);
	} else {
		system_judge_seccomp(&ps, path, ctx->sandbox_filters, r);
	}
}

/* system.capabilities ----------------------------------------------------- */

#define CAP_BIT(n) (1ULL << (n))
enum { CAP_NR_SYS_PTRACE = 19, CAP_NR_SYS_ADMIN = 21, CAP_NR_SYS_NICE = 23, CAP_NR_PERFMON = 38 };

static const struct {
	const char *name;        /* as docker --cap-add spells it */
	unsigned long long bits; /* any of these grants it */
	const char *breaks;
} gpu_caps[] = {
	{ "SYS_NICE", CAP_BIT(CAP_NR_SYS_NICE),
	  "NUMA memory policy calls (mbind, set_mempolicy, get_mempolicy) used to place GPU host memory" },
	{ "SYS_PTRACE", CAP_BIT(CAP_NR_SYS_PTRACE),
	  "Level Zero IPC between processes (pidfd_getfd), used by oneCCL and multi-process PyTorch" },
	{ "PERFMON", CAP_BIT(CAP_NR_PERFMON) | CAP_BIT(CAP_NR_SYS_ADMIN),
	  "Sysman engine utilisation metrics (perf_event_open)" },
};

void system_judge_capabilities(const struct proc_status *ps, struct result *r)
{
	bool filtered = ps->have_seccomp && ps->seccomp == 2;
	struct strbuf missing = STRBUF_INIT;
	system_caps_encode(result_details(r), &(struct system_caps_fact){ ps->cap_eff });
	for (size_t i = 0; i < ARRAY_SIZE(gpu_caps); i++) {
		if (ps->cap_eff & gpu_caps[i].bits)
			continue;
		sb_printf(&missing, "%s%s", missing.len ? ", " : "", gpu_caps[i].name);
		if (filtered) {
			result_finding(r, STATUS_WARN, "system.capabilities.blocked",
				       "CAP_%s is not effective: the seccomp filter blocks %s", gpu_caps[i].name,
				       gpu_caps[i].breaks);
			result_remedy(r,
				      "docker run --cap-add %s; Kubernetes: securityContext.capabilities.add: [\"%s\"]",
				      gpu_caps[i].name, gpu_caps[i].name);
		} else {
			result_finding(
				r, STATUS_PASS, "system.capabilities.not_effective",
				"CAP_%s is not effective; with no seccomp filter the kernel's own rules apply to %s",
				gpu_caps[i].name, gpu_caps[i].breaks);
		}
	}
	if (!missing.len)
		result_set(r, STATUS_PASS, "CAP_SYS_NICE, CAP_SYS_PTRACE and CAP_PERFMON are effective");
	else if (filtered)
		result_set(r, STATUS_WARN,
			   "missing %s under a seccomp filter: the GPU features that need them will fail with EPERM",
			   missing.buf);
	else
		result_set(r, STATUS_PASS, "missing %s, but no seccomp filter blocks the calls behind them",
			   missing.buf);
	sb_release(&missing);
}

static void run_capabilities(const struct context *ctx, void *state, struct result *r)
{
	struct system_state *st = state;
	int err = proc_status(ctx, st);
	const struct proc_status ps = st->ps;
	if (err || !ps.have_caps) {
		result_set(r, STATUS_SKIP, "cannot read CapEff from %s: %s", st->path,
			   err ? strerror(-err) : "no such field");
		return;
	}
	system_judge_capabilities(&ps, r);
}

/* system.container -------------------------------------------------------- */

void system_judge_container(const struct container_signs *s, struct result *r)
{
	struct strbuf signs = STRBUF_INIT;
	const char *engine = NULL;
	const struct {
		const char *path;
		const char *engine;
	} marks[] = {
		{ s->dockerenv, "docker" },
		{ s->containerenv, "podman" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
		if (marks[i].path) {
			sb_printf(&signs, "%s%s exists", signs.len ? "; " : "", marks[i].path);
			engine = engine ? engine : marks[i].engine;
		}
	}
	if (s->env && *s->env) {
		sb_printf(&signs, "%scontainer=%.40s in the environment", signs.len ? "; " : "", s->env);
		engine = engine ? engine : s->env;
	}
	if (s->kubernetes) {
		sb_printf(&signs, "%sKUBERNETES_SERVICE_HOST is set", signs.len ? "; " : "");
		engine = "kubernetes";
	}
	if (s->cgroup_text) {
		static const char *const words[] = { "kubepods", "docker", "containerd", "libpod", "lxc" };
		for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
			if (strstr(s->cgroup_text, words[i])) {
				sb_printf(&signs, "%s%s names %s", signs.len ? "; " : "", s->cgroup, words[i]);
				engine = engine ? engine : words[i];
				break;
			}
		}
	}
	if (signs.len) /* the slop byte is never written */
		text_sanitize(signs.buf);
	system_container_encode(result_details(r), &(struct system_container_fact){ engine != NULL, engine });
	if (engine) {
		result_set(r, STATUS_PASS, "inside a container (%s): %s", engine, signs.buf);
	} else {
		result_set(r, STATUS_PASS, "not inside a container (no %s, %s, container= or container cgroup)",
			   s->dockerenv_at ? s->dockerenv_at : "/.dockerenv",
			   s->containerenv_at ? s->containerenv_at : "/run/.containerenv");
	}
	sb_release(&signs);
}

static void run_container(const struct context *ctx, void *state, struct result *r)
{
	(void)state;
	char *dockerenv = ctx_path(ctx, "/.dockerenv");
	char *containerenv = ctx_path(ctx, "/run/.containerenv");
	char *cg = ctx_path(ctx, "/proc/1/cgroup");
	char *text = NULL;
	size_t len;
	struct stat st;
	bool cgroup_read = read_file(cg, &text, &len) == 0;
	struct container_signs signs = {
		.dockerenv = stat(dockerenv, &st) == 0 ? dockerenv : NULL,
		.containerenv = stat(containerenv, &st) == 0 ? containerenv : NULL,
		.dockerenv_at = dockerenv,
		.containerenv_at = containerenv,
		.env = ctx_getenv(ctx, "container"),
		.kubernetes = ctx_getenv(ctx, "KUBERNETES_SERVICE_HOST") != NULL,
		.cgroup = cg,
		.cgroup_text = cgroup_read ? text : NULL,
	};
	system_judge_container(&signs, r);
	free(text);
	free(dockerenv);
	free(containerenv);
	free(cg);
}

/* system.kernel_log ------------------------------------------------------- */

static void run_kernel_log(const struct context *ctx, void *state, struct result *r)
{
	(void)state;
	char *path = ctx_path(ctx, "/dev/kmsg");
	struct kmsg_scan scan;
	int err = kmsg_scan(path, ctx->deadline, &scan);
	if (err == -ENOENT) {
		result_set(r, STATUS_SKIP, "%s does not exist (a container gets it with docker run --device /dev/kmsg)",
			   path);
	} else if (err == -EPERM || err == -EACCES) {
		result_set(r, STATUS_SKIP,
			   "not permitted to read %s (%s): reading the kernel log needs CAP_SYSLOG when "
			   "kernel.dmesg_restrict=1; run the validation on the host or with --cap-add SYSLOG",
			   path, strerror(-err));
	} else if (err) {
		result_set(r, STATUS_SKIP, "%s", scan.error);
	} else {
		size_t kept = scan.match_count < KMSG_MAX_KEPT ? scan.match_count : KMSG_MAX_KEPT;
		for (size_t i = 0; i < kept; i++)
			result_finding(r, STATUS_FAIL, "system.kernel_log.match", "%s (matches '%s')",
				       scan.matches[i].line, scan.matches[i].pattern);
		if (scan.match_count > kept)
			result_finding(r, STATUS_FAIL, "system.kernel_log.more", "... and %zu more matching %s",
				       scan.match_count - kept, count_noun(scan.match_count - kept, "line", "lines"));
		system_kernel_log_encode(
			result_details(r),
			&(struct system_kernel_log_fact){ scan.records, scan.stopped_early, scan.match_count });
		if (scan.match_count) {
			result_set(r, STATUS_FAIL, "%zu %s since boot %s a sick GPU (%s first)", scan.match_count,
				   count_noun(scan.match_count, "kernel log line", "kernel log lines"),
				   count_noun(scan.match_count, "shows", "show"), scan.matches[0].pattern);
			result_remedy(
				r,
				"read the full log around these lines (dmesg -T | grep -iE 'i915|xe|guc|hang'); a GuC or LMEM "
				"failure points at firmware (update linux-firmware on the host), a GPU HANG at the workload or "
				"driver; reboot the host to clear a wedged GPU before validating again");
		} else if (scan.stopped_early) {
			/* a scan cut short proved nothing about the rest: never a pass */
			result_set(r, STATUS_WARN,
				   "read %zu %s, no GPU error among them, but stopped early (the deadline "
				   "or the size cap): the rest of %s was not scanned",
				   scan.records, count_noun(scan.records, "kernel log line", "kernel log lines"), path);
			result_remedy(
				r,
				"raise --deadline, or read the log on the host (dmesg -T | grep -iE 'i915|xe|guc|hang')");
		} else {
			result_set(r, STATUS_PASS, "%zu %s read, no GPU hang, GuC, firmware or drm error", scan.records,
				   count_noun(scan.records, "kernel log line", "kernel log lines"));
		}
		if (scan.stopped_early && scan.match_count)
			result_finding(
				r, STATUS_WARN, "system.kernel_log.stopped_early",
				"the scan stopped early (the deadline or the size cap): the rest of %s was not read",
				path);
		kmsg_scan_free(&scan);
	}
	free(path);
}

static const struct check_def system_checks[] = {
	{ "system.sysfs", "/sys is visible (GPUs, their PCI devices and drivers are found through it)", NULL, false,
	  run_sysfs },
	{ "system.seccomp", "the seccomp mode from /proc/self/status", NULL, false, run_seccomp },
	{ "system.capabilities",
	  "CAP_SYS_NICE, CAP_SYS_PTRACE, CAP_PERFMON, which Docker's seccomp profile requires for GPU features", NULL,
	  false, run_capabilities },
	{ "system.container", "whether gpugate runs inside a container, and which", NULL, false, run_container },
	{ "system.kernel_log",
	  "the kernel log since boot shows no GPU hang, GuC/firmware failure, forcewake timeout or drm error",
	  "system.kernel_log", true, run_kernel_log },
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group system_group = {
	.name = "system",
	.description = "the container's posture for GPU work: /sys, seccomp, capabilities, kernel log",
	.spec_keys = system_keys,
	.prepare = system_prepare,
	.release = system_release,
	.checks = system_checks,
};
