/* gpugate: proves a GPU container is ready before work runs on it.
 * main() picks the subcommand; `check` (the default) turns options and a
 * spec into a context, runs the checks, writes the reports and exits. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "context.h"
#include "lib/embedded.h"
#include "lib/sandbox.h"
#include "lib/util.h"
#include "profile.h"
#include "registry.h"
#include "report/report.h"
#include "runner.h"
#include "spec.h"

#ifndef GPUGATE_VERSION
#define GPUGATE_VERSION "0.1.0"
#endif

extern char **environ;

static const char usage_text[] =
	"usage: gpugate [check] [options]       check this machine or container\n"
	"       gpugate list                    every check id and the profiles\n"
	"       gpugate hf where|scan|verify|fetch ...\n"
	"       gpugate stack fetch|verify --manifest FILE ...   pinned driver packages\n"
	"       gpugate bundle -o FILE.tar.gz|-   diagnostics for a bug report\n"
	"       gpugate spec freeze [-o FILE] ...     a spec pinning this machine's GPU stack\n"
	"       gpugate diff OLD.json NEW.json        what changed between two JSON reports\n"
	"       gpugate --version | --help\n"
	"\n"
	"check options:\n"
	"  --profile healthcheck|ci|validate   built-in spec (default ci)\n"
	"  --spec FILE.yaml                    your own spec instead of a profile\n"
	"  --vendor intel|nvidia               the GPU vendor whose pins apply (default: detected)\n"
	"  --root DIR                          read system paths under DIR instead of /\n"
	"  --format text|json|junit|prom|github|nfd  report on stdout (default text)\n"
	"  --report FORMAT:FILE                also write a report to FILE (repeatable)\n"
	"  --deadline SECONDS                  the whole run finishes by then\n"
	"  --only ID[,ID]  --skip ID[,ID]      checks by id or id prefix (runtime, hf.integrity)\n"
	"  --no-sandbox                        no seccomp filter (debugging; or GPUGATE_NO_SANDBOX=1)\n"
	"\n"
	"exit status: 0 healthy (warnings allowed), 1 unhealthy, 3 usage or spec error\n";

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
};

static double default_deadline(const char *profile)
{
	if (strcmp(profile, "healthcheck") == 0)
		return 8;   /* under Docker's usual 10 s HEALTHCHECK timeout */
	if (strcmp(profile, "validate") == 0)
		return 300;
	return 60;
}

static int check_patterns(char **list, const char *option)
{
	for (char **p = list; p && *p; p++) {
		/* a group name matches too: it is a prefix of its checks' ids */
		if (!registry_find(*p))
			return usage_error("%s: no check has the id or prefix '%s' (see 'gpugate list')", option, *p);
	}
	return 0;
}

static int parse_check_options(int argc, char **argv, struct check_options *o)
{
	enum { OPT_PROFILE = 256, OPT_SPEC, OPT_ROOT, OPT_FORMAT, OPT_REPORT, OPT_DEADLINE, OPT_ONLY, OPT_SKIP, OPT_NO_SANDBOX, OPT_VENDOR };
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
		{ "vendor", required_argument, NULL, OPT_VENDOR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->format = "text";
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PROFILE:
			if (!embedded_find(embedded_profiles, optarg))
				return usage_error("--profile: unknown profile '%s' (healthcheck, ci, validate; or --spec FILE)", optarg);
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
				return usage_error("--report wants FORMAT:FILE, such as junit:gpugate.xml, not '%s'", optarg);
			char *format = xstrndup(optarg, (size_t)(colon - optarg));
			if (!report_lookup(format)) {
				usage_error("--report: unknown format '%s' (%s)", format, report_format_names());
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
				return usage_error("--deadline: '%s' is not a positive number of seconds", optarg);
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
		case OPT_VENDOR:
			if (!vendor_known(optarg))
				return usage_error("--vendor: unknown vendor '%s' (intel, nvidia)", optarg);
			o->vendor = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt >= OPT_PROFILE)
				return usage_error("option '%s' needs an argument", argv[optind - 1]);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
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
	if (rc < 0)
		fprintf(stderr, "gpugate: spec error: %s\n", err.msg);
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
};

/* Writes the run's reports (stdout, then each --report file); returns the
 * exit code. Called by the watchdog too, when the deadline passes. */
static int deliver(const struct run *run, void *arg)
{
	const struct delivery *d = arg;
	const struct check_options *o = d->options;
	struct run shown = *run;
	if (ctx_is_healthcheck(d->ctx))
		shown.text_limit = 4096; /* Docker keeps no more of a health check's output */
	int code = run_exit_code(&shown);
	if (report_to_stdout(o->format, &shown) < 0 && code == EXIT_HEALTHY)
		code = EXIT_UNHEALTHY;
	for (size_t i = 0; i < o->n_reports; i++) {
		int err = report_to_file(o->reports[i].format, &shown, o->reports[i].path);
		if (err < 0) {
			fprintf(stderr, "gpugate: cannot write the %s report to %s: %s\n", o->reports[i].format,
				o->reports[i].path, strerror(-err));
			code = EXIT_USAGE;
		}
	}
	return code;
}

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
	/* The filter goes on before any file is read: the spec (libyaml) and
	 * --root are looked at under it too. Options are parsed first, as they
	 * can turn it off, but read nothing. The watchdog thread inherits it. */
	if (!o.no_sandbox && !sandbox_disabled_by_env(environ)) {
		char why[256];
		if (sandbox_apply(SANDBOX_CHECK, why, sizeof(why)) < 0)
			fprintf(stderr, "gpugate: warning: running without the seccomp sandbox: %s\n", why);
		else
			ctx.sandbox_filters = 1; /* system.seccomp tells it from the container's */
	}
	/* Guarded from here on: a --root or spec on a dead mount, or a spec
	 * FIFO nobody writes, must not keep a health check forever. */
	double setup_deadline = start + (o.deadline ? o.deadline : default_deadline(o.profile ? o.profile : "ci"));
	struct watchdog *guard = watchdog_start(start, setup_deadline, "looking at --root");
	if (o.root && check_root_option(o.root)) {
		free_check_options(&o);
		return EXIT_USAGE;
	}
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
	const char *profile = o.profile ? o.profile : spec_str(&spec, "profile", "ci");
	double deadline = o.deadline ? o.deadline
				     : spec_seconds(&spec, "deadline", default_deadline(profile));
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
	struct delivery delivery = { &ctx, &o };
	struct run run;
	run_checks(&ctx, &sel, &run, deliver, &delivery, guard);
	int code = deliver(&run, &delivery);
	run_release(&run);
	spec_free(&spec);
	free_check_options(&o);
	return code;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "check", cmd_check },
	{ "list", cmd_list },
	{ "stack", cmd_stack },
	{ "bundle", cmd_bundle },
	{ "spec", cmd_spec },
	{ "diff", cmd_diff },
	{ "hf", cmd_hf },
	{ "probe", cmd_probe }, /* hidden: the runtime check's child */
};

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
		printf("gpugate %s\n", GPUGATE_VERSION);
		return EXIT_HEALTHY;
	}
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
			 strcmp(argv[1], "help") == 0)) {
		fputs(usage_text, stdout);
		return EXIT_HEALTHY;
	}
	if (argc > 1 && argv[1][0] != '-') {
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (strcmp(argv[1], commands[i].name) == 0)
				return commands[i].fn(argc - 1, argv + 1);
		return usage_error("unknown command '%s'", argv[1]);
	}
	return cmd_check(argc, argv);
}
