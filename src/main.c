/* gpugate: proves a GPU container is ready before work runs on it.
 * main() picks the subcommand; `check` (the default) turns options and a
 * spec into a context, runs the checks, writes the reports and exits. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "context.h"
#include "lib/embedded.h"
#include "lib/sanitizer.h"
#include "lib/escape.h"
#include "lib/parallel.h"
#include "lib/safe_io.h"
#include "lib/timeline.h"
#include "lib/sandbox.h"
#include "lib/util.h"
#include "profile.h"
#include "registry.h"
#include "report/report.h"
#include "runner.h"
#include "spec.h"

#ifndef GPUGATE_VERSION
#define GPUGATE_VERSION "0.0.0" /* the Makefile passes VERSION */
#endif

extern char **environ;

static const char usage_text[] =
	"usage: gpugate [check] [options]       check this machine or container\n"
	"       gpugate list [--spec-keys]      every check id and the profiles; or every spec key\n"
	"       gpugate hf where|scan|verify|fetch ...\n"
	"       gpugate stack fetch|verify --manifest FILE ...   pinned driver packages\n"
	"       gpugate bundle -o FILE.tar.gz|-   diagnostics for a bug report\n"
	"       gpugate spec freeze [-o FILE] ...     a spec pinning this machine's GPU stack\n"
	"       gpugate diff OLD.json NEW.json        what changed between two JSON reports\n"
	"       gpugate serve [--listen ADDR:PORT] [--interval D] ...  the checks every interval, over HTTP\n"
	"       gpugate --version | --help\n"
	"\n"
	"check options:\n"
	"  --profile healthcheck|ci|validate   built-in spec (default ci)\n"
	"  --spec FILE.yaml                    your own spec instead of a profile ('-': standard input)\n"
	"  --vendor intel|nvidia               the GPU vendor whose pins apply (default: detected)\n"
	"  --root DIR                          read system paths under DIR instead of /\n"
	"  --format text|json|junit|prom|github|nfd  report on stdout (default text)\n"
	"  --report FORMAT:FILE                also write a report to FILE (repeatable)\n"
	"  --deadline SECONDS                  the whole run finishes by then (also 500ms, 2m)\n"
	"  --only ID[,ID]  --skip ID[,ID]      checks by id or id prefix (runtime, hf.integrity)\n"
	"  -q, --quiet                         text: the verdict line only\n"
	"  -v, --verbose                       text: what passing checks found too\n"
	"  --color=auto|always|never           colour on a terminal (auto; NO_COLOR=1 turns it off)\n"
	"  --nfd-prefix PREFIX                 nfd label namespace (default feature.node.kubernetes.io/)\n"
	"  --no-sandbox                        no seccomp filter (debugging; or GPUGATE_NO_SANDBOX=1)\n"
	"\n"
	"environment: GPUGATE_PROFILE, GPUGATE_SPEC, GPUGATE_DEADLINE apply when --profile/--spec\n"
	"  (either) or --deadline is not given, such as in a HEALTHCHECK tuned with docker run -e\n"
	"spec: --spec or --profile, else GPUGATE_SPEC or GPUGATE_PROFILE, else /etc/gpugate/gpugate.yaml\n"
	"  when it exists (under --root: ROOT/etc/...), else the ci profile\n"
	"\n"
	"exit status: 0 healthy (warnings allowed), 1 unhealthy, 3 usage or spec error\n";

/* Workers started ahead for the status file's parts (plus the main
 * thread's own part); parallel_prestart caps it at the CPUs there are. */
#define PACKAGES_WORKERS 7

struct report_request {
	char *format;
	char *path;
};

struct check_options {
	const char *profile;
	const char *spec_path;
	const char *vendor;
	const char *root;
	const char *format;
	double deadline; /* 0: from the spec or the profile */
	char **only, **skip;
	struct report_request *reports;
	size_t n_reports;
	bool no_sandbox;
	/* hidden, for gpugate serve: check the options, --root and the spec,
	 * then exit 0 without running a check (exit 3 as a run would) */
	bool preflight;
	bool quiet, verbose;
	const char *color;      /* auto, always, never */
	const char *nfd_prefix; /* with its '/', or NULL */
	char *nfd_prefix_buf;
	char *spec_path_buf; /* the system spec found under --root */
};

static double default_deadline(const char *profile)
{
	if (strcmp(profile, "healthcheck") == 0)
		return 8; /* under Docker's usual 10 s HEALTHCHECK timeout */
	if (strcmp(profile, "validate") == 0)
		return 300;
	return 60;
}

static int check_patterns(char **list, const char *option)
{
	for (char **p = list; p && *p; p++) {
		/* a group name matches too: it is a prefix of its checks' ids */
		if (!registry_find(*p)) {
			const char *near = registry_nearest_id(*p);
			return usage_error("%s: no check has the id or prefix '%s'%s%s%s (see 'gpugate list')", option,
					   *p, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
		}
	}
	return 0;
}

/* The NFD label namespace, "example.com" or "example.com/". */
static int set_nfd_prefix(struct check_options *o, const char *value, const char *where)
{
	free(o->nfd_prefix_buf);
	size_t n = strlen(value);
	o->nfd_prefix_buf = n && value[n - 1] == '/' ? xstrdup(value) : xasprintf("%s/", value);
	char why[512];
	if (!report_nfd_prefix_valid(o->nfd_prefix_buf, why, sizeof(why)))
		return usage_error("%s: %s", where, why);
	o->nfd_prefix = o->nfd_prefix_buf;
	return 0;
}

/* GPUGATE_PROFILE, GPUGATE_SPEC and GPUGATE_DEADLINE, for what the command
 * line left open (an image's HEALTHCHECK tuned with `docker run -e`).
 * Options win: --profile or --spec given means neither variable is read.
 * A value that is set but unusable is an error naming the variable, never
 * silently ignored. */
/* An environment value as an error message may show it: escaped (no
 * terminal control, no forged line) and cut at 100 bytes. Caller frees. */
static char *shown_value(const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(value);
	escape_add_n(&sb, value, n > 100 ? 100 : n, ESCAPE_LINE);
	if (n > 100)
		sb_puts(&sb, "...");
	return sb_detach(&sb);
}

/* what --deadline and GPUGATE_DEADLINE take ("positive number of seconds"
 * was wrong for 500ms and for a value past the cap) */
#define DEADLINE_WANTED "is not a duration above 0 and at most " SECONDS_MAX_TEXT " (such as 8, 500ms or 2m)"

static int env_error(const char *name, const char *value, const char *problem)
{
	char *v = shown_value(value);
	int rc = usage_error("%s: '%s' %s", name, v, problem);
	free(v);
	return rc;
}

static int options_from_environment(struct check_options *o)
{
	const char *profile = getenv("GPUGATE_PROFILE");
	const char *spec = getenv("GPUGATE_SPEC");
	const char *deadline = getenv("GPUGATE_DEADLINE");
	if (!o->profile && !o->spec_path) {
		if (profile && *profile) {
			if (!embedded_find(embedded_profiles, profile))
				return env_error("GPUGATE_PROFILE", profile,
						 "is no profile (healthcheck, ci, validate)");
			o->profile = profile;
		}
		if (spec && *spec)
			o->spec_path = spec;
	}
	if (!o->deadline && deadline && *deadline) {
		if (parse_seconds(deadline, &o->deadline) < 0 || o->deadline <= 0)
			return env_error("GPUGATE_DEADLINE", deadline, DEADLINE_WANTED);
	}
	return 0;
}

static int parse_check_options(int argc, char **argv, struct check_options *o)
{
	enum {
		OPT_PROFILE = 256,
		OPT_SPEC,
		OPT_ROOT,
		OPT_FORMAT,
		OPT_REPORT,
		OPT_DEADLINE,
		OPT_ONLY,
		OPT_SKIP,
		OPT_NO_SANDBOX,
		OPT_VENDOR,
		OPT_COLOR,
		OPT_NFD_PREFIX,
		OPT_PREFLIGHT
	};
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "spec", required_argument, NULL, OPT_SPEC },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "deadline", required_argument, NULL, OPT_DEADLINE },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "no-sandbox", no_argument, NULL, OPT_NO_SANDBOX },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "nfd-prefix", required_argument, NULL, OPT_NFD_PREFIX },
		{ "vendor", required_argument, NULL, OPT_VENDOR },
		{ "preflight", no_argument, NULL, OPT_PREFLIGHT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->format = "text";
	o->color = "auto";
	opterr = 0;
	optind = 1;
	static const char optstring[] = "+hqv";
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PROFILE:
			if (!embedded_find(embedded_profiles, optarg))
				return usage_error(
					"--profile: unknown profile '%s' (healthcheck, ci, validate; or --spec FILE)",
					optarg);
			o->profile = optarg;
			break;
		case OPT_SPEC:
			o->spec_path = optarg;
			break;
		case OPT_ROOT:
			o->root = optarg; /* looked at once the watchdog runs: a dead mount blocks */
			break;
		case OPT_FORMAT:
			if (!report_lookup(optarg))
				return usage_error("--format: unknown format '%s' (%s)", optarg, report_format_names());
			o->format = optarg;
			break;
		case OPT_REPORT: {
			const char *colon = strchr(optarg, ':');
			if (!colon || colon == optarg || !colon[1])
				return usage_error("--report wants FORMAT:FILE, such as junit:gpugate.xml, not '%s'",
						   optarg);
			char *format = xstrndup(optarg, (size_t)(colon - optarg));
			if (!report_lookup(format)) {
				usage_error("--report: unknown format '%s' (%s)", format, report_format_names());
				free(format);
				return EXIT_USAGE;
			}
			/* two reports on standard output make neither parseable */
			if (strcmp(colon + 1, "-") == 0) {
				usage_error("--report %s: standard output carries the --format report: use --format %s",
					    optarg, format);
				free(format);
				return EXIT_USAGE;
			}
			o->reports = xrealloc(o->reports, (o->n_reports + 1) * sizeof(*o->reports));
			o->reports[o->n_reports].format = format;
			o->reports[o->n_reports].path = xstrdup(colon + 1);
			o->n_reports++;
			break;
		}
		case OPT_DEADLINE:
			if (parse_seconds(optarg, &o->deadline) < 0 || o->deadline <= 0)
				return usage_error("--deadline: '%s' %s", optarg, DEADLINE_WANTED);
			break;
		case OPT_ONLY:
			free_list(o->only);
			o->only = split_list(optarg, NULL);
			if (check_patterns(o->only, "--only"))
				return EXIT_USAGE;
			break;
		case OPT_SKIP:
			free_list(o->skip);
			o->skip = split_list(optarg, NULL);
			if (check_patterns(o->skip, "--skip"))
				return EXIT_USAGE;
			break;
		case OPT_NO_SANDBOX:
			o->no_sandbox = true;
			break;
		case OPT_PREFLIGHT:
			o->preflight = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return usage_error("--color: '%s' is not auto, always or never", optarg);
			o->color = optarg;
			break;
		case OPT_NFD_PREFIX:
			if (set_nfd_prefix(o, optarg, "--nfd-prefix"))
				return EXIT_USAGE;
			break;
		case OPT_VENDOR:
			if (!vendor_known(optarg))
				return usage_error("--vendor: unknown vendor '%s' (intel, nvidia)", optarg);
			o->vendor = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default: /* '?' or ':' */
			return usage_bad_option(NULL, argv, optstring, longopts);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->quiet && o->verbose)
		return usage_error("--quiet and --verbose contradict each other: choose one");
	return options_from_environment(o);
}

static void free_check_options(struct check_options *o)
{
	free_list(o->only);
	free_list(o->skip);
	for (size_t i = 0; i < o->n_reports; i++) {
		free(o->reports[i].format);
		free(o->reports[i].path);
	}
	free(o->reports);
	free(o->nfd_prefix_buf);
	free(o->spec_path_buf);
}

/* The system spec an image ships, read when no option or variable chose
 * one: a `docker exec CONTAINER gpugate check` runs the image's own spec.
 * Under --root, the root's. One that exists but cannot be read is the
 * spec loader's error, never silently the default profile. */
#define SYSTEM_SPEC "/etc/gpugate/gpugate.yaml"
static void discover_system_spec(struct check_options *o)
{
	if (o->profile || o->spec_path)
		return;
	char *path = o->root ? xasprintf("%s" SYSTEM_SPEC, o->root) : xstrdup(SYSTEM_SPEC);
	struct stat st;
	if (lstat(path, &st) == 0) {
		o->spec_path_buf = path;
		o->spec_path = path;
	} else {
		free(path);
	}
}

/* vendor: whose pins the built-in profiles add (src/profile.c). */
static int load_spec(const struct check_options *o, const char *vendor, struct spec *spec)
{
	struct spec_error err;
	int rc;
	if (o->spec_path)
		rc = profile_load_file(spec, o->spec_path, vendor, &err);
	else
		rc = profile_load(spec, o->profile ? o->profile : "ci", vendor, &err);
	if (rc < 0) {
		/* the message may quote the file's bytes: escaped for the terminal */
		struct strbuf msg = STRBUF_INIT;
		escape_add(&msg, err.msg, ESCAPE_LINE);
		fprintf(stderr, "gpugate: spec error: %s\n", msg.buf);
		sb_release(&msg);
	}
	return rc;
}

/* jansson seeds its hash from /dev/urandom (open, read, close) at the first
 * object, which is inside the first check; one getrandom here does it. */
static void seed_json_hash(void)
{
	uint32_t seed = 0;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed) && seed)
		json_object_seed(seed); /* else jansson seeds itself, as before */
}

struct delivery {
	const struct context *ctx;
	const struct check_options *options;
	struct report_opts report;
};

/* Colour for stdout: --color, else NO_COLOR (https://no-color.org: set and
 * not empty turns it off), else whether stdout is a terminal. */
static bool want_color(const struct check_options *o, const struct context *ctx)
{
	if (strcmp(o->color, "always") == 0)
		return true;
	if (strcmp(o->color, "never") == 0)
		return false;
	const char *no_color = ctx_getenv(ctx, "NO_COLOR");
	return isatty(1) && !(no_color && *no_color);
}

/* The Markdown job summary, appended to $GITHUB_STEP_SUMMARY when a github
 * report is written and the variable is set. 0 or -errno. */
static int write_step_summary(const struct delivery *d, const struct run *run)
{
	const struct check_options *o = d->options;
	bool github = strcmp(o->format, "github") == 0;
	for (size_t i = 0; i < o->n_reports; i++)
		github = github || strcmp(o->reports[i].format, "github") == 0;
	const char *path = ctx_getenv(d->ctx, "GITHUB_STEP_SUMMARY");
	if (!github || !path || !*path)
		return 0;
	struct strbuf sb = STRBUF_INIT;
	report_github_summary(&sb, run);
	int err = report_append_file(path, sb.buf, sb.len);
	sb_release(&sb);
	if (err < 0) {
		char *where = shown_value(path);
		fprintf(stderr, "gpugate: cannot append the job summary to $GITHUB_STEP_SUMMARY (%s): %s\n", where,
			strerror(-err));
		free(where);
	}
	return err;
}

/* Writes the run's reports (stdout, then each --report file, then the
 * GitHub job summary); returns the exit code. Called by the watchdog too,
 * when the deadline passes. A report that cannot be written is an error on
 * stderr; it never hides an unhealthy verdict (1 stays 1), and a healthy
 * run whose report is lost exits 3, or 1 in the healthcheck profile
 * (Docker knows only 0 and 1). A reader that left stdout early (EPIPE,
 * `| head -1`) is no error: the files are still written. */
static int deliver(const struct run *run, void *arg)
{
	const struct delivery *d = arg;
	const struct check_options *o = d->options;
	struct run shown = *run;
	if (ctx_is_healthcheck(d->ctx))
		shown.text_limit = 4096; /* Docker keeps no more of a health check's output */
	int verdict = run_exit_code(&shown);
	bool lost = false;
	/* the files first: a passing run whose report is lost says so on the
	 * first line of standard output, not HEALTHY */
	char why[SAFE_ERR_MAX + 128] = "";
	for (size_t i = 0; i < o->n_reports; i++) {
		char problem[SAFE_ERR_MAX];
		if (report_to_file(o->reports[i].format, &shown, o->reports[i].path, &d->report, problem,
				   sizeof(problem)) < 0) {
			/* the sentence names the file and the real problem (a
			 * folder where no temp file can be made, say) */
			fprintf(stderr, "gpugate: cannot write the %s report: %s\n", o->reports[i].format, problem);
			if (!lost)
				snprintf(why, sizeof(why), "the %s report could not be written: %s",
					 o->reports[i].format, problem);
			lost = true;
		}
	}
	if (write_step_summary(d, &shown) < 0) {
		if (!lost)
			snprintf(why, sizeof(why), "the job summary ($GITHUB_STEP_SUMMARY) could not be written");
		lost = true;
	}
	struct report_opts opts = d->report;
	opts.undelivered = lost ? why : NULL;
	int err = report_to_stdout(o->format, &shown, &opts);
	if (err < 0 && err != -EPIPE) {
		fprintf(stderr, "gpugate: cannot write the %s report to standard output: %s\n", o->format,
			strerror(-err));
		lost = true;
	}
	if (lost && verdict == EXIT_HEALTHY)
		return ctx_is_healthcheck(d->ctx) ? EXIT_UNHEALTHY : EXIT_USAGE;
	return verdict;
}

/* A check run's results, spec and options go back with the process:
 * freeing them piece by piece just before the exit is ~50k instructions on
 * every health check's serial path. The sanitizer build (make SANITIZE=1)
 * still frees them, so that LeakSanitizer keeps telling a leak from what
 * the run holds to the end (BUILD_ASAN, in cmd_check). */
int cmd_check(int argc, char **argv)
{
	double start = monotonic_seconds();
	seed_json_hash();
	struct check_options o;
	int rc = parse_check_options(argc, argv, &o);
	if (rc) {
		free_check_options(&o);
		return rc < 0 ? EXIT_HEALTHY : rc;
	}
	struct context ctx = { 0 };
	/* The packages group parses the dpkg status file in parts on worker
	 * threads (lib/dpkg_status.c, lib/parallel.h): started now, their start
	 * (an idle CPU woken: ~0.1 ms on a VM host) overlaps the seccomp load,
	 * which puts the filter on them too (TSYNC). They read nothing until
	 * parallel_for hands them a part, and end on their own if none comes. */
	struct selection wanted = { .only = o.only, .skip = o.skip };
	if (run_may_select_own_thread(&wanted))
		parallel_prestart(PACKAGES_WORKERS);
	/* Guarded from here on: a --root or spec on a dead mount, or a spec
	 * FIFO nobody writes, must not keep a health check forever. The
	 * watchdog starts before the filter goes on: it reads nothing (it waits
	 * for its deadline), its start overlaps the filter's load, and the load
	 * (TSYNC, sandbox.c) puts the filter on it too. */
	double setup_deadline = start + (o.deadline ? o.deadline : default_deadline(o.profile ? o.profile : "ci"));
	struct watchdog *guard = watchdog_start(start, setup_deadline, "looking at --root");
	tl_mark("watchdog started");
	/* The filter goes on before any file is read: the spec (libyaml) and
	 * --root are looked at under it too. Options are parsed first, as they
	 * can turn it off, but read nothing. */
	if (!o.no_sandbox && !sandbox_disabled_by_env(environ)) {
		char why[256];
		tl_mark("seccomp load");
		int loaded = sandbox_apply(SANDBOX_CHECK, why, sizeof(why));
		tl_mark("seccomp loaded");
		if (loaded < 0)
			fprintf(stderr, "gpugate: warning: running without the seccomp sandbox: %s\n", why);
		else
			ctx.sandbox_filters = 1; /* system.seccomp tells it from the container's */
	}
	if (o.root && check_root_option(o.root)) {
		free_check_options(&o);
		return EXIT_USAGE;
	}
	discover_system_spec(&o);
	char doing[300];
	snprintf(doing, sizeof(doing), o.spec_path ? "reading the spec %s" : "loading the built-in profile",
		 o.spec_path);
	watchdog_setup(guard, 0, doing);
	const char *vendor = o.vendor ? o.vendor : vendor_detect(o.root);
	struct spec spec;
	if (load_spec(&o, vendor, &spec) < 0) {
		spec_free(&spec);
		free_check_options(&o);
		return EXIT_USAGE;
	}
	tl_mark("spec ready");
	const char *profile = o.profile ? o.profile : key_str(&spec, "profile");
	bool spec_deadline = !o.deadline && spec_has(&spec, "deadline");
	double deadline = o.deadline ? o.deadline : spec_seconds(&spec, "deadline", default_deadline(profile));
	if (spec_deadline && monotonic_seconds() - start > deadline) {
		/* the deadline the spec sets covers reading the spec too */
		char took[32], limit[32];
		human_seconds(monotonic_seconds() - start, took, sizeof(took));
		human_seconds(deadline, limit, sizeof(limit));
		fprintf(stderr, "gpugate: %s: reading the spec took %s, past the deadline of %s it sets\n",
			spec.name ? spec.name : "spec", took, limit);
		spec_free(&spec);
		free_check_options(&o);
		return strcmp(profile, "healthcheck") == 0 ? EXIT_UNHEALTHY : EXIT_USAGE;
	}
	ctx.root = o.root ? o.root : "";
	ctx.spec = &spec;
	ctx.profile = profile;
	ctx.vendor = vendor;
	ctx.env = environ;
	ctx.argv0 = argv[0];
	ctx.start = start;
	ctx.deadline = start + deadline;
	struct selection sel = { .only = o.only, .skip = o.skip };
	watchdog_setup(guard, ctx.deadline, NULL);
	struct delivery delivery = { &ctx, &o, { 0 } };
	delivery.report.color = want_color(&o, &ctx);
	delivery.report.quiet = o.quiet;
	delivery.report.verbose = o.verbose;
	delivery.report.nfd_prefix = o.nfd_prefix;
	if (!o.nfd_prefix && spec_has(&spec, "reports.nfd_prefix") &&
	    set_nfd_prefix(&o, spec_str(&spec, "reports.nfd_prefix", ""), "spec reports.nfd_prefix")) {
		spec_free(&spec);
		free_check_options(&o);
		return EXIT_USAGE;
	}
	delivery.report.nfd_prefix = o.nfd_prefix;
	delivery.report.nfd_expiry = key_seconds(&spec, "reports.nfd_expiry");
	if (!run_selects_any(&ctx, &sel)) {
		fprintf(stderr, "gpugate: no check selected: %s (see gpugate list)\n",
			o.only || o.skip ? "--only/--skip leave nothing of the spec's checks to run"
					 : "the spec turns on no check group");
		spec_free(&spec);
		free_check_options(&o);
		return EXIT_USAGE;
	}
	if (o.preflight) {
		spec_free(&spec);
		free_check_options(&o);
		return EXIT_HEALTHY;
	}
	struct run run;
	tl_mark("options and selection ready");
	run_checks(&ctx, &sel, &run, deliver, &delivery, guard);
	tl_mark("checks done");
	int code = deliver(&run, &delivery);
	tl_mark("report written");
	if (BUILD_ASAN) {
		run_release(&run);
		spec_free(&spec);
		free_check_options(&o);
	}
	return code;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "check", cmd_check },   { "list", cmd_list },   { "stack", cmd_stack },
	{ "bundle", cmd_bundle }, { "spec", cmd_spec },   { "diff", cmd_diff },
	{ "hf", cmd_hf },         { "probe", cmd_probe }, /* hidden: the runtime check's child */
	{ "serve", cmd_serve },
};

#ifdef GPUGATE_TIMELINE
/* the first code of the program's own to run, after the dynamic linker and
 * the libraries' constructors */
__attribute__((constructor(101))) static void tl_constructor(void)
{
	tl_mark("constructor");
}
/* the last, after main returned (or exit) */
__attribute__((destructor)) static void tl_destructor(void)
{
	tl_mark("process exit");
}
#endif

int main(int argc, char **argv)
{
	tl_mark("main");
	/* Under an address-space limit (ulimit -v), each thread's glibc malloc
	 * arena reserves 64 MiB of it: the scan's and the hashers' threads would
	 * spend the limit on reservations instead of data, and a listing that fits
	 * would fail as "memory ran out" one run in two. One arena then. */
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
		mallopt(M_ARENA_MAX, 1);
	if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
		printf("gpugate %s\n", GPUGATE_VERSION);
		return EXIT_HEALTHY;
	}
	if (argc > 1 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
		fputs(usage_text, stdout);
		return EXIT_HEALTHY;
	}
	if (argc > 1 && argv[1][0] != '-') {
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (strcmp(argv[1], commands[i].name) == 0) {
				int rc = commands[i].fn(argc - 1, argv + 1);
				tl_mark("return from main");
				return rc;
			}
		return usage_error("unknown command '%s'", argv[1]);
	}
	int rc = cmd_check(argc, argv);
	tl_mark("return from main");
	return rc;
}
