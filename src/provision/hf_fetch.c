/* gpugate hf fetch: downloads a repo's files into the Hugging Face hub cache
 * in huggingface_hub's own layout (huggingface_hub's
 * src/huggingface_hub/file_download.py: hf_hub_download, get_hf_file_metadata;
 * _snapshot_download.py), CACHEDIR.TAG and trees/<commit>.json included, so
 * the Python libraries then run offline on it. Every write goes through
 * hf_cache_write.c. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "download.h"
#include "hf/cache_format.h"
#include "hf/location.h"
#include "hf_cache_write.h"
#include "hf_tree.h"
#include "http.h"
#include "hub_answer.h"
#include "lib/escape.h"
#include "lib/safe_io.h"
#include "lib/util.h"
#include "provision.h"

struct fetch_file {
	char *path; /* inside the repo */
	char *etag;
	int64_t size;
	size_t blob; /* index into blobs */
	char error[600];
};

struct fetch_blob {
	char *etag;
	int64_t size;
	char *tmp_name; /* under blobs/; the final name is etag */
	char *label;
	int lock_fd;
	bool cached; /* present and verified before we started */
	bool ok;
};

struct hf_fetch {
	const char *repo;
	const char *type; /* model, dataset, space */
	char *revision;
	char *endpoint;
	char *cache;
	char *folder;              /* models--org--name */
	struct hf_cache_dirs dirs; /* open folders of the cache (hf_cache_write.h) */
	bool whole_repo;           /* no FILE named: the listing is written too */
	struct hub_tree tree;      /* the hub's tree listing at the commit (whole_repo) */
	bool have_tree;
	long timeout_seconds; /* --timeout: the whole fetch; 0: none */
	long idle_seconds;    /* --idle-timeout */
	double deadline;
	pthread_mutex_t write_mu; /* resolve threads writing .no_exist markers */
	char *commit;
	struct curl_slist *headers;
	CURL *meta; /* one handle for the metadata requests: one connection */
	bool have_token;
	int jobs;
	struct dl_options dl; /* download settings; dl.retries (GPUGATE_RETRIES) read once */
	bool quiet;
	struct fetch_file *files;
	size_t n_files;
	struct fetch_blob *blobs;
	size_t n_blobs;
};

static const char usage_text[] =
	"usage: gpugate hf fetch REPO[@REVISION] [FILE...] [--repo-type model|dataset|space]\n"
	"                        [--cache-dir DIR] [--jobs N] [--quiet]\n"
	"                        [--timeout SECONDS] [--idle-timeout SECONDS]\n"
	"  --timeout       the whole fetch gives up after this long (default 21600, 6 h; 0: never)\n"
	"  --idle-timeout  a transfer below 1 KiB/s this long is abandoned (default 30)\n";

/* One line on stderr, "gpugate: " and the message escaped as one line
 * (src/lib/escape.c): file names, etags, URLs and errors come from the hub. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *shown = escape_line(msg);
	fprintf(stderr, "gpugate: %s\n", shown);
	free(shown);
	free(msg);
}

/* A relative path of plain components: it becomes a path under snapshots/. */
static const char *path_problem(const char *p, bool is_revision)
{
	if (!p[0])
		return "is empty";
	if (p[0] == '/')
		return "is an absolute path";
	if (strchr(p, '\\'))
		return "contains a backslash";
	if (!is_revision && isalnum_ascii(p[0]) && p[1] == ':')
		return "starts with a drive letter";
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "contains a control character";
	for (const char *c = p; *c;) {
		size_t len = strcspn(c, "/");
		if (len == 0)
			return "has an empty path component";
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return "has a '.' or '..' component";
		c += len;
		if (*c == '/')
			c++;
		if (!*c && c[-1] == '/')
			return "ends with '/'";
	}
	return NULL;
}

static char *url_quote(const char *s, bool keep_slash)
{
	struct strbuf sb = STRBUF_INIT;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum_ascii((char)*p) || strchr("-_.~", *p) || (keep_slash && *p == '/'))
			sb_add(&sb, (const char *)p, 1);
		else
			sb_printf(&sb, "%%%02X", *p);
	}
	return sb_detach(&sb);
}

static const char *url_prefix(const char *type)
{
	if (strcmp(type, "dataset") == 0)
		return "datasets/";
	if (strcmp(type, "space") == 0)
		return "spaces/";
	return "";
}

static char *origin_of(const char *url)
{
	const char *s = strstr(url, "://");
	if (!s)
		return xstrdup(url);
	const char *slash = strchr(s + 3, '/');
	return slash ? xstrndup(url, (size_t)(slash - url)) : xstrdup(url);
}

static void describe_http_error(const struct hf_fetch *f, const struct http_response *r, const char *what, char *out,
				size_t n)
{
	char detail[300] = "";
	if (r->error_code || r->error_message)
		snprintf(detail, sizeof(detail), " (%s%s%s)", r->error_code ? r->error_code : "",
			 r->error_code && r->error_message ? ": " : "", r->error_message ? r->error_message : "");
	const char *hint = "";
	if (r->code == 401 || r->code == 403)
		hint = f->have_token ? ": the token has no access to this repo (gated: accept its terms on the hub)"
				     : ": the repo is gated or private; set HF_TOKEN or log in (token file)";
	else if (r->code == 404 && r->error_code && strcmp(r->error_code, "EntryNotFound") == 0)
		hint = ": no such file at this revision";
	else if (r->code == 404 && r->error_code && strcmp(r->error_code, "RevisionNotFound") == 0)
		hint = ": no such branch, tag or commit";
	else if (r->code == 404)
		hint = f->have_token ? ": repository not found" : ": repository not found (or private: set HF_TOKEN)";
	snprintf(out, n, "%s: HTTP %ld%s%s", what, r->code, detail, hint);
}

/* A request to the hub with this fetch's headers, retries and timeouts; a
 * HEAD is not redirected (its X-Linked-* headers are the hub's answer),
 * the API GETs are. */
static struct http_request hub_request(const struct hf_fetch *f, const char *url, CURL *handle, bool head)
{
	return (struct http_request){ .url = url,
				      .headers = f->headers,
				      .head = head,
				      .follow_redirects = !head,
				      .retries = f->dl.retries,
				      .backoff = 0.5,
				      .handle = handle,
				      .idle_seconds = f->idle_seconds,
				      .deadline = f->deadline };
}

/* GET /api/{type}s/{repo}/revision/{rev}: the commit and siblings[].rfilename. */
static int list_files(struct hf_fetch *f)
{
	char *rev = url_quote(f->revision, false);
	char *url = xasprintf("%s/api/%ss/%s/revision/%s", f->endpoint, f->type, f->repo, rev);
	free(rev);
	struct http_request req = hub_request(f, url, f->meta, false);
	struct http_response r;
	int rc = -1;
	char msg[800];
	if (http_fetch(&req, &r) < 0) {
		say("%s: %s", url, r.error);
		goto out;
	}
	if (r.code != 200) {
		describe_http_error(f, &r, url, msg, sizeof(msg));
		say("listing %s@%s: %s", f->repo, f->revision, msg);
		goto out;
	}
	char **paths, why[300];
	size_t n_paths;
	if (hub_parse_revision(r.body.buf, r.body.len, &f->commit, &paths, &n_paths, why, sizeof(why)) < 0) {
		say("%s: %s", url, why);
		goto out;
	}
	f->files = xcalloc(n_paths + 1, sizeof(*f->files));
	for (size_t i = 0; i < n_paths; i++)
		f->files[f->n_files++].path = paths[i]; /* ownership moves */
	free(paths);
	rc = 0;
out:
	http_response_free(&r);
	free(url);
	return rc;
}

/* HEAD .../resolve/{rev}/{path} without redirects, following only relative
 * Location (renamed repos); reads commit, etag and size from the headers. */
static int resolve_file(struct hf_fetch *f, struct fetch_file *file, CURL *handle)
{
	const char *rev = f->commit ? f->commit : f->revision;
	char *qrev = url_quote(rev, false), *qpath = url_quote(file->path, true);
	char *url = xasprintf("%s/%s%s/resolve/%s/%s", f->endpoint, url_prefix(f->type), f->repo, qrev, qpath);
	free(qrev);
	free(qpath);
	struct http_response r;
	int rc = -1;
	for (int hop = 0;; hop++) {
		struct http_request req = hub_request(f, url, handle, true);
		if (http_fetch(&req, &r) < 0) {
			snprintf(file->error, sizeof(file->error), "%s", r.error);
			goto out;
		}
		bool relative = r.location && r.location[0] == '/' && r.location[1] != '/';
		if (r.code >= 300 && r.code < 400 && relative && hop < 5) {
			char *origin = origin_of(url);
			free(url);
			url = xasprintf("%s%s", origin, r.location);
			free(origin);
			http_response_free(&r);
			continue;
		}
		break;
	}
	if (r.code < 200 || r.code >= 400) {
		describe_http_error(f, &r, "HEAD", file->error, sizeof(file->error));
		if (r.code == 404 && r.error_code && strcmp(r.error_code, "EntryNotFound") == 0 && r.repo_commit &&
		    hf_is_commit(r.repo_commit)) {
			/* as huggingface_hub: remember that the file is absent at this commit */
			char *marker = hf_no_exist_rel(r.repo_commit, file->path);
			char err[400];
			pthread_mutex_lock(&f->write_mu); /* the folders open once */
			if (hfw_touch(&f->dirs, marker, err, sizeof(err)) < 0)
				say("%s", err);
			pthread_mutex_unlock(&f->write_mu);
			free(marker);
		}
		goto out;
	}
	struct hub_meta meta;
	if (hub_resolve_meta(&r, &meta, file->error, sizeof(file->error)) < 0)
		goto out;
	file->etag = meta.etag;
	file->size = meta.size;
	meta.etag = NULL;
	if (!f->commit) {
		f->commit = meta.commit; /* checked: 40 hex digits */
		meta.commit = NULL;
		rc = 0;
	} else if (strcmp(f->commit, meta.commit) != 0) {
		snprintf(file->error, sizeof(file->error),
			 "resolved to commit %s, but the other files to %s "
			 "(the revision moved during the fetch; run it again)",
			 meta.commit, f->commit);
	} else {
		rc = 0;
	}
	hub_meta_free(&meta);
out:
	http_response_free(&r);
	free(url);
	return rc;
}

/* GET /api/{type}s/{repo}/tree/{commit}?recursive=true&expand=false, every
 * page (Link: rel="next"), as huggingface_hub's list_repo_tree: the listing
 * trees/<commit>.json is made of. A failure only means no listing is
 * written; the files are fetched all the same. */
static void fetch_tree(struct hf_fetch *f)
{
	char *origin = origin_of(f->endpoint);
	char *url = xasprintf("%s/api/%ss/%s/tree/%s?recursive=true&expand=false", f->endpoint, f->type, f->repo,
			      f->commit);
	char why[600] = "";
	/* a hub that lies could page forever: a page or cursor seen before, or
	 * more pages or entries than the caps, ends the listing (issue 26) */
	char **seen = NULL, **cursors = NULL; /* each page's URL and cursor (or NULL) */
	size_t n_seen = 0;
	for (int page = 0; url && !why[0]; page++) {
		char *cursor = hub_page_cursor(url);
		for (size_t i = 0; i < n_seen && !why[0]; i++) {
			if (strcmp(seen[i], url) == 0)
				snprintf(why, sizeof(why), "page %d repeats page %zu (%.300s): the hub's pages loop",
					 page + 1, i + 1, url);
			else if (cursor && cursors[i] && strcmp(cursor, cursors[i]) == 0)
				snprintf(why, sizeof(why),
					 "page %d repeats the cursor of page %zu (%.200s): the hub's pages loop",
					 page + 1, i + 1, cursor);
		}
		seen = xrealloc(seen, (n_seen + 1) * sizeof(*seen));
		cursors = xrealloc(cursors, (n_seen + 1) * sizeof(*cursors));
		seen[n_seen] = xstrdup(url);
		cursors[n_seen++] = cursor;
		if (why[0])
			break;
		struct http_request req = hub_request(f, url, f->meta, false);
		struct http_response r;
		char err[400];
		if (http_fetch(&req, &r) < 0)
			snprintf(why, sizeof(why), "%s: %s", url, r.error);
		else if (r.code != 200)
			describe_http_error(f, &r, url, why, sizeof(why));
		else if (hub_parse_tree_page(r.body.buf, r.body.len, &f->tree, err, sizeof(err)) < 0)
			snprintf(why, sizeof(why), "%s: %s", url, err);
		else if (f->tree.n > HUB_TREE_MAX_ENTRIES)
			snprintf(why, sizeof(why), "more than %d entries in %d pages (the most this reader takes)",
				 HUB_TREE_MAX_ENTRIES, page + 1);
		char *next = why[0] ? NULL : hub_next_page(r.link);
		if (next && page + 1 >= HUB_TREE_MAX_PAGES)
			snprintf(why, sizeof(why), "more than %d pages (the most this reader takes)",
				 HUB_TREE_MAX_PAGES);
		http_response_free(&r);
		free(url);
		url = NULL;
		/* the token goes with every request: only to the hub itself */
		if (!next || why[0]) {
			/* the listing ends here */
		} else if (next[0] == '/' && next[1] != '/')
			url = xasprintf("%s%s", origin, next);
		else if (str_starts_with(next, origin) && strchr("/?", next[strlen(origin)]))
			url = xstrdup(next);
		else
			snprintf(why, sizeof(why), "the next page is on another host (%.200s)", next);
		free(next);
	}
	for (size_t i = 0; i < n_seen; i++) {
		free(seen[i]);
		free(cursors[i]);
	}
	free(seen);
	free(cursors);
	free(url);
	free(origin);
	if (why[0]) {
		text_sanitize(why);
		say("warning: %s@%s: no trees/%s.json is written: the tree listing failed: %s", f->repo, f->revision,
		    f->commit, why);
		hub_tree_free(&f->tree);
		return;
	}
	f->have_tree = true;
}

static int lock_blob(struct hf_fetch *f, struct fetch_blob *b)
{
	char *name = xasprintf("%s.lock", b->etag);
	char *shown = xasprintf("%s/" HF_LOCKS "/%s/%s", f->cache, f->folder, name);
	int rc = 0;
	b->lock_fd = openat(f->dirs.locks, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0664);
	struct stat st;
	if (b->lock_fd < 0)
		rc = errno == ELOOP ? -EMLINK : -errno;
	else if (fstat(b->lock_fd, &st) < 0 || !S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc < 0) {
		say("%s: %s", shown,
		    rc == -EMLINK   ? "is a symlink: refusing to write through it"
		    : rc == -EINVAL ? "is not a regular file"
				    : strerror(-rc));
	} else if (flock(b->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK) {
			say("waiting for another download of %s (%s)", b->label, shown);
			/* polled, so that --timeout also bounds the wait for a stuck fetch */
			while (flock(b->lock_fd, LOCK_EX | LOCK_NB) < 0 && rc == 0) {
				if (errno != EWOULDBLOCK && errno != EINTR)
					rc = -errno;
				else if (f->deadline > 0 && monotonic_seconds() >= f->deadline)
					rc = -ETIMEDOUT;
				else
					sleep_seconds(0.05);
			}
		} else if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL) {
			say("%s: this filesystem has no flock (%s); going on unlocked", shown, strerror(errno));
		} else {
			rc = -errno;
		}
		if (rc == -ETIMEDOUT)
			say("%s: the overall timeout of %ld s ran out (--timeout) waiting for "
			    "another download of %s",
			    shown, f->timeout_seconds, b->label);
		else if (rc < 0)
			say("%s: %s", shown, strerror(-rc));
	}
	/* 0664 whatever the umask, as huggingface_hub's lock files, so that the
	 * users sharing a cache can wait on them: utils/_fixes.py WeakFileLock
	 * passes mode=0o664, which filelock's UnixFileLock sets with fchmod once
	 * the lock is held (a file of another owner keeps its mode) */
	if (rc == 0)
		(void)fchmod(b->lock_fd, 0664);
	free(name);
	free(shown);
	return rc;
}

/* A blob already under its final name is kept only when it is a regular
 * file (not a link) whose size and hash match its name. */
static bool blob_verified(struct hf_fetch *f, struct fetch_blob *b)
{
	struct stat st;
	int fd = safe_open_read_at(f->dirs.blobs, b->etag, O_NOFOLLOW, SAFE_KIND_REG, 0, &st, NULL, 0);
	if (fd == -ENOENT)
		return false;
	bool lfs = strlen(b->etag) == 64;
	char sha256[65] = "", sha1[41] = "";
	const char *why = NULL;
	if (fd < 0)
		why = fd == -ELOOP                     ? "is a symlink"
		      : fd == -EINVAL || fd == -EISDIR ? "is not a regular file"
						       : "cannot be opened";
	else if (st.st_size != b->size)
		why = "has the wrong size";
	else if (hash_fd(fd, lfs ? sha256 : NULL, lfs ? NULL : sha1, NULL) < 0)
		why = "cannot be read";
	else if (strcmp(lfs ? sha256 : sha1, b->etag) != 0)
		why = "does not match its hash";
	if (fd >= 0)
		close(fd);
	if (!why)
		return true;
	say("%s/blobs/%s %s; downloading it again", f->folder, b->etag, why);
	/* the name itself goes (a link is removed, never followed) */
	if (unlinkat(f->dirs.blobs, b->etag, 0) < 0 && errno != ENOENT)
		say("%s/blobs/%s: %s", f->folder, b->etag, strerror(errno));
	return false;
}

/* Appends the blob that file names; f->blobs has room (collect_blobs). */
static size_t add_blob(struct hf_fetch *f, const struct fetch_file *file)
{
	struct fetch_blob *b = &f->blobs[f->n_blobs];
	memset(b, 0, sizeof(*b));
	b->etag = xstrdup(file->etag);
	b->size = file->size;
	unsigned char rnd[4];
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		memset(rnd, 0, sizeof(rnd));
	b->tmp_name = xasprintf("%s.%02x%02x%02x%02x" HF_INCOMPLETE, b->etag, rnd[0], rnd[1], rnd[2], rnd[3]);
	b->label = xstrdup(file->path);
	b->lock_fd = -1;
	return f->n_blobs++;
}

/* File indices by etag, then by index: the first file naming a blob labels it. */
static int cmp_file_etag(const void *a, const void *b, void *files)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct fetch_file *fs = files;
	int c = strcmp(fs[i].etag, fs[j].etag);
	return c ? c : (i > j) - (i < j);
}

/* One blob per distinct etag among the resolved files, in etag order (the
 * order locks are taken in, so two fetches never wait on each other in a
 * circle), each file pointing at its blob. */
static void collect_blobs(struct hf_fetch *f)
{
	size_t *order = xcalloc(f->n_files + 1, sizeof(*order)), n = 0;
	for (size_t i = 0; i < f->n_files; i++)
		if (!f->files[i].error[0])
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_file_etag, f->files);
	f->blobs = xcalloc(n + 1, sizeof(*f->blobs));
	for (size_t k = 0; k < n; k++) {
		struct fetch_file *file = &f->files[order[k]];
		if (k == 0 || strcmp(file->etag, f->files[order[k - 1]].etag) != 0)
			add_blob(f, file);
		file->blob = f->n_blobs - 1;
	}
	free(order);
}

/* snapshots/<commit>/<path> -> ../../blobs/<etag> (one more ../ per folder),
 * made under a temp name and renamed over whatever was there. */
static int link_snapshot(struct hf_fetch *f, const struct fetch_file *file, char *err, size_t n)
{
	char *link = hf_snapshot_rel(f->commit, file->path);
	char *target = hf_snapshot_link_target(file->path, file->etag);
	int rc = hfw_link(&f->dirs, link, target, err, n);
	free(target);
	free(link);
	return rc;
}

static int write_ref(struct hf_fetch *f)
{
	if (strcmp(f->revision, f->commit) == 0)
		return 0;
	char *ref = hf_ref_rel(f->revision);
	char err[600];
	/* Path.write_text: 0666 less the umask */
	int rc = hfw_write_file(&f->dirs, ref, f->commit, strlen(f->commit), 0666, err, sizeof(err));
	if (rc < 0)
		say("%s", err);
	free(ref);
	return rc;
}

/* trees/<commit>.json, huggingface_hub's listing of the commit, from the
 * hub's tree listing checked file by file against what was verified here.
 * A listing that disagrees is not written, with a warning: the snapshot is
 * still complete and verified. Returns -1 only when the write failed. */
static int write_listing(struct hf_fetch *f)
{
	struct hf_tree_verified *v = xcalloc(f->n_files + 1, sizeof(*v));
	for (size_t i = 0; i < f->n_files; i++)
		v[i] = (struct hf_tree_verified){ f->files[i].path, f->files[i].etag, f->files[i].size };
	char err[600];
	char *json = hf_tree_listing_json(&f->tree, v, f->n_files, err, sizeof(err));
	free(v);
	if (!json) {
		say("warning: %s@%s: no trees/%s.json is written (huggingface_hub cannot check "
		    "the snapshot's completeness offline): %s",
		    f->repo, f->revision, f->commit, err);
		return 0;
	}
	char *rel = hf_tree_rel(f->commit);
	/* huggingface_hub's mkstemp makes it 0600; readable here, so that another
	 * user checking a shared cache can read the listing too */
	int rc = hfw_write_file(&f->dirs, rel, json, strlen(json), 0644, err, sizeof(err));
	if (rc < 0)
		say("%s", err);
	free(rel);
	free(json);
	return rc;
}

/* A whole number of seconds from 0 to max. */
static int seconds_arg(const char *opt, const char *v, long max, long *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end || end == v || n < 0 || n > max)
		return usage_error("hf fetch: %s: '%s' is not a number of seconds from 0 to %ld", opt, v, max);
	*out = n;
	return 0;
}

static int parse_args(int argc, char **argv, struct hf_fetch *f, char ***names, size_t *n_names)
{
	enum { OPT_TYPE = 256, OPT_CACHE, OPT_JOBS, OPT_QUIET, OPT_TIMEOUT, OPT_IDLE };
	static const struct option longopts[] = {
		{ "repo-type", required_argument, NULL, OPT_TYPE },
		{ "cache-dir", required_argument, NULL, OPT_CACHE },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;
	optind = 1;
	int c;
	static const char optstring[] = ":h";
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TYPE:
			if (strcmp(optarg, "model") && strcmp(optarg, "dataset") && strcmp(optarg, "space"))
				return usage_error("hf fetch: --repo-type: '%s' is not model, dataset or space",
						   optarg);
			f->type = optarg;
			break;
		case OPT_CACHE:
			free(f->cache);
			f->cache = xstrdup(optarg);
			break;
		case OPT_JOBS: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 64)
				return usage_error("hf fetch: --jobs: '%s' is not a number from 1 to 64", optarg);
			f->jobs = (int)v;
			break;
		}
		case OPT_QUIET:
			f->quiet = true;
			break;
		case OPT_TIMEOUT:
			if (seconds_arg("--timeout", optarg, 30L * 24 * 3600, &f->timeout_seconds))
				return PROV_USAGE;
			break;
		case OPT_IDLE:
			if (seconds_arg("--idle-timeout", optarg, 24L * 3600, &f->idle_seconds))
				return PROV_USAGE;
			if (f->idle_seconds == 0)
				return usage_error("hf fetch: --idle-timeout: must be at least 1 second");
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default: /* '?' or ':' */
			return usage_bad_option("hf fetch", argv, optstring, longopts);
		}
	}
	if (optind >= argc)
		return usage_error("hf fetch: which repo? (REPO[@REVISION] [FILE...])");
	char *spec = argv[optind++];
	char *at = strchr(spec, '@');
	f->revision = xstrdup(at ? at + 1 : "main");
	f->repo = spec;
	if (at)
		*at = '\0';
	const char *why = hf_repo_id_problem(f->repo); /* huggingface_hub's rule, one owner */
	if (why)
		return usage_error("hf fetch: '%s' is not a repo id (%s)", f->repo, why);
	if ((why = path_problem(f->revision, true)))
		return usage_error("hf fetch: revision '%s' %s", f->revision, why);
	*names = argv + optind;
	*n_names = (size_t)(argc - optind);
	for (size_t i = 0; i < *n_names; i++)
		if ((why = path_problem((*names)[i], false)))
			return usage_error("hf fetch: file name '%s' %s", (*names)[i], why);
	return 0;
}

static void free_fetch(struct hf_fetch *f)
{
	for (size_t i = 0; i < f->n_files; i++) {
		free(f->files[i].path);
		free(f->files[i].etag);
	}
	free(f->files);
	for (size_t i = 0; i < f->n_blobs; i++) {
		if (f->blobs[i].lock_fd >= 0)
			close(f->blobs[i].lock_fd); /* releases the flock */
		free(f->blobs[i].etag);
		free(f->blobs[i].tmp_name);
		free(f->blobs[i].label);
	}
	free(f->blobs);
	curl_slist_free_all(f->headers);
	if (f->meta)
		curl_easy_cleanup(f->meta);
	free(f->revision);
	free(f->endpoint);
	free(f->cache);
	free(f->folder);
	free(f->commit);
	hub_tree_free(&f->tree);
	hfw_close(&f->dirs);
}

/* Reads the environment: offline mode, token, cache, endpoint. Returns 0 or an exit status. */
static int read_environment(struct hf_fetch *f)
{
	struct hf_location loc;
	hf_location_of_environ(environ, "", false, &loc);
	int rc = 0;
	char err[400], *token = NULL, why[PATH_MAX + 256], fix[256];
	const char *source = NULL;
	/* a relative cache would be written under the working folder: the
	 * wording every hf command and hf.location give (hf/location.h) */
	if (!f->cache && hf_location_relative(environ, &loc, why, sizeof(why), fix, sizeof(fix))) {
		say("%s", why);
		say("fix: %s", fix);
		rc = PROV_FAILED;
	} else if (loc.offline) {
		say("hf fetch: offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE);"
		    " no request was made. Unset it to download.");
		rc = PROV_FAILED;
	} else if (hf_token_of_environ(environ, "", &loc, &token, &source, err, sizeof(err)) < 0) {
		say("hf fetch: %s", err);
		rc = PROV_USAGE;
	}
	for (const char *c = token; c && *c && rc == 0; c++) {
		if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) {
			say("hf fetch: the token from %s contains a space or control character;"
			    " it cannot go into an HTTP header",
			    source);
			rc = PROV_USAGE;
		}
	}
	if (token && rc == 0) {
		char *h = xasprintf("Authorization: Bearer %s", token);
		f->headers = curl_slist_append(f->headers, h);
		explicit_bzero(h, strlen(h));
		free(h);
		f->have_token = true;
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (!f->cache) {
		f->cache = loc.hub_cache;
		loc.hub_cache = NULL;
	}
	f->endpoint = loc.endpoint;
	loc.endpoint = NULL;
	hf_location_free(&loc);
	return rc;
}

/* The files resolve_all hands out to its threads. */
struct resolver {
	struct hf_fetch *f;
	pthread_mutex_t mu;
	size_t next;
};

static void resolve_one(struct hf_fetch *f, struct fetch_file *file, CURL *handle)
{
	const char *why = path_problem(file->path, false);
	if (why)
		snprintf(file->error, sizeof(file->error), "refused: the name %s", why);
	else
		resolve_file(f, file, handle);
}

static void *resolve_worker(void *arg)
{
	struct resolver *r = arg;
	CURL *e = curl_easy_init(); /* a connection of its own; NULL: one per request */
	for (;;) {
		pthread_mutex_lock(&r->mu);
		size_t i = r->next++;
		pthread_mutex_unlock(&r->mu);
		if (i >= r->f->n_files)
			break;
		resolve_one(r->f, &r->f->files[i], e);
	}
	if (e)
		curl_easy_cleanup(e);
	return NULL;
}

/* Resolves every file (HEAD), then, for a whole repo, the tree listing. Until
 * a file pins the commit they go one at a time; the rest on up to --jobs
 * threads, as snapshot_download runs 8 hf_hub_download at once: one round
 * trip each, which a repo of many small files would otherwise pay in turn. */
static void resolve_all(struct hf_fetch *f)
{
	struct resolver r = { .f = f };
	while (r.next < f->n_files && !f->commit)
		resolve_one(f, &f->files[r.next++], f->meta);
	size_t left = f->n_files - r.next, want = left < (size_t)f->jobs ? left : (size_t)f->jobs;
	pthread_t threads[64];
	size_t started = 0;
	pthread_mutex_init(&r.mu, NULL);
	while (want > 1 && started < want && pthread_create(&threads[started], NULL, resolve_worker, &r) == 0)
		started++;
	if (started == 0 && left > 0) /* one file left, or no thread could start */
		for (; r.next < f->n_files; r.next++)
			resolve_one(f, &f->files[r.next], f->meta);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&r.mu);
	if (f->whole_repo && f->commit && f->n_files > 0)
		fetch_tree(f);
}

/* Downloads the blobs not verified in the cache already; sets each blob's ok. */
static int64_t download_blobs(struct hf_fetch *f, struct dl_job **jobs_out, size_t **blob_job_out, size_t *n_out)
{
	struct dl_job *jobs = xcalloc(f->n_blobs + 1, sizeof(*jobs));
	size_t *blob_job = xcalloc(f->n_blobs + 1, sizeof(*blob_job)); /* SIZE_MAX: no download */
	size_t n_jobs = 0;
	int64_t to_download = 0;
	for (size_t b = 0; b < f->n_blobs; b++) {
		struct fetch_blob *blob = &f->blobs[b];
		blob_job[b] = SIZE_MAX;
		if (lock_blob(f, blob) < 0)
			continue;
		if (blob_verified(f, blob)) {
			blob->cached = blob->ok = true;
			continue;
		}
		blob_job[b] = n_jobs;
		struct dl_job *j = &jobs[n_jobs++];
		char *qpath = url_quote(blob->label, true);
		j->url =
			xasprintf("%s/%s%s/resolve/%s/%s", f->endpoint, url_prefix(f->type), f->repo, f->commit, qpath);
		free(qpath);
		j->headers = f->headers;
		j->in_dir = true;
		j->dir_fd = f->dirs.blobs;
		j->tmp_path = blob->tmp_name;
		j->final_path = blob->etag;
		j->mode = 0666; /* less the umask: the mode huggingface_hub gives a blob (_chmod_and_move) */
		j->size = blob->size;
		/* hub_resolve_meta let through only these two forms */
		j->sha256 = strlen(blob->etag) == 64 ? blob->etag : NULL;
		j->git_sha1 = strlen(blob->etag) == 40 ? blob->etag : NULL;
		j->label = blob->label;
		to_download += blob->size;
	}
	struct dl_options o = f->dl;
	o.parallel = f->jobs;
	if (f->quiet)
		o.progress = false;
	dl_run(jobs, n_jobs, &o);
	for (size_t b = 0; b < f->n_blobs; b++)
		if (blob_job[b] != SIZE_MAX)
			f->blobs[b].ok = jobs[blob_job[b]].ok;
	for (size_t k = 0; k < n_jobs; k++)
		if (!jobs[k].ok)
			to_download -= jobs[k].size;
	*jobs_out = jobs;
	*blob_job_out = blob_job;
	*n_out = n_jobs;
	return to_download;
}

int hf_fetch_main(int argc, char **argv)
{
	struct hf_fetch f = { .type = "model",
			      .jobs = 8,
			      .timeout_seconds = 6 * 3600,
			      .idle_seconds = 30,
			      .dirs = { .cache = -1, .repo = -1, .blobs = -1, .locks = -1 },
			      .write_mu = PTHREAD_MUTEX_INITIALIZER };
	char **names = NULL;
	size_t n_names = 0;
	int rc = parse_args(argc, argv, &f, &names, &n_names);
	if (rc) {
		free_fetch(&f);
		return rc < 0 ? PROV_OK : rc;
	}
	if ((rc = read_environment(&f)) != 0) {
		free_fetch(&f);
		return rc;
	}
	f.headers = curl_slist_append(f.headers, "Accept-Encoding: identity");
	dl_options_init(&f.dl);
	f.deadline = f.timeout_seconds ? monotonic_seconds() + (double)f.timeout_seconds : 0;
	f.dl.deadline = f.deadline;
	f.dl.timeout_seconds = f.timeout_seconds;
	f.dl.idle_seconds = f.idle_seconds;
	f.meta = curl_easy_init();
	if (!f.meta) {
		fputs("gpugate: hf fetch: libcurl could not start\n", stderr);
		free_fetch(&f);
		return PROV_FAILED;
	}
	f.folder = hf_repo_folder(f.repo, f.type); /* models--org--name */
	char err[600];
	hfw_init(&f.dirs, f.cache, f.folder);
	int failed = 0;

	if (n_names == 0) {
		f.whole_repo = true;
		if (list_files(&f) < 0) {
			free_fetch(&f);
			return PROV_FAILED;
		}
		if (f.n_files == 0)
			say("%s@%s lists no files", f.repo, f.revision);
	} else {
		f.files = xcalloc(n_names, sizeof(*f.files));
		for (size_t i = 0; i < n_names; i++)
			f.files[f.n_files++].path = xstrdup(names[i]);
	}
	resolve_all(&f);
	size_t resolved = 0;
	for (size_t i = 0; i < f.n_files; i++)
		resolved += !f.files[i].error[0];
	/* nothing to store: create nothing; a link where a folder must be: stop */
	if (resolved && hfw_open_store(&f.dirs, err, sizeof(err)) < 0) {
		say("%s@%s: %s", f.repo, f.revision, err);
		free_fetch(&f);
		return PROV_FAILED;
	}
	if (resolved)
		hfw_cachedir_tag(&f.dirs);
	collect_blobs(&f);
	struct dl_job *jobs;
	size_t *blob_job, n_jobs;
	int64_t downloaded = download_blobs(&f, &jobs, &blob_job, &n_jobs);
	size_t cached = 0, linked = 0;
	for (size_t i = 0; i < f.n_files; i++) {
		struct fetch_file *file = &f.files[i];
		if (!file->error[0] && !f.blobs[file->blob].ok) {
			/* its blob's download failed, or its lock could not be taken */
			size_t k = blob_job[file->blob];
			snprintf(file->error, sizeof(file->error), "%s",
				 k != SIZE_MAX ? jobs[k].error : "not downloaded (lock failed)");
		}
		if (!file->error[0] && link_snapshot(&f, file, file->error, sizeof(file->error)) == 0) {
			linked++;
			cached += f.blobs[file->blob].cached;
		}
		if (file->error[0]) {
			say("%s: %s", file->path, file->error);
			failed++;
		}
	}
	for (size_t k = 0; k < n_jobs; k++)
		free((char *)jobs[k].url);
	free(jobs);
	free(blob_job);
	if (f.commit && linked > 0 && write_ref(&f) < 0)
		failed++;
	/* only a complete, verified snapshot gets its listing (as snapshot_download) */
	if (f.have_tree && !failed && linked == f.n_files && write_listing(&f) < 0)
		failed++;
	if (!f.quiet) {
		char size[32];
		human_bytes(downloaded > 0 ? (uint64_t)downloaded : 0, size, sizeof(size));
		say("%s@%s: %zu of %zu %s in the cache (%zu %s already there, %s downloaded)%s", f.repo, f.revision,
		    linked, f.n_files, count_noun(f.n_files, "file", "files"), cached,
		    count_noun(cached, "was", "were"), size, failed ? "; some failed" : "");
	}
	if (f.commit && linked > 0)
		printf("%s/%s/" HF_SNAPSHOTS "/%s\n", f.cache, f.folder, f.commit);
	free_fetch(&f);
	return failed || f.n_files == 0 ? PROV_FAILED : PROV_OK;
}
