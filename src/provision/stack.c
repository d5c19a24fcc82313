/* gpugate stack fetch|verify: the .deb files of a pinned driver stack,
 * downloaded in parallel with their sha256 checked, then each opened to
 * check its control fields and the Depends between the stack's packages. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deb.h"
#include "download.h"
#include "lib/debrelation.h"
#include "lib/dpkg_status.h"
#include "lib/safe_io.h"
#include "lib/util.h"
#include "manifest.h"
#include "provision.h"

static const char usage_text[] =
	"usage: gpugate stack fetch --manifest FILE --dest DIR [--allow-unpinned] [--jobs N]\n"
	"       gpugate stack verify --manifest FILE DIR\n"
	"fetch downloads the .deb files a manifest pins (images/stacks/*.yaml) into DIR, then verifies\n"
	"them; verify checks the .deb files in DIR: sha256, Package, Version, Architecture, and that\n"
	"the stack's own dependencies are met.\n"
	"exit status: 0 verified, 1 a package failed, 3 usage or manifest error (or no folder DIR)\n";

struct stack_opts {
	const char *manifest;
	const char *dir;
	bool allow_unpinned;
	int jobs;
};

static bool arch_ok(const char *want, const char *have)
{
	return strcmp(want, have) == 0 || strcmp(have, "all") == 0;
}

/* Does a stack package Provide name? Only for an unversioned relation: a
 * versioned one is met by a versioned Provides alone (dpkg's
 * deppossi_pkg_iter over provides), which this leaves to system_packages. */
static bool stack_provides(const struct manifest *m, const struct deb_control *all, const bool *have,
			   const struct rel_alt *alt)
{
	for (size_t i = 0; i < m->count && !alt->version; i++)
		if (have[i] && all[i].provides &&
		    dpkg_provides_names(all[i].provides, strlen(all[i].provides), alt->name))
			return true;
	return false;
}

/* One "Depends" field: every relation naming a stack package must be met
 * inside the stack (by the package or, unversioned, by what a stack package
 * Provides: Debian's libigc2 Provides the libigc2+llvm16 intel-opencl-icd
 * Depends on); others must be in system_packages when that is listed. */
static int check_depends(const struct manifest *m, const struct deb_control *all, const bool *have,
			 const struct deb_control *ctl, const char *field, const char *text, const char *file)
{
	if (!text)
		return 0;
	int problems = 0;
	char **rels = split_list(text, NULL);
	for (char **r = rels; *r; r++) {
		struct relation rel;
		char err[300];
		if (relation_parse(*r, &rel, err, sizeof(err)) < 0) {
			printf("FAIL %s: %s: %s\n", file, field, err);
			problems++;
			continue;
		}
		bool names_stack = false, met = false, system = false;
		const struct manifest_pkg *near = NULL;
		for (size_t a = 0; a < rel.count; a++) {
			const struct rel_alt *alt = &rel.alts[a];
			for (size_t i = 0; i < m->count; i++) {
				if (strcmp(m->pkgs[i].package, alt->name) != 0)
					continue;
				names_stack = true;
				near = &m->pkgs[i];
				if (rel_op_holds(alt->op, m->pkgs[i].version, alt->version ? alt->version : ""))
					met = true;
			}
			if (stack_provides(m, all, have, alt))
				names_stack = met = true;
			for (size_t i = 0; i < m->n_system; i++)
				system = system || strcmp(m->system_packages[i], alt->name) == 0;
		}
		if (names_stack && !met) {
			printf("FAIL %s: %s %s '%s' is not met: the stack has %s %s\n", file, ctl->package, field, *r,
			       near->package, near->version);
			problems++;
		} else if (!names_stack && m->system_packages && !system) {
			printf("FAIL %s: %s %s '%s': neither in the stack nor in system_packages\n", file, ctl->package,
			       field, *r);
			problems++;
		}
		relation_free(&rel);
	}
	free_list(rels);
	return problems;
}

static int verify(const struct manifest *m, const char *dir)
{
	int failed = 0;
	struct deb_control *ctl = xcalloc(m->count, sizeof(*ctl));
	bool *have = xcalloc(m->count, sizeof(*have));
	for (size_t i = 0; i < m->count; i++) {
		const struct manifest_pkg *p = &m->pkgs[i];
		char *path = xasprintf("%s/%s", dir, p->filename);
		char sha[65], err[600];
		/* a FIFO or a device in the folder: refused before a byte is read */
		struct stat st;
		int fd = safe_open_read(path, SAFE_KIND_REG, 0, &st, err, sizeof(err));
		if (fd >= 0)
			close(fd);
		int rc = fd < 0 ? fd : hash_file(path, sha, NULL, NULL);
		if (fd < 0) {
			printf("FAIL %s\n", err);
			failed++;
		} else if (rc < 0) {
			printf("FAIL %s: %s\n", path, strerror(-rc));
			failed++;
		} else if (p->sha256[0] && strcmp(sha, p->sha256) != 0) {
			printf("FAIL %s: sha256 %s, the manifest pins %s\n", path, sha, p->sha256);
			failed++;
		} else if (deb_read_control(path, &ctl[i], err, sizeof(err)) < 0) {
			printf("FAIL %s\n", err);
			failed++;
		} else {
			struct deb_control *c = &ctl[i];
			int bad = 0;
			if (strcmp(c->package, p->package) != 0)
				printf("FAIL %s: Package is %s, the manifest says %s\n", path, c->package, p->package),
					bad++;
			if (strcmp(c->version, p->version) != 0)
				printf("FAIL %s: Version is %s, the manifest says %s\n", path, c->version, p->version),
					bad++;
			if (!arch_ok(p->architecture, c->architecture))
				printf("FAIL %s: Architecture is %s, the manifest says %s\n", path, c->architecture,
				       p->architecture),
					bad++;
			if (!bad) {
				have[i] = true;
				printf("ok   %s %s %s  %s%s\n", c->package, c->version, c->architecture, p->filename,
				       p->sha256[0] ? "" : "  (unpinned: no sha256 in the manifest)");
			}
			failed += bad;
		}
		free(path);
	}
	for (size_t i = 0; i < m->count; i++)
		if (have[i]) {
			failed += check_depends(m, ctl, have, &ctl[i], "Pre-Depends", ctl[i].pre_depends,
						m->pkgs[i].filename);
			failed += check_depends(m, ctl, have, &ctl[i], "Depends", ctl[i].depends, m->pkgs[i].filename);
		}
	for (size_t i = 0; i < m->count; i++)
		deb_control_free(&ctl[i]);
	free(ctl);
	free(have);
	printf("%s: %zu %s, %s\n", m->stack, m->count, count_noun(m->count, "package", "packages"),
	       failed ? "verification FAILED" : "all verified (sha256, control fields, dependencies)");
	return failed ? PROV_FAILED : PROV_OK;
}

static int fetch(const struct manifest *m, const struct stack_opts *o)
{
	size_t unpinned = 0;
	for (size_t i = 0; i < m->count; i++) {
		if (!m->pkgs[i].sha256[0]) {
			unpinned++;
			if (!o->allow_unpinned)
				fprintf(stderr, "gpugate: %s:%zu: %s has no sha256\n", m->path, m->pkgs[i].line,
					m->pkgs[i].package);
		}
	}
	if (unpinned && !o->allow_unpinned) {
		fprintf(stderr,
			"gpugate: refusing to fetch %zu unpinned package(s); add their sha256 "
			"from the publisher, or pass --allow-unpinned\n",
			unpinned);
		return PROV_FAILED;
	}
	int rc = mkdir_p(o->dir, 0755);
	if (rc < 0) {
		fprintf(stderr, "gpugate: %s: %s\n", o->dir, strerror(-rc));
		return PROV_FAILED;
	}
	struct dl_job *jobs = xcalloc(m->count, sizeof(*jobs));
	char **paths = xcalloc(m->count * 2, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < m->count; i++) {
		const struct manifest_pkg *p = &m->pkgs[i];
		char *final = xasprintf("%s/%s", o->dir, p->filename);
		char sha[65];
		if (p->sha256[0] && hash_file(final, sha, NULL, NULL) == 0 && strcmp(sha, p->sha256) == 0) {
			fprintf(stderr, "gpugate: %s already there and verified\n", final);
			free(final);
			continue;
		}
		paths[2 * n] = final;
		paths[2 * n + 1] = xasprintf("%s.part", final);
		struct dl_job *j = &jobs[n++];
		j->url = p->url;
		j->final_path = final;
		j->tmp_path = paths[2 * n - 1];
		j->size = -1;
		j->sha256 = p->sha256[0] ? p->sha256 : NULL;
		j->keep_partial = true; /* a later run resumes where this one stopped */
		j->label = p->filename;
	}
	struct dl_options opt;
	dl_options_init(&opt);
	opt.parallel = o->jobs;
	size_t failed = dl_run(jobs, n, &opt);
	for (size_t i = 0; i < n; i++)
		if (!jobs[i].ok)
			fprintf(stderr, "gpugate: %s: %s\n", jobs[i].url, jobs[i].error);
	for (size_t i = 0; i < 2 * n; i++)
		free(paths[i]);
	free(paths);
	free(jobs);
	if (failed) {
		fprintf(stderr, "gpugate: %zu of %zu %s failed\n", failed, n, count_noun(n, "download", "downloads"));
		return PROV_FAILED;
	}
	return verify(m, o->dir);
}

int stack_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? PROV_USAGE : PROV_OK;
	}
	const char *verb = argv[1];
	bool is_fetch = strcmp(verb, "fetch") == 0;
	if (!is_fetch && strcmp(verb, "verify") != 0)
		return usage_error("stack: unknown command '%s' (fetch, verify)", verb);
	/* `stack fetch --help` as `stack --help`: the usage covers both verbs */
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage_text, stdout);
			return PROV_OK;
		}
	}
	enum { OPT_MANIFEST = 256, OPT_DEST, OPT_UNPINNED, OPT_JOBS };
	static const struct option longopts[] = {
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ "dest", required_argument, NULL, OPT_DEST },
		{ "allow-unpinned", no_argument, NULL, OPT_UNPINNED },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ NULL, 0, NULL, 0 },
	};
	struct stack_opts o = { .jobs = 8 };
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc - 1, argv + 1, ":", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MANIFEST:
			o.manifest = optarg;
			break;
		case OPT_DEST:
			o.dir = optarg;
			break;
		case OPT_UNPINNED:
			o.allow_unpinned = true;
			break;
		case OPT_JOBS: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 64)
				return usage_error("stack %s: --jobs: '%s' is not a number from 1 to 64", verb, optarg);
			o.jobs = (int)v;
			break;
		}
		case ':':
			return usage_error("stack %s: option '%s' needs an argument", verb, argv[optind]);
		default:
			return usage_error("stack %s: unknown option '%s'", verb, argv[optind]);
		}
	}
	int rest = argc - 1 - optind;
	if (!is_fetch && rest == 1 && !o.dir)
		o.dir = argv[1 + optind];
	else if (rest > 0)
		return usage_error("stack %s: unexpected argument '%s'", verb, argv[1 + optind]);
	if (!o.manifest)
		return usage_error("stack %s: --manifest FILE is required", verb);
	if (!o.dir)
		return usage_error(
			is_fetch ? "stack fetch: --dest DIR is required"
				 : "stack verify: give the folder the .deb files are in (stack fetch's --dest DIR)");
	struct manifest m;
	char err[600];
	if (manifest_load(o.manifest, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpugate: manifest error: %s\n", err);
		manifest_free(&m);
		return PROV_USAGE;
	}
	/* a folder that is not there is one error, not a FAIL per package */
	struct stat st;
	const char *no_dir = NULL;
	if (!is_fetch && stat(o.dir, &st) < 0)
		no_dir = strerror(errno);
	else if (!is_fetch && !S_ISDIR(st.st_mode))
		no_dir = "not a folder";
	if (no_dir) {
		fprintf(stderr, "gpugate: stack verify: %s: %s\n", o.dir, no_dir);
		manifest_free(&m);
		return PROV_USAGE;
	}
	int rc = is_fetch ? fetch(&m, &o) : verify(&m, o.dir);
	manifest_free(&m);
	return rc;
}
