/* `gpugate hf where|scan|verify|fetch`: the Hugging Face cache from the
 * command line. where prints the hub cache path as huggingface_hub computes
 * it; scan lists what `hf cache ls` shows plus every problem per repo; verify
 * hashes every blob against its name, offline. fetch lives elsewhere. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backend/probe_cache.h"
#include "../commands.h"
#include "../context.h"
#include "../lib/crypto_dl.h"
#include "../lib/progress.h"
#include "../lib/sanitizer.h"
#include "../lib/escape.h"
#include "../lib/util.h"
#include "../result.h"
#include "cache_format.h"
#include "crew.h"
#include "layout.h"
#include "location.h"
#include "../lib/timeline.h"
#include "verified_record.h"
#include "verify.h"

extern char **environ;

static const char hf_usage[] =
	"usage: gpugate hf where [-v] [--format text|json] [--root DIR]\n"
	"       gpugate hf scan [--format text|json] [--root DIR] [--cache DIR]\n"
	"       gpugate hf verify [--format text|json] [--root DIR] [--cache DIR] [--jobs N] [--full]\n"
	"                         [--deadline SECONDS] [--quiet] [REPO...]\n"
	"       gpugate hf fetch REPO[@REV] [FILE...]\n"
	"\n"
	"The cache is found from HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME, XDG_CACHE_HOME\n"
	"as huggingface_hub does (read under --root DIR), or given with --cache DIR.\n"
	"REPO: org/name (a model), datasets/name, spaces/org/name, or the folder models--org--name.\n"
	"hf verify trusts a blob verified before whose stat data is unchanged (a record in gpugate's\n"
	"state folder: $XDG_RUNTIME_DIR/gpugate, /run/gpugate, /dev/shm/gpugate-UID or /tmp/gpugate-UID,\n"
	"the first usable; it also keeps parsed listings, at most 256 files or 512 MiB, least recently\n"
	"used dropped first); --full hashes every blob. A progress line goes to stderr on a terminal\n"
	"(not with --quiet).\n"
	"exit status: 0 healthy, 1 problems found, 3 usage error\n";

struct hf_options {
	const char *format;
	const char *root;
	const char *cache;
	bool verbose;
	unsigned jobs;
	bool full, quiet;
	double deadline; /* seconds; 0: none */
	int first_arg;
};

static int parse_hf_options(int argc, char **argv, bool allow_args, bool allow_verbose, struct hf_options *o)
{
	enum { OPT_FORMAT = 256, OPT_ROOT, OPT_CACHE, OPT_JOBS, OPT_FULL, OPT_DEADLINE, OPT_QUIET };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "deadline", required_argument, NULL, OPT_DEADLINE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->format = "text";
	opterr = 0;
	optind = 1;
	int c;
	static const char optstring[] = "+vh";
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
				return usage_error("hf %s --format: unknown format '%s' (text, json)", argv[0], optarg);
			o->format = optarg;
			break;
		case OPT_ROOT: {
			char command[32]; /* "hf verify": the hint is that command's own --help */
			snprintf(command, sizeof(command), "hf %s", argv[0]);
			if (command_root_option(command, optarg))
				return EXIT_USAGE;
			o->root = optarg;
			break;
		}
		case OPT_CACHE:
			if (strcmp(argv[0], "where") == 0)
				return usage_error("hf where takes no --cache: it says where the cache is");
			o->cache = optarg;
			break;
		case OPT_JOBS: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 1024 || strcmp(argv[0], "verify") != 0)
				return usage_error(
					"hf %s --jobs wants a number from 1 to 1024 (hf verify only), not '%s'",
					argv[0], optarg);
			o->jobs = (unsigned)n;
			break;
		}
		case OPT_FULL:
		case OPT_QUIET:
			if (strcmp(argv[0], "verify") != 0)
				return usage_error("hf %s: unknown option '%s' (hf verify only)", argv[0],
						   argv[optind - 1]);
			*(c == OPT_FULL ? &o->full : &o->quiet) = true;
			break;
		case OPT_DEADLINE: {
			char *end;
			double d = strtod(optarg, &end);
			if (end == optarg || *end || !(d > 0) || d > 1e7 || strcmp(argv[0], "verify") != 0)
				return usage_error("hf %s --deadline wants seconds above 0 (hf verify only), not '%s'",
						   argv[0], optarg);
			o->deadline = d;
			break;
		}
		case 'v':
			if (!allow_verbose)
				return usage_error("hf %s: unknown option '-v'", argv[0]);
			o->verbose = true;
			break;
		case 'h':
			fputs(hf_usage, stdout);
			return -1;
		default: {
			char command[32];
			snprintf(command, sizeof(command), "hf %s", argv[0]);
			return usage_bad_option(command, argv, optstring, longopts);
		}
		}
	}
	if (!allow_args && optind < argc)
		return usage_error("hf %s: unexpected argument '%s'", argv[0], argv[optind]);
	o->first_arg = optind;
	return 0;
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	if (s)
		puts(s);
	free(s);
	json_decref(j);
}

/* Where a path came from, in words; a variable set to the empty string
 * (HF_HOME= gives the relative "hub") says so. Caller frees. */
static char *source_words(const char *source)
{
	if (strcmp(source, "default") == 0)
		return xstrdup("the default ~/.cache/huggingface");
	const char *value = getenv(source);
	return xasprintf("%s%s", source, value && !*value ? ", set to the empty string" : "");
}

/* An empty or relative hub cache path, said as hf.location says it (with
 * its fix) on stderr; false when the path is absolute. */
static bool explain_relative(const struct hf_location *loc)
{
	char why[PATH_MAX + 256], fix[256];
	if (!hf_location_relative(environ, loc, why, sizeof(why), fix, sizeof(fix)))
		return false;
	char *shown = escape_line(why);
	fprintf(stderr, "gpugate: %s\ngpugate: fix: %s\n", shown, fix);
	free(shown);
	return true;
}

static int hf_where(int argc, char **argv)
{
	struct hf_options o;
	int rc = parse_hf_options(argc, argv, false, true, &o);
	if (rc)
		return rc < 0 ? EXIT_HEALTHY : rc;
	struct hf_location loc;
	hf_location_of_environ(environ, o.root, true, &loc);
	bool usable = loc.hub_cache[0] == '/';
	if (strcmp(o.format, "json") == 0) {
		json_t *j = json_object();
		json_object_set_new(j, "hub_cache", json_text(loc.hub_cache));
		json_object_set_new(j, "hub_cache_from", json_text(loc.hub_source));
		json_object_set_new(j, "hf_home", json_text(loc.hf_home));
		json_object_set_new(j, "hf_home_from", json_text(loc.home_source));
		json_object_set_new(j, "token_path", json_text(loc.token_path));
		json_object_set_new(j, "token_from", json_text_or_null(loc.token_source));
		json_object_set_new(j, "token_error", json_text_or_null(loc.token_error));
		json_object_set_new(j, "offline", json_boolean(loc.offline));
		json_object_set_new(j, "offline_from", json_text_or_null(loc.offline_source));
		json_object_set_new(j, "endpoint", json_text(loc.endpoint));
		json_object_set_new(j, "endpoint_from", json_text(loc.endpoint_source));
		json_object_set_new(j, "xet_cache", json_text(loc.xet_cache));
		json_object_set_new(j, "assets_cache", json_text(loc.assets_cache));
		json_object_set_new(j, "datasets_cache", json_text(loc.datasets_cache));
		json_t *dep = json_array();
		for (const char *const *d = loc.deprecated; *d; d++)
			json_array_append_new(dep, json_string(*d));
		json_object_set_new(j, "deprecated_set", dep);
		print_json(j);
	} else if (!o.verbose) {
		char *shown = escape_line(loc.hub_cache);
		puts(shown);
		free(shown);
	} else {
		/* every value may come from the environment: one line each, escaped */
		char *v[] = { escape_line(loc.hub_cache),
			      escape_line(loc.hf_home),
			      escape_line(loc.token_path),
			      escape_line(loc.token_source  ? loc.token_source
					  : loc.token_error ? "unreadable: every huggingface_hub download raises"
							    : "none: anonymous downloads"),
			      escape_line(loc.offline_source ? getenv(loc.offline_source) : ""),
			      escape_line(loc.endpoint),
			      escape_line(loc.xet_cache),
			      escape_line(loc.assets_cache),
			      escape_line(loc.datasets_cache) };
		char *from[] = { source_words(loc.hub_source), source_words(loc.home_source) };
		printf("hub cache:      %s (from %s)\n", v[0], from[0]);
		printf("HF_HOME:        %s (from %s)\n", *v[1] ? v[1] : "''", from[1]);
		free(from[0]);
		free(from[1]);
		printf("token path:     %s (token %s)\n", v[2], v[3]);
		if (loc.token_error) {
			char *why = escape_line(loc.token_error);
			printf("                %s\n", why);
			free(why);
		}
		if (loc.token_source)
			printf("                the token comes from %s; it is never printed\n", v[3]);
		printf("offline:        %s", loc.offline ? "yes" : "no");
		if (loc.offline_source)
			printf(" (%s=%s)", loc.offline_source, v[4]);
		putchar('\n');
		/* not a folder: the default is huggingface_hub's constant */
		printf("endpoint:       %s (%s%s)\n", v[5],
		       strcmp(loc.endpoint_source, "default") == 0 ? "huggingface_hub's default: HF_ENDPOINT is unset"
								   : "from ",
		       strcmp(loc.endpoint_source, "default") == 0 ? "" : loc.endpoint_source);
		printf("xet cache:      %s\nassets cache:   %s\ndatasets cache: %s\n", v[6], v[7], v[8]);
		for (const char *const *d = loc.deprecated; *d; d++)
			printf("deprecated:     %s is set; huggingface_hub ignores it (use HF_HOME or HF_HUB_CACHE)\n",
			       *d);
		for (size_t i = 0; i < ARRAY_SIZE(v); i++)
			free(v[i]);
	}
	explain_relative(&loc);
	if (loc.token_error) { /* get_token() raises in every download (utils/_auth.py) */
		char *why = escape_line(loc.token_error);
		fprintf(stderr, "gpugate: every huggingface_hub download would raise: %s\n", why);
		free(why);
	}
	bool ok = usable && !loc.token_error;
	hf_location_free(&loc);
	return ok ? EXIT_HEALTHY : EXIT_UNHEALTHY;
}

/* The cache folder to read: --cache, or the resolved one under --root;
 * *alias gets the path huggingface_hub uses for it (absolute links written
 * into the cache under --root carry that path), or NULL. NULL when the
 * path huggingface_hub would use is empty or relative (said on stderr). */
static char *cache_dir(const struct hf_options *o, char **alias)
{
	*alias = NULL;
	if (o->cache)
		return xstrdup(o->cache);
	struct hf_location loc;
	hf_location_of_environ(environ, o->root, true, &loc);
	if (explain_relative(&loc)) {
		hf_location_free(&loc);
		return NULL;
	}
	char *p = root_path(o->root, loc.hub_cache);
	*alias = xstrdup(loc.hub_cache);
	hf_location_free(&loc);
	return p;
}

static void time_text(time_t t, char *buf, size_t size)
{
	struct tm tm;
	if (!t || !gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "-");
}

static json_t *warning_json(const struct hf_repo *repo, const struct hf_warning *w)
{
	json_t *j = json_object();
	json_object_set_new(j, "severity", json_string(w->severity == HF_FAIL ? "fail" : "warn"));
	json_object_set_new(j, "path", json_text(w->path));
	if (w->blob >= 0) { /* a finding about a blob carries it and the files that use it */
		json_object_set_new(j, "blob", json_text(w->path));
		json_object_set_new(j, "files", hf_blob_files_json(repo, w->blob));
	}
	json_object_set_new(j, "message", json_text(w->message));
	json_object_set_new(j, "hidden_by_hf_cache_ls", json_boolean(w->hides_repo));
	return j;
}

static json_t *repo_json(const struct hf_cache *cache, const struct hf_repo *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "folder", json_text(r->folder));
	json_object_set_new(j, "repo_id", json_text_or_null(r->id));
	json_object_set_new(j, "repo_type", json_text_or_null(r->type));
	char *path = xasprintf("%s/%s", cache->path, r->folder);
	json_object_set_new(j, "path", json_text(path));
	free(path);
	json_object_set_new(j, "size_on_disk", json_integer((json_int_t)r->size_on_disk));
	json_object_set_new(j, "nb_files", json_integer((json_int_t)r->n_files));
	json_object_set_new(j, "last_accessed", json_integer((json_int_t)r->last_accessed));
	json_object_set_new(j, "last_modified", json_integer((json_int_t)r->last_modified));
	json_t *refs = json_object();
	for (size_t i = 0; i < r->n_refs; i++)
		json_object_set_new(refs, r->refs[i].name, json_text(r->refs[i].commit));
	json_object_set_new(j, "refs", refs);
	json_t *revs = json_array();
	for (size_t v = 0; v < r->n_revisions; v++) {
		const struct hf_revision *rev = &r->revisions[v];
		json_t *jr = json_object();
		json_object_set_new(jr, "commit_hash", json_text(rev->commit));
		json_object_set_new(jr, "nb_files", json_integer((json_int_t)rev->n_files));
		json_object_set_new(jr, "size_on_disk", json_integer((json_int_t)rev->size));
		json_t *names = json_array();
		for (size_t i = 0; i < r->n_refs; i++)
			if (strcmp(r->refs[i].commit, rev->commit) == 0)
				json_array_append_new(names, json_text(r->refs[i].name));
		json_object_set_new(jr, "refs", names);
		json_t *jl = json_object();
		json_object_set_new(jl, "state", json_string(hf_listing_state_text(rev->listing.state)));
		if (rev->listing.problem)
			json_object_set_new(jl, "problem", json_text(rev->listing.problem));
		if (rev->listing.state == HF_LISTING_OK) {
			json_object_set_new(jl, "files", json_integer((json_int_t)rev->listing.n_files));
			json_object_set_new(jl, "missing", json_integer((json_int_t)rev->n_missing));
			json_object_set_new(jl, "size_differs", json_integer((json_int_t)rev->n_size_differs));
			json_object_set_new(jl, "other_blob", json_integer((json_int_t)rev->n_other_blob));
		}
		json_object_set_new(jr, "listing", jl);
		json_array_append_new(revs, jr);
	}
	json_object_set_new(j, "revisions", revs);
	json_t *inc = json_object();
	json_object_set_new(inc, "count", json_integer((json_int_t)r->n_incomplete));
	json_object_set_new(inc, "bytes", json_integer((json_int_t)r->incomplete_bytes));
	json_object_set_new(j, "incomplete", inc);
	json_t *ws = json_array();
	for (size_t i = 0; i < r->n_warnings; i++)
		json_array_append_new(ws, warning_json(r, &r->warnings[i]));
	json_object_set_new(j, "warnings", ws);
	return j;
}

static bool repo_failed(const struct hf_repo *r)
{
	for (size_t i = 0; i < r->n_warnings; i++)
		if (r->warnings[i].severity == HF_FAIL)
			return true;
	return false;
}

/* One finding of the whole cache (no repo folder, the deadline) in the
 * report's problems, counted as a failure or a warning. */
static void add_cache_problem(json_t *problems, bool fail, const char *state, const char *message, size_t *n_fail,
			      size_t *n_warn)
{
	json_t *p = json_object();
	json_object_set_new(p, "severity", json_string(fail ? "fail" : "warn"));
	json_object_set_new(p, "state", json_string(state));
	json_object_set_new(p, "message", json_text(message));
	json_array_append_new(problems, p);
	++*(fail ? n_fail : n_warn);
}

/* A cache with no repo folder: a new cache is empty, but so is a wrong path
 * (HF_HOME's folder given for the hub cache, a mount that did not happen).
 * Said as a warning, not a failure: nothing in it is broken (exit 0 with
 * warnings: the man page's EXIT STATUS). NULL when the cache has a repo. Caller frees. */
static char *no_repos_text(const struct hf_cache *cache)
{
	for (size_t i = 0; i < cache->n_repos; i++)
		if (hf_repo_folder_type(cache->repos[i].folder))
			return NULL;
	char *hub = xasprintf("%s/hub", cache->path);
	struct stat st;
	bool home = stat(hub, &st) == 0 && S_ISDIR(st.st_mode);
	char *msg = xasprintf("no repos in %s (is this the hub cache? it has no models--/datasets--/spaces-- "
			      "folders%s%s)",
			      cache->path, home ? "; it has a hub/ folder, as HF_HOME has: try --cache " : "",
			      home ? hub : "");
	free(hub);
	return msg;
}

static int scan_hooked_or_explain(const struct hf_options *o, struct hf_cache *cache, const struct hf_scan_hook *hook)
{
	char *alias;
	char *dir = cache_dir(o, &alias);
	if (!dir)
		return -1;
	char err[4200];
	int rc = hf_cache_scan_hooked(dir, alias, true, cache, err, sizeof(err), hook);
	free(dir);
	free(alias);
	if (rc < 0) {
		char *why = escape_line(err);
		fprintf(stderr, "gpugate: no Hugging Face cache to read: %s\n", why);
		free(why);
		hf_cache_free(cache);
	}
	return rc;
}

static int scan_or_explain(const struct hf_options *o, struct hf_cache *cache)
{
	return scan_hooked_or_explain(o, cache, NULL);
}

static int hf_scan(int argc, char **argv)
{
	struct hf_options o;
	int rc = parse_hf_options(argc, argv, false, false, &o);
	if (rc)
		return rc < 0 ? EXIT_HEALTHY : rc;
	struct hf_cache cache;
	if (scan_or_explain(&o, &cache) < 0)
		return EXIT_UNHEALTHY;
	bool failed = false;
	uint64_t total = 0;
	for (size_t i = 0; i < cache.n_repos; i++) {
		failed |= repo_failed(&cache.repos[i]);
		total += cache.repos[i].size_on_disk;
	}
	if (strcmp(o.format, "json") == 0) {
		json_t *j = json_object();
		json_object_set_new(j, "schema", json_string("gpugate/hf-scan/v1"));
		json_object_set_new(j, "cache", json_text(cache.path));
		json_object_set_new(j, "size_on_disk", json_integer((json_int_t)total));
		json_t *repos = json_array();
		for (size_t i = 0; i < cache.n_repos; i++)
			json_array_append_new(repos, repo_json(&cache, &cache.repos[i]));
		json_object_set_new(j, "repos", repos);
		print_json(j);
	} else {
		printf("%-40s %-8s %12s %8s %-20s %-20s %s\n", "REPO ID", "TYPE", "SIZE ON DISK", "FILES",
		       "LAST ACCESSED", "LAST MODIFIED", "REFS");
		for (size_t i = 0; i < cache.n_repos; i++) {
			const struct hf_repo *r = &cache.repos[i];
			char size[32], acc[32], mod[32];
			human_bytes(r->size_on_disk, size, sizeof(size));
			time_text(r->last_accessed, acc, sizeof(acc));
			time_text(r->last_modified, mod, sizeof(mod));
			struct strbuf refs = STRBUF_INIT;
			sb_puts(&refs, "");
			for (size_t k = 0; k < r->n_refs; k++)
				sb_printf(&refs, "%s%s", k ? "," : "", r->refs[k].name);
			char *id = escape_line(r->id ? r->id : r->folder), *ref_names = escape_line(refs.buf);
			printf("%-40s %-8s %12s %8zu %-20s %-20s %s\n", id, r->type ? r->type : "?", size, r->n_files,
			       acc, mod, ref_names);
			free(id);
			free(ref_names);
			sb_release(&refs);
			for (size_t v = 0; v < r->n_revisions; v++) {
				char rs[32];
				human_bytes(r->revisions[v].size, rs, sizeof(rs));
				char *commit = escape_line(r->revisions[v].commit);
				const struct hf_revision *rev = &r->revisions[v];
				if (rev->listing.state == HF_LISTING_OK)
					printf("    revision %s: %zu %s, %s; listing: %zu %s, %zu missing\n", commit,
					       rev->n_files, count_noun(rev->n_files, "file", "files"), rs,
					       rev->listing.n_files, count_noun(rev->listing.n_files, "file", "files"),
					       rev->n_missing);
				else
					printf("    revision %s: %zu %s, %s; %s: completeness not checked\n", commit,
					       rev->n_files, count_noun(rev->n_files, "file", "files"), rs,
					       hf_listing_state_text(rev->listing.state));
				free(commit);
			}
			for (size_t w = 0; w < r->n_warnings; w++) {
				char *msg = escape_line(r->warnings[w].message);
				printf("    %s: %s\n", r->warnings[w].severity == HF_FAIL ? "FAIL" : "warn", msg);
				free(msg);
			}
		}
		char *empty = no_repos_text(&cache);
		if (empty) {
			char *shown = escape_line(empty);
			printf("warn: %s\n", shown);
			free(shown);
			free(empty);
		}
		char t[32];
		human_bytes(total, t, sizeof(t));
		char *path = escape_line(cache.path);
		printf("%zu %s, %s on disk in %s%s\n", cache.n_repos, count_noun(cache.n_repos, "repo", "repos"), t,
		       path, failed ? "; problems found (see FAIL lines)" : "");
		free(path);
	}
	hf_cache_free(&cache);
	return failed ? EXIT_UNHEALTHY : EXIT_HEALTHY;
}

/* The blobs are hashed while the scan walks the snapshots: on a cache of
 * many small blobs the walk (a readlink per file) was a quarter of the run. */
struct verify_start {
	struct hf_verify_options *opt;
	struct hf_verify_job *job;
	int err;
	char *record;          /* the record file, or NULL */
	char record_why[4400]; /* why there is none */
};

static int verify_scanned(struct hf_options o, int argc, char **argv);

/* The verified-blob record of the cache in gpugate's state folder (where
 * the probe cache lives: XDG_RUNTIME_DIR/gpugate, /run/gpugate, ...), or
 * NULL with why: then every blob is hashed. */
static char *record_file(const char *cache_path, char *why, size_t why_size)
{
	struct context ctx = { .root = "", .env = environ };
	char *dir = probe_cache_dir(ctx_getenv(&ctx, "XDG_RUNTIME_DIR"), why, why_size);
	if (!dir)
		return NULL;
	char *file = hf_record_file(dir, cache_path, why, why_size);
	free(dir);
	return file;
}

static void start_hashing(const struct hf_cache *cache, void *arg)
{
	struct verify_start *vs = arg;
	vs->job = hf_verify_start(cache, vs->opt);
	vs->opt->record_loading = NULL; /* taken over */
	vs->err = vs->job ? 0 : errno;
}

static int hf_verify(int argc, char **argv)
{
	struct hf_options o;
	int rc = parse_hf_options(argc, argv, true, false, &o);
	if (rc)
		return rc < 0 ? EXIT_HEALTHY : rc;
	for (int i = o.first_arg; i < argc; i++) { /* a name no repo can have is a typo, not a missing repo */
		const char *why = hf_repo_arg_problem(argv[i]);
		if (why) {
			char *shown = escape_line(argv[i]);
			rc = usage_error("hf verify: '%s' is not a repo id (%s)", shown, why);
			free(shown);
			return rc;
		}
	}
	tl_mark("verify options");
	/* one set of threads for the scan's and the record's parallel phases,
	 * started now: they come up (an idle CPU's wake-up each) while the
	 * record files are found and opened */
	hf_crew_hold(true);
	rc = verify_scanned(o, argc, argv);
	if (BUILD_ASAN || BUILD_TSAN) /* else the workers end with the process, not joined one by one first */
		hf_crew_release();
	crypto_dl_preload_join();
	tl_mark("crypto joined");
	return rc;
}

/* What the report counts of the results, in slices (20,000 results of 160
 * bytes: a few hundred microseconds read on one thread). */
struct result_counts {
	const struct hf_verify *v;
	pthread_mutex_t lock;
	size_t blobs, ok, findings; /* findings: neither OK nor skipped */
};

#define COUNT_SLICE 4096

static void count_results(void *arg, size_t begin, size_t end)
{
	struct result_counts *c = arg;
	size_t blobs = 0, ok = 0, findings = 0;
	for (size_t i = begin; i < end; i++) {
		const struct hf_blob_result *res = &c->v->results[i];
		blobs += res->blob >= 0;
		ok += res->state == HF_BLOB_OK;
		findings += res->state != HF_BLOB_OK && res->state != HF_BLOB_SKIPPED;
	}
	pthread_mutex_lock(&c->lock);
	c->blobs += blobs;
	c->ok += ok;
	c->findings += findings;
	pthread_mutex_unlock(&c->lock);
}

/* hf verify once its options are read: the scan, the hashing, the report. */
static int verify_scanned(struct hf_options o, int argc, char **argv)
{
	size_t n_names = (size_t)(argc - o.first_arg);
	char **folders = n_names ? xcalloc(n_names + 1, sizeof(char *)) : NULL;
	for (size_t i = 0; i < n_names; i++)
		folders[i] = hf_repo_folder(argv[o.first_arg + (int)i], NULL);
	double started = monotonic_seconds();
	struct hf_verify_options vo = { .repos = folders,
					.threads = o.jobs,
					.progress = progress_wanted(o.quiet),
					.label = "hf verify",
					.full = o.full,
					.deadline = o.deadline > 0 ? started + o.deadline : 0 };

	struct verify_start vs = { .opt = &vo, .err = EBADF };
	/* the record is read while the scan lists and stats the blobs */
	char *alias;
	char *dir = cache_dir(&o, &alias);
	if (!dir) {
		free_list(folders);
		return EXIT_UNHEALTHY;
	}
	vs.record = record_file(dir, vs.record_why, sizeof(vs.record_why));
	vo.record = vs.record;
	/* libcrypto loaded while the scan lists the blobs, where most will be
	 * hashed: with a record, a run that changes nothing hashes nothing, and
	 * the few blobs that changed load it when they are hashed */
	struct stat record_st;
	if (o.full || !vs.record || lstat(vs.record, &record_st) < 0)
		crypto_dl_preload();
	if (vs.record) /* --full trusts none of it, but keeps what it says of the other repos */
		vo.record_loading = hf_record_load_start(vs.record, dir);
	free(dir);
	free(alias);
	tl_mark("record load started");
	/* listings parsed before are kept in the state folder, as the record is (not with --full) */
	char keep_why[256];
	struct context keep_ctx = { .root = "", .env = environ };
	char *keep_dir =
		o.full ? NULL : probe_cache_dir(ctx_getenv(&keep_ctx, "XDG_RUNTIME_DIR"), keep_why, sizeof(keep_why));
	struct hf_scan_hook hook = { .blobs_listed = start_hashing, .arg = &vs, .keep_dir = keep_dir };
	struct hf_cache cache;
	int scanned = scan_hooked_or_explain(&o, &cache, &hook);
	tl_mark("scan done");
	free(keep_dir);
	if (vo.record_loading) { /* the scan never reached the hashing */
		struct hf_record unused;
		hf_record_load_join(vo.record_loading, &unused);
		hf_record_free(&unused);
	}
	if (scanned < 0) {
		free_list(folders);
		free(vs.record);
		return EXIT_UNHEALTHY; /* the scan failed before it listed any blob: nothing started */
	}
	json_t *problems = json_array();
	size_t n_fail = 0;
	for (size_t i = 0; i < n_names; i++) {
		bool found = false;
		for (size_t r = 0; r < cache.n_repos; r++)
			found |= strcmp(cache.repos[r].folder, folders[i]) == 0;
		if (!found) {
			json_t *p = json_object();
			json_object_set_new(p, "repo", json_text(argv[o.first_arg + (int)i]));
			json_object_set_new(p, "severity", json_string("fail"));
			char *msg = xasprintf("%s is not in the cache (no folder %s)", argv[o.first_arg + (int)i],
					      folders[i]);
			json_object_set_new(p, "message", json_text(msg));
			free(msg);
			json_array_append_new(problems, p);
			n_fail++;
		}
	}
	struct hf_verify v;
	if (!vs.job) { /* hashing never started: the cache folder could not be opened */
		char *shown = escape_line(cache.path);
		fprintf(stderr, "gpugate: cannot open %s: %s\n", shown, strerror(vs.err));
		free(shown);
		hf_cache_free(&cache);
		free_list(folders);
		free(vs.record);
		json_decref(problems);
		return EXIT_UNHEALTHY;
	}
	hf_verify_finish(vs.job, &v);
	tl_mark("verify finished");
	size_t n_repos = 0, n_warn = 0, n_revs = 0, n_unlisted = 0;
	for (size_t r = 0; r < cache.n_repos; r++) {
		const struct hf_repo *repo = &cache.repos[r];
		if (!hf_verify_selected(&vo, repo->folder))
			continue;
		n_repos++;
		/* without a usable listing a missing file cannot be seen: say so (issue 19) */
		for (size_t k = 0; k < repo->n_revisions; k++) {
			n_revs++;
			n_unlisted += repo->revisions[k].listing.state != HF_LISTING_OK;
		}
		for (size_t w = 0; w < repo->n_warnings; w++) {
			json_t *p = warning_json(repo, &repo->warnings[w]);
			json_object_set_new(p, "repo", json_text(repo->folder));
			char *msg = xasprintf("%s: %s", repo->folder, repo->warnings[w].message);
			json_object_set_new(p, "message", json_text(msg));
			free(msg);
			json_array_append_new(problems, p);
			if (repo->warnings[w].severity == HF_FAIL)
				n_fail++;
			else
				n_warn++;
		}
	}
	char *empty = n_names ? NULL : no_repos_text(&cache); /* a named repo absent already fails */
	if (empty) {
		add_cache_problem(problems, false, "no repos", empty, &n_fail, &n_warn);
		free(empty);
	}
	/* blobs and matches counted on the crew; the findings' loop, in
	 * results' order, only where some result is neither OK nor skipped */
	struct result_counts counts = { .v = &v, .lock = PTHREAD_MUTEX_INITIALIZER };
	hf_crew_for(v.count, COUNT_SLICE, SIZE_MAX, count_results, &counts);
	pthread_mutex_destroy(&counts.lock);
	size_t n_ok = counts.ok, n_unverified = 0, n_blobs = counts.blobs;
	for (size_t i = 0; counts.findings && i < v.count; i++) {
		const struct hf_blob_result *res = &v.results[i];
		if (res->state == HF_BLOB_OK)
			continue;
		if (res->state == HF_BLOB_SKIPPED)
			continue; /* non-plain blobs are already reported by the scan; the deadline's are counted below */
		bool unverified = hf_result_unverified(res);
		n_unverified += unverified;
		json_t *p = hf_result_json(&cache, res);
		char *msg = hf_result_text(&cache, res);
		bool fail =
			!unverified; /* unverified content warns here; the validate profile fails it (hf.integrity) */
		json_object_set_new(p, "severity", json_string(fail ? "fail" : "warn"));
		json_object_set_new(p, "message", json_text(msg));
		free(msg);
		json_array_append_new(problems, p);
		if (fail)
			n_fail++;
		else
			n_warn++;
	}
	if (v.timed_out) { /* one finding: how far it got and what the rest would take (issue 26) */
		char *where = hf_verify_stopped_text(&v);
		char *msg = xasprintf("stopped at the deadline (--deadline %g): %s", o.deadline, where);
		add_cache_problem(problems, true, "deadline", msg, &n_fail, &n_warn);
		free(msg);
		free(where);
	}
	const char *record_note = vs.record ? v.record_note : vs.record_why;
	char hashed[32], rate[32];
	human_bytes(v.bytes, hashed, sizeof(hashed));
	human_bytes(v.seconds > 0 ? (uint64_t)((double)v.bytes / v.seconds) : 0, rate, sizeof(rate));
	if (strcmp(o.format, "json") == 0) {
		json_t *j = json_object();
		json_object_set_new(j, "schema", json_string("gpugate/hf-verify/v1"));
		json_object_set_new(j, "verdict", json_string(n_fail ? "fail" : "pass"));
		json_object_set_new(j, "cache", json_text(cache.path));
		json_object_set_new(j, "repos", json_integer((json_int_t)n_repos));
		json_object_set_new(j, "blobs", json_integer((json_int_t)n_blobs));
		json_object_set_new(j, "copies", json_integer((json_int_t)(v.count - n_blobs)));
		json_object_set_new(j, "matching", json_integer((json_int_t)n_ok));
		json_object_set_new(j, "unverified", json_integer((json_int_t)n_unverified));
		json_object_set_new(j, "bytes_hashed", json_integer((json_int_t)v.bytes));
		json_object_set_new(
			j, "bytes_left",
			json_integer((json_int_t)(v.bytes_to_hash > v.bytes ? v.bytes_to_hash - v.bytes : 0)));
		json_object_set_new(j, "hashed", json_integer((json_int_t)v.hashed));
		json_object_set_new(j, "trusted", json_integer((json_int_t)v.trusted));
		json_object_set_new(j, "record", json_text_or_null(vs.record));
		json_object_set_new(j, "record_note", json_text(record_note));
		json_object_set_new(j, "timed_out", json_boolean(v.timed_out));
		json_object_set_new(j, "seconds", json_real(v.seconds));
		json_object_set_new(j, "threads", json_integer((json_int_t)v.threads));
		json_object_set_new(j, "revisions", json_integer((json_int_t)n_revs));
		json_object_set_new(j, "revisions_without_listing", json_integer((json_int_t)n_unlisted));
		json_object_set_new(j, "problems", problems);
		print_json(j);
	} else {
		for (size_t i = 0; i < json_array_size(problems); i++) {
			json_t *p = json_array_get(problems, i);
			const char *sev = json_string_value(json_object_get(p, "severity"));
			char *msg = escape_line(json_string_value(json_object_get(p, "message")));
			printf("%s %s\n", strcmp(sev, "fail") == 0 ? "FAIL" : "warn", msg);
			free(msg);
		}
		printf("hf verify: %zu %s hashed, %zu %s trusted from the record of earlier runs (stat data unchanged%s)%s%s\n",
		       v.hashed, count_noun(v.hashed, "file", "files"), v.trusted,
		       count_noun(v.trusted, "blob", "blobs"), o.full ? "; --full trusts none" : "",
		       record_note[0] ? "; record: " : "", record_note);
		/* the caveat before the summary line, which stays last */
		if (n_unlisted)
			printf("hf verify: completeness of %zu of %zu %s not checked: no usable trees/<commit>.json listing "
			       "(re-run the download with a current huggingface_hub, or gpugate hf fetch, to write one)\n",
			       n_unlisted, n_revs, count_noun(n_revs, "revision", "revisions"));
		printf("hf verify: %s: %zu %s, %zu %s, %zu of %zu %s %s hash, %zu unverified, %s hashed in %.2f s (%s/s); "
		       "%zu %s, %zu %s\n",
		       n_fail ? "FAIL" : "ok", n_repos, count_noun(n_repos, "repo", "repos"), n_blobs,
		       count_noun(n_blobs, "blob", "blobs"), n_ok, v.count, count_noun(v.count, "file", "files"),
		       count_noun(v.count, "matches its", "match their"), n_unverified, hashed, v.seconds, rate, n_fail,
		       count_noun(n_fail, "problem", "problems"), n_warn, count_noun(n_warn, "warning", "warnings"));
		json_decref(problems);
	}
	tl_mark("report out");
	/* the process ends with the command: its pages go back with it at once
	 * (a piecewise free of a 20,000-blob scan is 20,000 frees and the unmap
	 * of each large array, a TLB shootdown to the crew's CPUs each). The
	 * sanitizer build frees them, so that LeakSanitizer still tells a leak
	 * from what the run holds to the end (as cmd_check does). */
	if (BUILD_ASAN) {
		hf_verify_free(&v);
		hf_cache_free(&cache);
		free_list(folders);
		free(vs.record);
	}
	tl_mark("freed");
	return n_fail ? EXIT_UNHEALTHY : EXIT_HEALTHY;
}

int cmd_hf(int argc, char **argv)
{
	if (argc < 2) {
		/* hf's own usage, not the top-level one's pointer */
		fputs("gpugate: hf wants a subcommand: where, scan, verify or fetch\n\n", stderr);
		fputs(hf_usage, stderr);
		return EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "where") == 0)
		return hf_where(argc - 1, argv + 1);
	if (strcmp(sub, "scan") == 0)
		return hf_scan(argc - 1, argv + 1);
	if (strcmp(sub, "verify") == 0)
		return hf_verify(argc - 1, argv + 1);
	if (strcmp(sub, "fetch") == 0)
		return cmd_hf_fetch(argc - 1, argv + 1);
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(hf_usage, stdout);
		return EXIT_HEALTHY;
	}
	return usage_error("hf: unknown subcommand '%s' (where, scan, verify, fetch)", sub);
}
