/* gpugate bundle -o FILE.tar.gz|-: one file to attach to a bug report, for
 * Intel (Level Zero) and NVIDIA (CUDA) GPUs alike. Every
 * member has a fixed name under gpugate-bundle/. It is made to be attached
 * to a public bug report: the environment is an allow-list of the names a
 * GPU stack reads (collect_environment); secrets are removed from
 * everything (names with TOKEN, KEY, SECRET, PASSWORD; values that look
 * like credentials whatever their name; those values and the HF token
 * anywhere in the text); the kernel command line only on request
 * (--with-cmdline); no file of the HF home is read except to learn the
 * token's value so that it can be scrubbed. */
#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backend/backend.h"
#include "hf/location.h"
#include "lib/drm_nodes.h"
#include "lib/escape.h"
#include "lib/kmsg.h"
#include "lib/spawn.h"
#include "lib/util.h"
#include "operator/operator.h"
#include "provision.h"

extern char **environ;

#define PREFIX "gpugate-bundle/"

struct member {
	const char *name;
	struct strbuf text;
};

#define MAX_MEMBERS 32

struct bundle {
	struct member members[MAX_MEMBERS]; /* fixed: callers keep pointers to members */
	size_t count;
	char **secrets; /* values to scrub wherever they appear */
	size_t n_secrets;
};

static struct strbuf *add_member(struct bundle *b, const char *name)
{
	if (b->count == MAX_MEMBERS) {
		fputs("gpugate: bundle: too many members (raise MAX_MEMBERS)\n", stderr);
		abort();
	}
	struct member *m = &b->members[b->count++];
	m->name = name;
	m->text = (struct strbuf)STRBUF_INIT;
	sb_add(&m->text, "", 0);
	return &m->text;
}

static char *redact_userinfo(const char *v);

static bool secret_name(const char *name, size_t len)
{
	static const char *const words[] = { "TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL" };
	char *up = xstrndup(name, len);
	for (char *p = up; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	bool hit = false;
	for (size_t i = 0; i < ARRAY_SIZE(words) && !hit; i++)
		hit = strstr(up, words[i]) != NULL;
	free(up);
	return hit;
}

static void add_secret(struct bundle *b, const char *v)
{
	if (!v || strlen(v) < 4) /* shorter values would scrub ordinary words */
		return;
	b->secrets = xrealloc(b->secrets, (b->n_secrets + 1) * sizeof(char *));
	b->secrets[b->n_secrets++] = xstrdup(v);
}

/* Replaces every secret value in s with <redacted>. */
static void scrub(const struct bundle *b, struct strbuf *s)
{
	for (size_t i = 0; i < b->n_secrets; i++) {
		const char *needle = b->secrets[i];
		size_t nl = strlen(needle);
		if (!s->buf || !strstr(s->buf, needle))
			continue;
		struct strbuf out = STRBUF_INIT;
		const char *p = s->buf, *hit;
		while ((hit = strstr(p, needle))) {
			sb_add(&out, p, (size_t)(hit - p));
			sb_puts(&out, "<redacted>");
			p = hit + nl;
		}
		sb_puts(&out, p);
		sb_release(s);
		*s = out;
	}
}

/* user:password@ in URLs (proxies, registries) */
static char *redact_userinfo(const char *v)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = v;
	for (;;) {
		const char *scheme = strstr(p, "://");
		if (!scheme)
			break;
		const char *host = scheme + 3;
		size_t span = strcspn(host, "/@ ");
		if (host[span] == '@' && memchr(host, ':', span)) {
			sb_add(&sb, p, (size_t)(host - p));
			sb_puts(&sb, "<redacted>");
			p = host + span;
		} else {
			sb_add(&sb, p, (size_t)(host - p));
			p = host;
		}
	}
	sb_puts(&sb, p);
	return sb_detach(&sb);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The variables a GPU bug report needs: the runtimes' own (ZE_, CUDA_,
 * NVIDIA_), the Hugging Face cache's (HF_; a name with TOKEN is redacted
 * like any secret name), gpugate's, the locale and the search paths. A
 * bundle is made to be attached to a public bug report: any other
 * variable is left out, whatever it holds. */
static const char *const env_prefixes[] = { "ZE_", "CUDA_", "NVIDIA_", "HF_", "GPUGATE_", "LC_" };
static const char *const env_names[] = { "LANG", "LANGUAGE", "PATH", "LD_LIBRARY_PATH" };
#define ENV_ALLOWED_TEXT "ZE_*, CUDA_*, NVIDIA_*, HF_*, GPUGATE_*, LANG, LANGUAGE, LC_*, PATH, LD_LIBRARY_PATH"

static bool env_allowed(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_prefixes); i++)
		if (len > strlen(env_prefixes[i]) && strncmp(name, env_prefixes[i], strlen(env_prefixes[i])) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(env_names); i++)
		if (len == strlen(env_names[i]) && strncmp(name, env_names[i], len) == 0)
			return true;
	return false;
}

/* A run of token characters (base64, base64url, hex) that is long and
 * mixes upper case, lower case and digits with a high entropy: an API key
 * or a password, not a path, a version or a commit hash (hex, one case). */
static bool high_entropy_run(const char *s, size_t n)
{
	if (n < 32)
		return false;
	bool upper = false, lower = false, digit = false;
	unsigned counts[256] = { 0 };
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		upper |= c >= 'A' && c <= 'Z';
		lower |= c >= 'a' && c <= 'z';
		digit |= c >= '0' && c <= '9';
		counts[c]++;
	}
	if (!(upper && lower && digit))
		return false;
	/* Shannon entropy in bits per character: English words and
	 * identifiers stay under 4, random base64 of this length over 4.5 */
	double h = 0;
	for (size_t c = 0; c < 256; c++)
		if (counts[c]) {
			double p = (double)counts[c] / (double)n;
			h -= p * log2(p);
		}
	return h >= 4.0;
}

/* base64 and base64url characters but '-': it separates the parts of
 * UUIDs (CUDA_VISIBLE_DEVICES=GPU-8b6f...), names and versions */
static bool token_char(char c)
{
	return isalnum((unsigned char)c) || c == '+' || c == '/' || c == '=' || c == '_';
}

/* True when a value looks like a credential whatever its variable's name:
 * GitHub tokens (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), Hugging Face tokens
 * (hf_), an HTTP Authorization value (Bearer, Basic), AWS access key ids
 * (AKIA, ASIA), JWTs (eyJ...), a URL with user:password@, or a long
 * high-entropy string. */
static bool bundle_value_is_credential(const char *v)
{
	static const char *const prefixes[] = { "ghp_",        "gho_", "ghu_",   "ghs_", "ghr_",
						"github_pat_", "hf_",  "glpat-", "xox" };
	for (const char *p = v; *p; p++) {
		bool at_start = p == v || !isalnum((unsigned char)p[-1]);
		for (size_t i = 0; at_start && i < ARRAY_SIZE(prefixes); i++) {
			size_t k = strlen(prefixes[i]), run = 0;
			if (strncmp(p, prefixes[i], k) != 0)
				continue;
			while (token_char(p[k + run]))
				run++;
			if (run >= 16)
				return true;
		}
		if (at_start &&
		    (strncmp(p, "Bearer ", 7) == 0 || strncmp(p, "Basic ", 6) == 0 || strncmp(p, "bearer ", 7) == 0))
			return true;
		if (at_start && (strncmp(p, "AKIA", 4) == 0 || strncmp(p, "ASIA", 4) == 0)) {
			size_t run = 0;
			while ((p[4 + run] >= 'A' && p[4 + run] <= 'Z') || (p[4 + run] >= '0' && p[4 + run] <= '9'))
				run++;
			if (run == 16)
				return true;
		}
		if (at_start && strncmp(p, "eyJ", 3) == 0) { /* a JWT: base64url({"...) . ... . ... */
			const char *dot = strchr(p, '.');
			if (dot && dot[1] && strchr(dot + 1, '.'))
				return true;
		}
	}
	char *no_userinfo = redact_userinfo(v);
	bool userinfo = strcmp(no_userinfo, v) != 0;
	free(no_userinfo);
	if (userinfo)
		return true;
	for (const char *p = v; *p;) {
		size_t n = 0;
		while (token_char(p[n]))
			n++;
		/* a path's parts are split at / too: /usr/lib/x86_64-linux-gnu is no key */
		size_t parts = 0;
		for (size_t i = 0; i < n; i++)
			parts += p[i] == '/';
		if (parts < 2 && high_entropy_run(p, n))
			return true;
		p += n ? n : 1;
	}
	return false;
}

/* environment.txt: the variables on the allow-list, a secret name or a
 * value that looks like a credential redacted; the others counted only. */
static void collect_environment(struct bundle *b, struct strbuf *index)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **sorted = xcalloc(n + 1, sizeof(char *));
	memcpy(sorted, environ, n * sizeof(char *));
	qsort(sorted, n, sizeof(char *), cmp_str);
	struct strbuf *out = add_member(b, "environment.txt");
	sb_puts(out, "# the environment of gpugate bundle: only the variables named " ENV_ALLOWED_TEXT ";\n"
		     "# the value of a name with TOKEN, KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL, and any value\n"
		     "# that looks like a credential (a GitHub, Hugging Face or AWS key, Bearer, a JWT, user:pass@,\n"
		     "# a long random string), is replaced by <redacted>\n");
	size_t shown = 0, redacted = 0, left_out = 0;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(sorted[i], '=');
		size_t len = eq ? (size_t)(eq - sorted[i]) : strlen(sorted[i]);
		if (!env_allowed(sorted[i], len)) {
			left_out++;
			continue;
		}
		shown++;
		if (secret_name(sorted[i], len) || (eq && bundle_value_is_credential(eq + 1))) {
			escape_add_n(out, sorted[i], len, ESCAPE_LINE);
			sb_puts(out, "=<redacted>\n");
			redacted++;
		} else {
			escape_add(out, sorted[i], ESCAPE_LINE); /* a newline in a value forges no line */
			sb_puts(out, "\n");
		}
	}
	sb_printf(out, "# %zu other %s left out (not on the list above)\n", left_out,
		  count_noun(left_out, "variable", "variables"));
	sb_printf(index, "environment.txt: %zu %s named " ENV_ALLOWED_TEXT " (%zu redacted); %zu %s left out\n", shown,
		  count_noun(shown, "variable", "variables"), redacted, left_out,
		  count_noun(left_out, "other", "others"));
	free(sorted);
}

/* What one command printed, for spawn_run's callback: each stream kept up
 * to 32 MiB (a runaway tool does not fill the memory). */
struct capture {
	struct strbuf *out, *err;
};

static void on_output(void *arg, enum spawn_stream stream, const char *buf, size_t len)
{
	struct capture *c = arg;
	struct strbuf *sb = stream == SPAWN_OUT ? c->out : c->err;
	if (sb->len < (32u << 20))
		sb_add(sb, buf, len);
}

/* Runs argv with stdout and stderr captured (lib/spawn.h, the helper the
 * probe parent uses), killed with its process group after timeout seconds.
 * 0, or -1 when it could not start (the reason in err). */
static int run_capture(char *const argv[], char *const envp[], double timeout, struct strbuf *out, struct strbuf *err,
		       int *status)
{
	struct capture cap = { out, err };
	struct spawn_child child = { .argv = argv, .envp = envp, .on_data = on_output, .arg = &cap };
	spawn_run(&child, 1, monotonic_seconds() + timeout);
	if (child.error[0]) {
		sb_printf(err, "cannot run %s: %s\n", argv[0], child.error);
		return -1;
	}
	if (child.killed)
		sb_printf(err, "\n[gpugate bundle: killed after %.0f s]\n", timeout);
	*status = child.exit_code >= 0 ? child.exit_code : 128 + child.signal;
	return 0;
}

static char *find_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		char *c = xasprintf("%.*s/%s", (int)len, p, prog);
		if (len && access(c, X_OK) == 0)
			return c;
		free(c);
		p += len;
		if (*p == ':')
			p++;
	}
	return NULL;
}

static void describe_status(struct strbuf *sb, int status)
{
	if (status > 128)
		sb_printf(sb, "killed by signal %d", status - 128);
	else
		sb_printf(sb, "exit %d", status);
}

static void copy_file(struct bundle *b, const char *name, const char *path);

/* What the bundle was asked for. */
struct bundle_options {
	const char *output;  /* "-": standard output */
	const char *spec;    /* the report's spec, or NULL */
	const char *profile; /* the report's profile (default validate) */
	const char *backend; /* auto, level-zero or cuda */
	bool with_cmdline;   /* /proc/cmdline too (--with-cmdline) */
};

static void collect_report(struct bundle *b, const char *gpugate, const struct bundle_options *o, struct strbuf *index)
{
	struct strbuf *json = add_member(b, "report.json");
	struct strbuf *log = add_member(b, "report-stderr.txt");
	char *argv[] = { (char *)gpugate,
			 "check",
			 o->spec ? "--spec" : "--profile",
			 (char *)(o->spec ? o->spec : o->profile),
			 "--format",
			 "json",
			 NULL };
	int status = 0;
	int rc = run_capture(argv, NULL, 330, json, log, &status);
	sb_printf(index, "report.json: gpugate check %s %s --format json: ", argv[2], argv[3]);
	if (rc < 0)
		sb_printf(index, "could not run %s\n", gpugate);
	else
		describe_status(index, status), sb_puts(index, "\n");
	if (o->spec)
		copy_file(b, "spec.yaml", o->spec);
}

/* GPU-related packages of no one vendor; each vendor's own (its stack and
 * what a bug report about it wants beside) are its entry's (src/vendor/). */
static const char *const gpu_packages[] = {
	"libopencl*",   "ocl-icd*", "opencl-*", "clinfo",  "mesa-*",         "libgl1-mesa*",          "libegl-mesa*",
	"libglx-mesa*", "libdrm*",  "libva*",   "libtbb*", "linux-firmware", "firmware-misc-nonfree", "vulkan-tools",
};

static bool gpu_package(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_packages); i++)
		if (fnmatch(gpu_packages[i], name, 0) == 0)
			return true;
	for (size_t v = 0; vendors[v]; v++) {
		if (vendor_owns_package(vendors[v], name))
			return true;
		for (const char *const *g = vendors[v]->bundle_packages; g && *g; g++)
			if (fnmatch(*g, name, 0) == 0)
				return true;
	}
	return false;
}

static void collect_packages(struct bundle *b, struct strbuf *index)
{
	struct strbuf *out = add_member(b, "packages.txt");
	char *dq = find_in_path("dpkg-query");
	if (!dq) {
		sb_puts(out, "# dpkg-query not found: not a Debian-based image\n");
		sb_puts(index, "packages.txt: no dpkg-query\n");
		return;
	}
	char *argv[] = { dq, "-W", "-f", "${Package}\t${Version}\t${Architecture}\t${db:Status-Abbrev}\n", NULL };
	struct strbuf all = STRBUF_INIT, err = STRBUF_INIT;
	int status = 0;
	run_capture(argv, NULL, 60, &all, &err, &status);
	sb_puts(out, "# GPU-related Debian packages: name, version, architecture, status\n");
	size_t kept = 0;
	for (char *line = all.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *tab = strchr(line, '\t');
		if (tab) {
			*tab = '\0';
			if (gpu_package(line)) {
				sb_printf(out, "%s\t%s\n", line, tab + 1);
				kept++;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (err.len)
		sb_printf(out, "# dpkg-query said: %s\n", err.buf);
	sb_printf(index, "packages.txt: %zu GPU-related packages\n", kept);
	sb_release(&all);
	sb_release(&err);
	free(dq);
}

static void mode_string(mode_t m, char out[11])
{
	out[0] = S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : '-';
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (m & (1u << (8 - i))) ? rwx[i] : '-';
	out[10] = '\0';
}

/* scandir(3)'s filters and order: a folder's names, in byte order (the
 * bundle reads the same on every locale). */
static int not_dots(const struct dirent *e)
{
	return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

static int not_hidden(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void list_dir(struct strbuf *out, const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, not_dots, by_name);
	if (n < 0) {
		sb_printf(out, "# %s: %s\n", dir, strerror(errno));
		return;
	}
	sb_printf(out, "%s:\n", dir);
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char *path = xasprintf("%s/%s", dir, name);
		struct stat st;
		if (lstat(path, &st) < 0) {
			sb_printf(out, "  %s: %s\n", name, strerror(errno));
		} else {
			char mode[11];
			mode_string(st.st_mode, mode);
			struct group *g = getgrgid(st.st_gid);
			sb_printf(out, "  %s uid=%u gid=%u(%s)", mode, (unsigned)st.st_uid, (unsigned)st.st_gid,
				  g ? g->gr_name : "?");
			if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
				sb_printf(out, " %u:%u", major(st.st_rdev), minor(st.st_rdev));
			sb_puts(out, " ");
			escape_add(out, name, ESCAPE_LINE);
			char target[PATH_MAX];
			ssize_t k = S_ISLNK(st.st_mode) ? readlink(path, target, sizeof(target) - 1) : -1;
			if (k > 0) {
				target[k] = '\0';
				sb_puts(out, " -> ");
				escape_add(out, target, ESCAPE_LINE);
			}
			sb_puts(out, "\n");
		}
		free(path);
		free(names[i]);
	}
	free(names);
}

static void collect_dri(struct bundle *b)
{
	struct strbuf *out = add_member(b, "dev-dri.txt");
	list_dir(out, "/dev/dri");
	list_dir(out, "/dev/dri/by-path");
	sb_printf(out, "\nthis process: uid=%u gid=%u groups=", (unsigned)getuid(), (unsigned)getgid());
	gid_t groups[256];
	int n = getgroups(256, groups);
	for (int i = 0; i < n; i++)
		sb_printf(out, "%s%u", i ? "," : "", (unsigned)groups[i]);
	sb_puts(out, "\n");
}

/* The GPUs as lib/drm_nodes.c finds them (the devices checks' scan, with
 * NVIDIA's /proc/driver/nvidia/gpus), and the PCI attributes a bug report
 * wants beside them. Sets seen[k] when a GPU of vendors[k] is there. */
static void collect_gpus(struct bundle *b, struct strbuf *index, bool seen[])
{
	struct strbuf *out = add_member(b, "gpus.txt");
	struct drm_scan scan;
	drm_scan("", &scan);
	vendor_scan_proc("", &scan, NULL);
	if (scan.error)
		sb_printf(out, "# %s: %s\n", scan.class_dir, strerror(scan.error));
	for (size_t i = 0; i < scan.problem_count; i++)
		sb_printf(out, "# %s\n", scan.problems[i]);
	for (size_t i = 0; i < scan.count; i++) {
		const struct drm_gpu *g = &scan.gpus[i];
		for (size_t k = 0; vendors[k]; k++)
			seen[k] |= vendors[k] == vendor_by_pci(g->vendor);
		const char *vendor = vendor_label(g->vendor);
		sb_printf(out, "[%s]\n  vendor: 0x%04x%s%s\n  device: 0x%04x\n  class: 0x%06x\n  driver: %s\n", g->bdf,
			  g->vendor, vendor ? " " : "", vendor ? vendor : "", g->device, g->class,
			  g->driver[0] ? g->driver : "(none bound)");
		if (g->card.name[0])
			sb_printf(out, "  card: %s %u:%u\n", g->card.name, g->card.major, g->card.minor);
		if (g->render.name[0])
			sb_printf(out, "  render: %s %u:%u\n", g->render.name, g->render.major, g->render.minor);
		if (g->from_proc)
			sb_printf(out, "  (from %s: no sysfs entry)\n", vendor_by_pci(g->vendor)->proc_gpus);
		static const char *const attrs[] = { "subsystem_vendor", "subsystem_device",   "revision",
						     "numa_node",        "current_link_speed", "current_link_width",
						     "max_link_speed",   "max_link_width" };
		for (size_t k = 0; k < ARRAY_SIZE(attrs); k++) {
			char *p = xasprintf("/sys/bus/pci/devices/%s/%s", g->bdf, attrs[k]);
			char v[256];
			if (read_line_file(p, v, sizeof(v)) == 0) {
				text_sanitize(v);
				sb_printf(out, "  %s: %s\n", attrs[k], v);
			}
			free(p);
		}
	}
	sb_printf(index, "gpus.txt: %zu %s\n", scan.count, count_noun(scan.count, "GPU", "GPUs"));
	drm_scan_free(&scan);
}

static void copy_file(struct bundle *b, const char *name, const char *path)
{
	struct strbuf *out = add_member(b, name);
	char *content = NULL;
	size_t len = 0;
	int rc = read_file_max(path, 16u << 20, &content, &len);
	if (rc < 0) {
		sb_printf(out, "# %s: %s\n", path, strerror(-rc));
		return;
	}
	sb_add(out, content, len);
	free(content);
}

/* The kernel log's signs of a sick GPU, read by lib/kmsg.c as the
 * system.kernel_log check reads them (the same patterns). */
static void collect_kernel_log(struct bundle *b, struct strbuf *index)
{
	struct strbuf *out = add_member(b, "kernel-gpu.txt");
	struct kmsg_scan scan;
	int rc = kmsg_scan("/dev/kmsg", monotonic_seconds() + 10, &scan);
	if (rc < 0) {
		sb_printf(out, "# /dev/kmsg: %s (needs CAP_SYSLOG or dmesg_restrict=0)\n", strerror(-rc));
		sb_printf(index, "kernel-gpu.txt: kernel log not readable (%s)\n", strerror(-rc));
		return;
	}
	sb_printf(out, "# /dev/kmsg: %zu %s read%s; lines matching the GPU failure patterns of system.kernel_log:\n",
		  scan.records, count_noun(scan.records, "record", "records"),
		  scan.stopped_early ? " (stopped early: size cap or deadline)" : "");
	for (size_t i = 0; kmsg_patterns[i]; i++)
		sb_printf(out, "#   %s\n", kmsg_patterns[i]);
	size_t kept = scan.match_count < KMSG_MAX_KEPT ? scan.match_count : KMSG_MAX_KEPT;
	for (size_t i = 0; i < kept; i++)
		sb_printf(out, "%s\n", scan.matches[i].line);
	if (scan.match_count > kept)
		sb_printf(out, "# ... and %zu more\n", scan.match_count - kept);
	sb_printf(index, "kernel-gpu.txt: %zu GPU failure %s in %zu kernel log %s\n", scan.match_count,
		  count_noun(scan.match_count, "line", "lines"), scan.records,
		  count_noun(scan.records, "record", "records"));
	kmsg_scan_free(&scan);
}

/* The variables that make a Level Zero loader say what it does: the debug
 * trace on stderr (ZE_LOADER_DEBUG_TRACE: lines, loaders after 1.8), the
 * spdlog file log (newer loaders, into ZEL_LOADER_LOG_DIR), and the dynamic
 * linker's library search, the only record that Debian 12's loader 1.8.12
 * (which has neither) leaves of the drivers it tried. */
static const char *const loader_debug_vars[] = {
	"ZE_ENABLE_LOADER_DEBUG_TRACE",
	"ZEL_ENABLE_LOADER_LOGGING",
	"ZEL_LOADER_LOGGING_LEVEL",
	"ZEL_LOADER_LOG_DIR",
	"ZEL_LOADER_LOG_FILE",
	"LD_DEBUG",
	"LD_DEBUG_OUTPUT",
};

static bool is_loader_debug_var(const char *entry)
{
	for (size_t i = 0; i < ARRAY_SIZE(loader_debug_vars); i++) {
		size_t n = strlen(loader_debug_vars[i]);
		if (strncmp(entry, loader_debug_vars[i], n) == 0 && entry[n] == '=')
			return true;
	}
	return false;
}

/* "library":"PATH" from the probe's result line, or NULL. */
static char *loader_library(const char *stage_log)
{
	const char *key = strstr(stage_log, "\"library\":\"");
	if (!key)
		return NULL;
	key += strlen("\"library\":\"");
	size_t n = strcspn(key, "\"\n");
	return key[n] == '"' ? xstrndup(key, n) : NULL;
}

/* Whether the loader file names either variable (it reads only those it
 * names), from one read of the file. */
static bool library_mentions(const char *path, const char *word, const char *other)
{
	char *content = NULL;
	size_t len = 0;
	bool hit = read_file(path, &content, &len) == 0 &&
		   (memmem(content, len, word, strlen(word)) || memmem(content, len, other, strlen(other)));
	free(content);
	return hit;
}

/* The runtime probe once, as the runtime check runs it (level-zero backend,
 * smoke kernel), with every loader debug output on: its stage log goes into
 * probe.txt, the loader's debug output into ze-loader-debug.txt, the rest of
 * its stderr into probe-stderr.txt. */
static void collect_probe_log(struct bundle *b, const char *gpugate, struct strbuf *index)
{
	struct strbuf *out = add_member(b, "probe.txt");
	struct strbuf *err = add_member(b, "probe-stderr.txt");
	struct strbuf *dbg = add_member(b, "ze-loader-debug.txt");
	char logdir[] = "/tmp/gpugate-bundle-zel.XXXXXX";
	if (!mkdtemp(logdir)) {
		sb_printf(dbg, "# cannot make a folder for the loader's log: %s\n", strerror(errno));
		logdir[0] = '\0';
	}
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + ARRAY_SIZE(loader_debug_vars) + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_loader_debug_var(environ[i]))
			env[k++] = environ[i];
	char *dir_var = xasprintf("ZEL_LOADER_LOG_DIR=%s", logdir[0] ? logdir : "/nonexistent");
	env[k++] = "ZE_ENABLE_LOADER_DEBUG_TRACE=1";
	env[k++] = "ZEL_ENABLE_LOADER_LOGGING=1";
	env[k++] = "ZEL_LOADER_LOGGING_LEVEL=trace";
	env[k++] = dir_var;
	env[k++] = "LD_DEBUG=libs";
	char *argv[] = { (char *)gpugate, "probe", "--backend", "level-zero", "--smoke", "--fd", "1", NULL };
	struct strbuf raw = STRBUF_INIT;
	int status = 0;
	int rc = run_capture(argv, env, 60, out, &raw, &status);
	free(env);
	free(dir_var);
	sb_add(&raw, "", 0);
	/* sort stderr: the loader's trace, the linker's search (from the moment
	 * the loader is looked for: gpugate's own libraries are no news), the rest */
	struct strbuf trace = STRBUF_INIT, search = STRBUF_INIT;
	bool loader_seen = false;
	size_t n_trace = 0, n_search = 0;
	for (char *line = raw.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
		const char *p = line + strspn(line, " ");
		size_t digits = strspn(p, "0123456789");
		bool ld = digits > 0 && p[digits] == ':' && p[digits + 1] == '\t';
		if (str_starts_with(line, "ZE_LOADER_DEBUG_TRACE")) {
			sb_add(&trace, line, len);
			n_trace++;
		} else if (ld) {
			const char *msg = p + digits + 2;
			size_t msg_len = len - (size_t)(msg - line);
			if (!loader_seen && memmem(msg, msg_len, "libze_loader", strlen("libze_loader")))
				loader_seen = true;
			if (loader_seen && *msg != '\n') {
				sb_add(&search, msg, msg_len);
				n_search++;
			}
		} else {
			sb_add(err, line, len);
		}
		line = nl ? nl + 1 : NULL;
	}
	sb_release(&raw);
	char *library = loader_library(out->buf);
	sb_puts(dbg, "# Level Zero loader debug output of one run of gpugate probe --backend level-zero --smoke\n");
	sb_printf(dbg, "# loader: %s\n", library ? library : "(the probe named none: it did not load one)");
	if (library && !library_mentions(library, "ZE_ENABLE_LOADER_DEBUG_TRACE", "ZEL_ENABLE_LOADER_LOGGING"))
		sb_puts(dbg, "# this loader has no debug trace or log of its own (ZE_ENABLE_LOADER_DEBUG_TRACE and\n"
			     "# ZEL_ENABLE_LOADER_LOGGING came with later loaders); the drivers it tried are in its\n"
			     "# library search below\n");
	sb_printf(dbg, "\n## ZE_ENABLE_LOADER_DEBUG_TRACE=1: the loader's trace on stderr (%zu %s)\n", n_trace,
		  count_noun(n_trace, "line", "lines"));
	sb_add(dbg, trace.buf, trace.len);
	size_t n_log = 0;
	if (logdir[0]) {
		DIR *d = opendir(logdir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char *path = xasprintf("%s/%s", logdir, de->d_name);
			char *content = NULL;
			size_t len = 0;
			if (read_file(path, &content, &len) == 0) {
				sb_printf(dbg, "\n## ZEL_ENABLE_LOADER_LOGGING=1: the loader's log %s\n", de->d_name);
				sb_add(dbg, content, len);
				n_log++;
			}
			free(content);
			unlink(path);
			free(path);
		}
		if (d)
			closedir(d);
		rmdir(logdir);
	}
	if (!n_log)
		sb_puts(dbg, "\n## ZEL_ENABLE_LOADER_LOGGING=1: the loader wrote no log\n");
	sb_printf(dbg, "\n## LD_DEBUG=libs: the library search from the loader on (%zu %s)\n", n_search,
		  count_noun(n_search, "line", "lines"));
	sb_add(dbg, search.buf, search.len);
	sb_release(&trace);
	sb_release(&search);
	free(library);
	sb_puts(index, "probe.txt: gpugate probe --backend level-zero --smoke: ");
	if (rc < 0)
		sb_puts(index, "could not run it");
	else
		describe_status(index, status);
	sb_printf(index, "\nze-loader-debug.txt: %zu loader trace %s, %zu loader %s, %zu library-search %s\n", n_trace,
		  count_noun(n_trace, "line", "lines"), n_log, count_noun(n_log, "log", "logs"), n_search,
		  count_noun(n_search, "line", "lines"));
}

/* Every file under /proc/driver/nvidia (version, params, gpus/BDF/information,
 * ...): what the NVIDIA kernel driver says about itself and each GPU. */
static void add_proc_tree(struct strbuf *out, const char *dir, int depth)
{
	struct dirent **names;
	int n = scandir(dir, &names, not_hidden, by_name);
	if (n < 0) {
		sb_printf(out, "# %s: %s%s\n", dir, strerror(errno),
			  depth == 0 ? " (no NVIDIA kernel driver, or /proc/driver/nvidia not visible here)" : "");
		return;
	}
	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4) {
			add_proc_tree(out, path, depth + 1);
		} else if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			char *content = NULL;
			size_t len = 0;
			int rc = read_file_max(path, 256u << 10, &content, &len);
			sb_printf(out, "## %s\n", path);
			if (rc < 0) {
				sb_printf(out, "# %s\n", strerror(-rc));
			} else {
				text_sanitize(content);
				sb_puts(out, content);
				if (len && content[len - 1] != '\n')
					sb_puts(out, "\n");
			}
			free(content);
		}
		free(path);
		free(names[i]);
	}
	free(names);
}

/* The CUDA side, for NVIDIA GPUs: the probe as the runtime check runs it
 * (smoke kernel, NVML telemetry and processes), the libcuda it loaded and
 * that driver's version, nvidia-smi -q (NVML's own report of every GPU's
 * state) where installed, and /proc/driver/nvidia. */
static void collect_cuda(struct bundle *b, const char *gpugate, struct strbuf *index)
{
	struct strbuf *out = add_member(b, "cuda-probe.txt");
	struct strbuf *err = add_member(b, "cuda-probe-stderr.txt");
	char *argv[] = { (char *)gpugate, "probe",       "--backend", "cuda", "--smoke",
			 "--telemetry",   "--processes", "--fd",      "1",    NULL };
	int status = 0;
	int rc = run_capture(argv, NULL, 60, out, err, &status);
	sb_puts(index, "cuda-probe.txt: gpugate probe --backend cuda --smoke --telemetry --processes: ");
	if (rc < 0)
		sb_puts(index, "could not run it\n");
	else
		describe_status(index, status), sb_puts(index, "\n");
	/* the result line names the libcuda the dynamic linker loaded */
	const char *line = out->buf ? strstr(out->buf, "\nresult {") : NULL;
	json_t *result = line ? json_loadb(line + 8, strcspn(line + 8, "\n"), 0, NULL) : NULL;
	const char *lib = json_string_value(json_object_get(result, "library"));
	const char *version = json_string_value(json_object_get(result, "driver_version"));
	if (lib)
		sb_printf(index, "libcuda: %s, driver version %s\n", lib, version ? version : "unknown");
	else
		sb_puts(index, "libcuda: not loaded (see cuda-probe.txt)\n");
	json_decref(result);

	/* the vendor's own tool's full report, and its driver's /proc folder */
	const struct vendor *v = cuda_backend.vendor;
	static char member[64], proc_member[64]; /* add_member keeps the name; called once */
	snprintf(member, sizeof(member), "%s.txt", v->telemetry_tool);
	snprintf(proc_member, sizeof(proc_member), "%s-proc.txt", v->name);
	struct strbuf *smi = add_member(b, member);
	char *tool = find_in_path(v->telemetry_tool);
	if (!tool) {
		sb_printf(smi, "# %s not found: the %s state is in cuda-probe.txt's telemetry\n", v->telemetry_tool,
			  v->telemetry_api);
		sb_printf(index, "%s: no %s\n", member, v->telemetry_tool);
	} else {
		char *smi_argv[] = { tool, (char *)v->bundle_tool_args, NULL };
		struct strbuf smi_err = STRBUF_INIT;
		rc = run_capture(smi_argv, NULL, 60, smi, &smi_err, &status);
		if (smi_err.len)
			sb_printf(smi, "\n# %s said on stderr:\n%s", v->telemetry_tool, smi_err.buf);
		sb_printf(index, "%s: %s %s: ", member, tool, v->bundle_tool_args);
		if (rc < 0)
			sb_puts(index, "could not run it\n");
		else
			describe_status(index, status), sb_puts(index, "\n");
		sb_release(&smi_err);
		free(tool);
	}
	struct strbuf *proc = add_member(b, proc_member);
	add_proc_tree(proc, v->proc_dir, 0);
	sb_printf(index, "%s: %s, %zu %s\n", proc_member, v->proc_dir, proc->len,
		  count_noun(proc->len, "byte", "bytes"));
}

static void collect_secrets(struct bundle *b)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && (secret_name(*e, (size_t)(eq - *e)) || bundle_value_is_credential(eq + 1)))
			add_secret(b, eq + 1); /* scrubbed wherever it shows up, whatever the variable */
	}
	char *token = NULL;
	char err[300];
	const char *source;
	struct hf_location loc;
	hf_location_of_environ(environ, "", false, &loc);
	if (hf_token_of_environ(environ, "", &loc, &token, &source, err, sizeof(err)) == 0 && token) {
		add_secret(b, token);
		explicit_bzero(token, strlen(token));
		free(token);
	}
	hf_location_free(&loc);
}

static la_ssize_t archive_to_memory(struct archive *a, void *arg, const void *buf, size_t len)
{
	(void)a;
	sb_add(arg, buf, len);
	return (la_ssize_t)len;
}

/* The archive is made in memory (a few MB) and written with one call that
 * knows the target: "-" is standard output, a device, FIFO or link to one
 * is written through, a regular file replaced atomically. */
static int write_archive(struct bundle *b, const char *path)
{
	struct strbuf tgz = STRBUF_INIT;
	struct archive *a = archive_write_new();
	archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1); /* no padding of the compressed stream */
	int rc = 0;
	if (archive_write_open(a, &tgz, NULL, archive_to_memory, NULL) != ARCHIVE_OK) {
		fprintf(stderr, "gpugate: bundle: %s\n", archive_error_string(a));
		archive_write_free(a);
		return -1;
	}
	time_t now = time(NULL);
	for (size_t i = 0; i < b->count && rc == 0; i++) {
		struct member *m = &b->members[i];
		scrub(b, &m->text);
		struct archive_entry *e = archive_entry_new();
		char *name = xasprintf(PREFIX "%s", m->name);
		archive_entry_set_pathname(e, name);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)m->text.len);
		archive_entry_set_mtime(e, now, 0);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    (m->text.len && archive_write_data(a, m->text.buf, m->text.len) != (la_ssize_t)m->text.len)) {
			fprintf(stderr, "gpugate: bundle: %s: %s\n", name, archive_error_string(a));
			rc = -1;
		}
		archive_entry_free(e);
		free(name);
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		fprintf(stderr, "gpugate: bundle: %s\n", archive_error_string(a));
		rc = -1;
	}
	archive_write_free(a);
	char err[4352];
	if (rc == 0 && operator_write_output(path, tgz.buf, tgz.len, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpugate: bundle: %s\n", err);
		rc = -1;
	}
	sb_release(&tgz);
	return rc;
}

static const char bundle_usage[] =
	"usage: gpugate bundle -o FILE.tar.gz|- [--spec FILE | --profile P] [--backend auto|level-zero|cuda]\n"
	"                      [--with-cmdline]\n"
	"  -o -         the archive on standard output (docker exec C gpugate bundle -o - > b.tar.gz)\n"
	"  --spec, --profile   the spec of the report inside (default: --profile validate)\n"
	"  --backend    whose runtime state to collect: level-zero (Intel), cuda (NVIDIA: NVML,\n"
	"               /proc/driver/nvidia, the loaded libcuda); auto: the GPUs found (both when none)\n"
	"  --with-cmdline  add the kernel command line (/proc/cmdline; left out unless asked: boot\n"
	"               options can carry secrets)\n"
	"The bundle is made to be attached to a public bug report. environment.txt holds only the\n"
	"variables named " ENV_ALLOWED_TEXT ",\n"
	"with the value of a secret name (TOKEN, KEY, SECRET, PASSWORD, PASSWD, CREDENTIAL) and any value\n"
	"that looks like a credential (GitHub, Hugging Face or AWS keys, Bearer, JWTs, user:pass@ in URLs,\n"
	"long random strings) replaced by <redacted>; such values and the HF token are also scrubbed from\n"
	"every other file. index.txt says what each file holds.\n";

int bundle_main(int argc, char **argv, const char *gpugate)
{
	enum { OPT_SPEC = 256, OPT_PROFILE, OPT_BACKEND, OPT_WITH_CMDLINE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "spec", required_argument, NULL, OPT_SPEC },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "with-cmdline", no_argument, NULL, OPT_WITH_CMDLINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bundle_options o = { .profile = "validate", .backend = "auto" };
	bool profile_given = false;
	opterr = 0;
	optind = 1;
	static const char optstring[] = ":o:h";
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case OPT_SPEC:
			o.spec = optarg;
			break;
		case OPT_PROFILE:
			if (strcmp(optarg, "healthcheck") && strcmp(optarg, "ci") && strcmp(optarg, "validate"))
				return usage_error(
					"bundle: --profile: unknown profile '%s' (healthcheck, ci, validate)", optarg);
			o.profile = optarg;
			profile_given = true;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "auto") != 0 && !backend_named(optarg))
				return usage_error("bundle: --backend: '%s' is not auto, level-zero or cuda", optarg);
			o.backend = optarg;
			break;
		case OPT_WITH_CMDLINE:
			o.with_cmdline = true;
			break;
		case 'h':
			fputs(bundle_usage, stdout);
			return PROV_OK;
		default: /* '?' or ':' */
			return usage_bad_option("bundle", argv, optstring, longopts);
		}
	}
	if (optind < argc)
		return usage_error("bundle: unexpected argument '%s'", argv[optind]);
	if (!o.output)
		return usage_error("bundle: -o FILE.tar.gz is required (-o - for standard output)");
	/* before the minutes of collecting: gzip bytes would garble the terminal */
	if (strcmp(o.output, "-") == 0 && isatty(STDOUT_FILENO))
		return usage_error("bundle: -o - writes a gzip archive, and standard output is a terminal: "
				   "redirect it (gpugate bundle -o - > bundle.tar.gz) or give -o FILE.tar.gz");
	if (o.spec && profile_given)
		return usage_error("bundle: --spec and --profile both name the report's spec: give one");
	if (o.spec && strcmp(o.spec, "-") == 0)
		return usage_error(
			"bundle: --spec -: the bundle runs the checks and keeps a copy of the spec, so standard input cannot be its spec: give a file (--spec FILE)");
	if (o.spec && access(o.spec, R_OK) < 0)
		return usage_error("bundle: --spec %s: %s", o.spec, strerror(errno));
	struct bundle b;
	memset(&b, 0, sizeof(b));
	collect_secrets(&b);
	struct strbuf index = STRBUF_INIT;
	struct utsname u;
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	sb_printf(&index, "gpugate bundle %s, made %s\n", GPUGATE_VERSION, when);
	if (uname(&u) == 0)
		sb_printf(&index, "kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	sb_puts(&index, "\n");
	collect_report(&b, gpugate, &o, &index);
	collect_environment(&b, &index);
	collect_packages(&b, &index);
	collect_dri(&b);
	bool seen[8] = { false };
	collect_gpus(&b, &index, seen);
	copy_file(&b, "mountinfo.txt", "/proc/self/mountinfo");
	copy_file(&b, "os-release.txt", "/etc/os-release");
	if (o.with_cmdline) /* boot options can carry secrets (an iSCSI password, a disk key): asked for only */
		copy_file(&b, "cmdline.txt", "/proc/cmdline");
	sb_puts(&index, o.with_cmdline
				? "cmdline.txt: /proc/cmdline (--with-cmdline)\n"
				: "cmdline.txt: not collected (the kernel command line: --with-cmdline adds it)\n");
	collect_kernel_log(&b, &index);
	bool automatic = strcmp(o.backend, "auto") == 0;
	/* --backend auto: the backends of the vendors whose GPUs were found;
	 * no GPU seen: every backend, for what each runtime says about that */
	bool run[8] = { false }, no_gpu = true;
	size_t nrun = 0;
	for (size_t k = 0; k < 8 && backends[k]; k++)
		for (size_t v = 0; vendors[v]; v++)
			no_gpu &= !(seen[v] && backends[k]->vendor == vendors[v]);
	struct strbuf names = STRBUF_INIT;
	const struct backend *chosen = backend_named(o.backend); /* NULL: auto */
	for (size_t k = 0; k < 8 && backends[k]; k++) {
		bool found = no_gpu;
		for (size_t v = 0; vendors[v]; v++)
			found |= seen[v] && backends[k]->vendor == vendors[v];
		run[k] = automatic ? found : chosen == backends[k];
		if (run[k])
			nrun++;
	}
	for (size_t k = 0, i = 0; k < 8 && backends[k]; k++)
		if (run[k])
			sb_printf(&names, "%s%s", i++ ? (i == nrun ? " and " : ", ") : "", backends[k]->name);
	if (automatic)
		sb_printf(&index, "backends: %s (--backend auto: %s)\n", names.len ? names.buf : "none",
			  no_gpu ? "no GPU found, so both" : "the vendors of the GPUs found");
	sb_release(&names);
	for (size_t k = 0; k < 8 && backends[k]; k++)
		if (run[k] && backends[k] == &ze_backend)
			collect_probe_log(&b, gpugate, &index);
		else if (run[k] && backends[k] == &cuda_backend)
			collect_cuda(&b, gpugate, &index);
	struct strbuf *idx = add_member(&b, "index.txt");
	sb_add(idx, index.buf, index.len);
	sb_release(&index);
	int rc = write_archive(&b, o.output);
	if (rc == 0)
		fprintf(stderr, "gpugate: wrote %s (%zu %s under " PREFIX ")\n",
			strcmp(o.output, "-") ? o.output : "the bundle to standard output", b.count,
			count_noun(b.count, "file", "files"));
	for (size_t i = 0; i < b.count; i++)
		sb_release(&b.members[i].text);
	for (size_t i = 0; i < b.n_secrets; i++) {
		explicit_bzero(b.secrets[i], strlen(b.secrets[i]));
		free(b.secrets[i]);
	}
	free(b.secrets);
	return rc == 0 ? PROV_OK : PROV_FAILED;
}
