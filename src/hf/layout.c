#include "layout.h"
#include "../lib/timeline.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crew.h"
#include "cache_dir.h"
#include "cache_format.h"
#include "dir_trust.h"
#include "verified_record.h"
#include "../lib/parallel.h"
#include "../lib/digest.h"
#include "../lib/safe_io.h"
#include "../lib/util.h"

#define MAX_SNAPSHOT_DEPTH 64 /* folders inside one snapshot; deeper is hostile */
#define MAX_REFS_DEPTH     64 /* refs/ folders: upstream globs "**" with no limit; PR refs are 2 deep */

/* Names huggingface_hub skips in refs/ and at the top of snapshots/
 * (utils/_cache_manager.py, FILES_TO_IGNORE). */
static bool os_litter(const char *name)
{
	return strcmp(name, ".DS_Store") == 0 || strcmp(name, "Thumbs.db") == 0 || strcmp(name, "desktop.ini") == 0;
}

const char *hf_link_text(enum hf_link link)
{
	switch (link) {
	case HF_LINK_OK:
		return "ok";
	case HF_LINK_COPY:
		return "copied file";
	case HF_LINK_MISSING_BLOB:
		return "broken link (blob missing)";
	case HF_LINK_ABSOLUTE:
		return "absolute link";
	case HF_LINK_ESCAPES:
		return "link escapes the repo";
	case HF_LINK_NOT_BLOB:
		return "link to something other than a blob";
	case HF_LINK_ELSEWHERE:
		return "a link to a file that is no blob of this repo";
	case HF_LINK_ODD:
		return "not a file or link";
	}
	return "?";
}

static void add_warning(struct hf_warning **list, size_t *n, enum hf_severity sev, bool hides, const char *path,
			const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_warning(struct hf_warning **list, size_t *n, enum hf_severity sev, bool hides, const char *path,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	text_sanitize(msg);
	char *p = xstrdup(path);
	text_sanitize(p);
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = (struct hf_warning){ sev, hides, p, msg, -1 };
}

#define REPO_WARN(repo, sev, hides, path, ...) \
	add_warning(&(repo)->warnings, &(repo)->n_warnings, sev, hides, path, __VA_ARGS__)

/* d_type, or the lstat type when the filesystem does not say. */
static unsigned char entry_type(int dirfd, const struct dirent *de)
{
	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	struct stat st;
	if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* Opens a folder under dirfd without following a link in its place: the
 * rule hf fetch writes by (cache_dir.h). */
static int open_dir_at(int dirfd, const char *name)
{
	return hf_dir_open(dirfd, name);
}

int hf_open_in_cache(int cache_fd, const char *rel, int flags)
{
	int fd = cache_fd;
	const char *p = rel;
	if (*p == '/') { /* a folder out of the cache, reached by a link followed on the real root */
		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		while (*p == '/')
			p++;
	}
	for (;;) {
		const char *end = strchrnul(p, '/');
		char *name = xstrndup(p, (size_t)(end - p));
		int next = *end ? open_dir_at(fd, name) : openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		free(name);
		if (fd != cache_fd)
			close(fd);
		if (next < 0) {
			errno = e;
			return -1;
		}
		if (!*end)
			return next;
		fd = next;
		p = end + 1;
	}
}

enum resolved { RESOLVED_IN_CACHE, RESOLVED_OUTSIDE, RESOLVED_ABSOLUTE_OUTSIDE, RESOLVED_ODD };

/* A ".." after a name ("a/../b"), or any ".." in an absolute target: the
 * kernel resolves it after following "a", which text cannot; huggingface_hub
 * never writes one (os.path.relpath and abspath give the plain forms). */
static bool odd_dotdot(const char *target)
{
	bool name_seen = target[0] == '/';
	for (const char *p = target; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (name_seen)
				return true;
		} else if (n && !(n == 1 && p[0] == '.')) {
			name_seen = true;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

/* A relative target against dir, ".." by "..", into path (room for dir,
 * '/', the target and a NUL): RESOLVED_IN_CACHE or RESOLVED_OUTSIDE. */
static enum resolved resolve_relative(const char *dir, const char *rest, char *path)
{
	size_t len = strlen(dir);
	memcpy(path, dir, len + 1);
	while (*rest) {
		const char *end = strchrnul(rest, '/');
		size_t n = (size_t)(end - rest);
		if (n == 0 || (n == 1 && rest[0] == '.')) {
			/* "a//b", "./" */
		} else if (n == 2 && rest[0] == '.' && rest[1] == '.') {
			if (!len)
				return RESOLVED_OUTSIDE;
			char *slash = memrchr(path, '/', len);
			len = slash ? (size_t)(slash - path) : 0;
			path[len] = '\0';
		} else {
			if (len)
				path[len++] = '/';
			memcpy(path + len, rest, n);
			len += n;
			path[len] = '\0';
		}
		rest = *end ? end + 1 : end;
	}
	return RESOLVED_IN_CACHE;
}

/* Where a link found in the cache-relative folder dir points, worked out on
 * its text: a relative target against dir, an absolute one against the
 * paths that name this cache (huggingface_hub's absolute fallback link,
 * file_download.py _create_symlink). *out gets the cache-relative path ("" is
 * the cache folder itself) when it stays inside. Nothing is followed: the
 * result is opened one component at a time without following links. */
static enum resolved resolve_link(const struct hf_cache *cache, const char *dir, const char *target, char **out)
{
	if (odd_dotdot(target))
		return RESOLVED_ODD;
	if (target[0] == '/') {
		char *norm = hf_path_normalize(target);
		const char *hit = NULL;
		for (char **a = cache->aliases; a && *a && !hit; a++) {
			size_t n = strlen(*a);
			if (strcmp(*a, "/") == 0)
				hit = norm + 1;
			else if (strncmp(norm, *a, n) == 0 && (norm[n] == '/' || !norm[n]))
				hit = norm[n] ? norm + n + 1 : norm + n;
		}
		if (!hit) {
			free(norm);
			return RESOLVED_ABSOLUTE_OUTSIDE;
		}
		*out = xstrdup(hit);
		free(norm);
		return RESOLVED_IN_CACHE;
	}
	/* the result is never longer than dir, '/' and the target: one
	 * allocation, not a buffer grown by realloc */
	char *path = xmalloc(strlen(dir) + strlen(target) + 2);
	enum resolved r = resolve_relative(dir, target, path);
	if (r == RESOLVED_IN_CACHE)
		*out = path;
	else
		free(path);
	return r;
}

/* The absolute form of a folder given relative to the cache (or absolute). */
static char *abs_of(const struct hf_cache *cache, const char *dir)
{
	if (dir[0] == '/')
		return xstrdup(dir);
	return *dir ? xasprintf("%s/%s", cache->real, dir) : xstrdup(cache->real);
}

/* An absolute, link-free path made relative to the cache when it is inside. */
static char *cache_relative(const struct hf_cache *cache, const char *abs)
{
	size_t n = strlen(cache->real);
	if (strcmp(cache->real, "/") == 0)
		return xstrdup(abs + 1);
	if (strncmp(abs, cache->real, n) == 0 && (abs[n] == '/' || !abs[n]))
		return xstrdup(abs[n] ? abs + n + 1 : "");
	return xstrdup(abs);
}

enum followed { FOLLOWED, FOLLOW_OUTSIDE, FOLLOW_BROKEN, FOLLOW_LOOP };

/* Under --root: the file the path rel (relative to the cache, its last
 * component a link) ends at, following every link as the kernel would but
 * one component at a time with lstat, never leaving the cache: a relative
 * target against the folder holding the link, an absolute one only through a
 * path that names this cache (huggingface_hub's absolute fallback link,
 * file_download.py _create_symlink). *final gets a link-free cache-relative
 * path. */
static enum followed follow_in_cache(const struct hf_cache *cache, int cache_fd, const char *rel, char **final)
{
	struct strbuf cur = STRBUF_INIT;
	sb_puts(&cur, "");
	char *todo = xstrdup(rel);
	size_t at = 0;
	int hops = 0;
	enum followed r = FOLLOWED;
	while (todo[at]) {
		const char *c = todo + at, *end = strchrnul(c, '/');
		size_t n = (size_t)(end - c);
		at = (size_t)(end - todo) + (*end ? 1 : 0);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (!cur.len) {
				r = FOLLOW_OUTSIDE;
				break;
			}
			char *slash = strrchr(cur.buf, '/');
			cur.len = slash ? (size_t)(slash - cur.buf) : 0;
			cur.buf[cur.len] = '\0';
			continue;
		}
		size_t mark = cur.len;
		if (cur.len)
			sb_add(&cur, "/", 1);
		sb_add(&cur, c, n);
		struct stat st;
		if (fstatat(cache_fd, cur.buf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = FOLLOW_BROKEN;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t tn = ++hops > 40 ? -1 : readlinkat(cache_fd, cur.buf, target, sizeof(target) - 1);
		if (tn <= 0) {
			r = hops > 40 ? FOLLOW_LOOP : FOLLOW_BROKEN;
			break;
		}
		target[tn] = '\0';
		cur.len = mark; /* the link's own name gives way to its target */
		cur.buf[mark] = '\0';
		const char *rest = todo + at;
		char *next;
		if (target[0] == '/') {
			char *in = NULL;
			if (resolve_link(cache, "", target, &in) != RESOLVED_IN_CACHE) {
				r = FOLLOW_OUTSIDE;
				break;
			}
			cur.len = 0;
			cur.buf[0] = '\0';
			next = xasprintf("%s/%s", in, rest);
			free(in);
		} else {
			next = xasprintf("%s/%s", target, rest);
		}
		free(todo);
		todo = next;
		at = 0;
	}
	free(todo);
	if (r == FOLLOWED)
		*final = sb_detach(&cur);
	else
		sb_release(&cur);
	return r;
}

/* The file the link at path (relative to the cache or absolute) ends at, as
 * Path.resolve() finds it: by the kernel where the cache is read at
 * huggingface_hub's own path (the real root), else inside the cache only.
 * *final is relative to the cache when inside it, else absolute; st is
 * what it is (links followed). */
static enum followed follow(const struct hf_cache *cache, int cache_fd, const char *path, char **final, struct stat *st)
{
	*final = NULL;
	if (cache->follow_outside) {
		char *abs = abs_of(cache, path), real[PATH_MAX];
		bool ok = realpath(abs, real) && stat(real, st) == 0;
		int e = errno;
		free(abs);
		if (!ok)
			return e == ELOOP ? FOLLOW_LOOP : FOLLOW_BROKEN;
		*final = cache_relative(cache, real);
		return FOLLOWED;
	}
	if (path[0] == '/')
		return FOLLOW_OUTSIDE;
	enum followed r = follow_in_cache(cache, cache_fd, path, final);
	if (r == FOLLOWED && fstatat(cache_fd, **final ? *final : ".", st, AT_SYMLINK_NOFOLLOW) < 0) {
		free(*final);
		*final = NULL;
		return FOLLOW_BROKEN;
	}
	return r;
}

/* Follows the link name in the folder dir (relative to the cache, or
 * absolute) to a folder (huggingface_hub follows a linked repo folder,
 * snapshots/, snapshots/<rev> or refs/: utils/_cache_manager.py uses is_dir()
 * and iterdir()). Returns an open folder and its path in *real, or -1 with
 * *why. */
static int follow_dir_link(const struct hf_cache *cache, int cache_fd, const char *dir, const char *name, char **real,
			   const char **why)
{
	char *path = *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	struct stat st;
	enum followed r = follow(cache, cache_fd, path, real, &st);
	free(path);
	if (r != FOLLOWED) {
		*why = r == FOLLOW_OUTSIDE ? "it points outside the cache, which is not followed under --root"
		       : r == FOLLOW_LOOP  ? "a loop of links"
					   : "a broken link";
		return -1;
	}
	int fd = -1;
	if (!S_ISDIR(st.st_mode))
		*why = "not a folder";
	else if (!**real)
		*why = "it points at the cache folder itself";
	else if ((fd = hf_open_in_cache(cache_fd, *real, O_RDONLY | O_DIRECTORY)) < 0)
		*why = strerror(errno);
	if (fd < 0) {
		free(*real);
		*real = NULL;
	}
	return fd;
}

size_t hf_blob_users(const struct hf_repo *repo, long blob, struct hf_blob_user *out, size_t max)
{
	size_t n = 0;
	for (size_t v = 0; v < repo->n_revisions; v++)
		for (size_t i = 0; i < repo->revisions[v].n_files; i++)
			if (repo->revisions[v].files[i].blob == blob && blob >= 0) {
				if (n < max)
					out[n] = (struct hf_blob_user){ &repo->revisions[v],
									&repo->revisions[v].files[i] };
				n++;
			}
	return n;
}

char *hf_refs_of(const struct hf_repo *repo, const char *commit)
{
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	for (size_t i = 0; i < repo->n_refs; i++)
		if (strcmp(repo->refs[i].commit, commit) == 0)
			sb_printf(&sb, "%s%s", sb.len ? "," : "", repo->refs[i].name);
	return sb_detach(&sb);
}

char *hf_blob_users_text(const struct hf_repo *repo, long blob)
{
	enum { SHOWN = 4 };
	struct hf_blob_user users[SHOWN];
	size_t n = hf_blob_users(repo, blob, users, SHOWN);
	if (!n)
		return xstrdup("no snapshot file");
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	for (size_t i = 0; i < n && i < SHOWN; i++) {
		char *refs = hf_refs_of(repo, users[i].rev->commit);
		sb_printf(&sb, "%s%s in revision %.12s%s%s%s", i ? ", " : "", users[i].file->path, users[i].rev->commit,
			  *refs ? " (" : "", refs, *refs ? ")" : "");
		free(refs);
	}
	if (n > SHOWN)
		sb_printf(&sb, " and %zu more", n - SHOWN);
	char *text = sb_detach(&sb);
	text_sanitize(text);
	return text;
}

static int blob_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_blob *)a)->name, ((const struct hf_blob *)b)->name);
}

/* A name's first 8 bytes (NULs past its end) as a big-endian number: keys
 * compare as strcmp compares the names, as far as they go. A repo's keys,
 * in its blobs' order (set by the blobs' stat): a search reads an array of
 * 8-byte numbers (160 KB for 20,000 blobs, in the CPU's cache) instead of a
 * name in memory far apart at every step, 20,000 searches a walk. */
static uint64_t name_key(const char *name)
{
	uint64_t k = 0;
	size_t i = 0;
	for (; i < 8 && name[i]; i++)
		k = k << 8 | (unsigned char)name[i];
	return i ? k << (8 * (8 - i)) : 0; /* (a shift by 64 is undefined) */
}

const struct hf_blob *hf_repo_blob(const struct hf_repo *repo, const char *name)
{
	struct hf_blob key = { .name = (char *)name };
	if (!repo->blob_keys)
		return repo->n_blobs ? bsearch(&key, repo->blobs, repo->n_blobs, sizeof(key), blob_cmp) : NULL;
	uint64_t k = name_key(name);
	if (!repo->n_blobs)
		return NULL;
	/* the first key not below k, without a branch a step (the compiler's
	 * conditional move): a step's outcome is a coin toss to the CPU */
	const uint64_t *base = repo->blob_keys;
	for (size_t n = repo->n_blobs; n > 1; n -= n / 2)
		base = base[n / 2 - 1] < k ? base + n / 2 : base;
	size_t lo = (size_t)(base - repo->blob_keys) + (*base < k);
	for (; lo < repo->n_blobs && repo->blob_keys[lo] == k; lo++) {
		int c = strcmp(repo->blobs[lo].name, name);
		if (c == 0)
			return &repo->blobs[lo];
		if (c > 0)
			break;
	}
	return NULL;
}

const struct hf_revision *hf_repo_revision(const struct hf_repo *repo, const char *commit)
{
	for (size_t i = 0; i < repo->n_revisions; i++)
		if (strcmp(repo->revisions[i].commit, commit) == 0)
			return &repo->revisions[i];
	return NULL;
}

/* The blobs' lstat, on several threads, straight into repo->blobs (one
 * slot per name read, partial downloads included until they are taken out):
 * no array of whole struct stat beside it, whose fresh pages cost a fault
 * each on one thread. Each slot's name, search key and partial-download
 * flag are set here too: the arrays' fresh pages are first touched by
 * the threads (a page fault each, 2 us on a host whose fresh memory is
 * slow), not by the scan's thread in a loop before or after. */
struct blob_stats {
	int fd;
	struct hf_blob *blobs;
	const struct hf_dir_entry *kept; /* the names: blobs/'s kept listing, or names */
	char **names;
	uint64_t *keys;   /* per slot: name_key (hf_repo_blob's search) */
	bool *incomplete; /* per slot: a partial download's name */
	int *error;       /* per slot: errno of the fstatat, or 0 */
	uint64_t *size;   /* per slot: st_size (a partial download's too) */
};

static void stat_blobs(void *arg, size_t begin, size_t end)
{
	struct blob_stats *s = arg;
	/* blobs/ opened again for this slice: a system call on a descriptor
	 * that threads share takes a reference to its open file, one counter
	 * that every stat thread's CPU would pull to itself in turn */
	int own = end - begin > 1 ? openat(s->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int fd = own >= 0 ? own : s->fd;
	for (size_t i = begin; i < end; i++) {
		struct hf_blob *b = &s->blobs[i];
		b->name = s->kept ? (char *)s->kept[i].name : s->names[i];
		s->keys[i] = name_key(b->name);
		s->incomplete[i] = hf_is_incomplete(b->name);
		struct stat st;
		s->error[i] = fstatat(fd, b->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
		b->hex_len = hf_blob_name_length(b->name);
		if (s->error[i])
			continue;
		s->size[i] = (uint64_t)st.st_size;
		b->regular = S_ISREG(st.st_mode);
		b->size = (uint64_t)st.st_size;
		b->atime = st.st_atime;
		b->mtime = st.st_mtime;
		b->dev = (uint64_t)st.st_dev;
		b->ino = (uint64_t)st.st_ino;
		b->mtim = st.st_mtim;
		b->ctim = st.st_ctim;
		if (!b->regular) /* reported by report_irregular_blobs, naming the files that use it */
			b->not_plain = xstrdup(safe_kind_name(st.st_mode));
	}
	if (own >= 0)
		close(own);
}

/* Fewer blobs than this are stat'ed on one thread: a thread costs more. */
#define BLOB_STAT_SLICE 256

static void scan_blobs(const struct hf_cache *cache, struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, HF_BLOBS);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			REPO_WARN(repo, HF_FAIL, false, "blobs",
				  "blobs is not a folder (a link or a file): not followed");
		else if (errno != ENOENT)
			REPO_WARN(repo, HF_FAIL, false, "blobs", "cannot open blobs/: %s", strerror(errno));
		return;
	}
	/* names first, sorted, then their lstat on several threads: a model
	 * with thousands of blobs waited on one thread's fstatat before any
	 * hashing. The names are the last scan's while blobs/ is unchanged
	 * (dir_trust.h): no readdir, no sort. */
	char **names = NULL;
	size_t n = 0;
	DIR *d = NULL;
	struct stat dst;
	bool have_st = fstat(fd, &dst) == 0;
	const struct hf_dir_entry *kept = NULL;
	char *key = xasprintf("%s/" HF_BLOBS, repo->real);
	if (have_st && hf_dir_trust_get(cache->dir_trust, key, &dst, &kept, &n)) {
		/* the record's text outlives the scan (cache->kept_text): its names borrowed */
		repo->blob_names_kept = true;
	} else {
		kept = NULL;
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			free(key);
			return;
		}
		struct hf_dir_entry *list = NULL;
		size_t alloc = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (is_dot(de->d_name))
				continue;
			if (n == alloc) {
				alloc = alloc ? alloc * 2 : 64;
				list = xrealloc(list, alloc * sizeof(*list));
			}
			list[n++] = (struct hf_dir_entry){ .name = xstrdup(de->d_name), .type = de->d_type };
		}
		if (n)
			qsort(list, n, sizeof(*list), hf_dir_entry_cmp);
		if (have_st)
			hf_dir_trust_put(cache->dir_trust, key, &dst, list, n);
		names = xcalloc(n + 1, sizeof(*names));
		for (size_t i = 0; i < n; i++)
			names[i] = list[i].name;
		free(list);
	}
	tl_mark("blob names");
	free(key);
	struct blob_stats stats = { .fd = fd,
				    .blobs = n ? xcalloc(n, sizeof(*stats.blobs)) : NULL,
				    .kept = kept,
				    .names = names,
				    .keys = xcalloc(n + 1, sizeof(uint64_t)),
				    .incomplete = xcalloc(n + 1, sizeof(bool)),
				    .error = xcalloc(n + 1, sizeof(int)),
				    .size = xcalloc(n + 1, sizeof(uint64_t)) };
	hf_crew_for(n, BLOB_STAT_SLICE, SIZE_MAX, stat_blobs, &stats);
	tl_mark("blobs stat");
	free(names);
	if (d)
		closedir(d);
	else
		close(fd);
	repo->blobs = stats.blobs;
	repo->blob_keys = stats.keys;
	for (size_t i = 0; i < n; i++) {
		struct hf_blob *b = &stats.blobs[i];
		if (stats.incomplete[i]) { /* no blob: a warning, taken out */
			uint64_t size = stats.error[i] ? 0 : stats.size[i];
			repo->n_incomplete++;
			repo->incomplete_bytes += size;
			char *p = hf_blob_rel(b->name);
			REPO_WARN(
				repo, HF_WARN, false, p,
				"leftover partial download blobs/%s (%llu bytes): a download was killed or the disk filled up",
				b->name, (unsigned long long)size);
			free(p);
			if (!repo->blob_names_kept)
				free(b->name);
			free(b->not_plain);
			continue;
		}
		if (stats.error[i]) /* reported by report_irregular_blobs, as above */
			b->not_plain = xstrdup(strerror(stats.error[i]));
		if (repo->n_blobs != i) {
			repo->blobs[repo->n_blobs] = *b;
			repo->blob_keys[repo->n_blobs] = stats.keys[i];
		}
		repo->n_blobs++;
	}
	free(stats.incomplete);
	free(stats.error);
	free(stats.size);
	if (!repo->n_blobs) { /* still sorted by name (blob_cmp): the names were */
		free(repo->blobs);
		repo->blobs = NULL;
		free(repo->blob_keys);
		repo->blob_keys = NULL;
	}
}

/* The link huggingface_hub writes ("../../blobs/<name>", relative), known
 * from its text alone: a link in the folder dir (relative to the cache,
 * reached without following any link: rev->dir and the walk's open_dir_at)
 * resolves, ".." by ".." against that link-free folder as the kernel would,
 * to repo->real/blobs/<name>, a blob the scan found to be a plain file
 * (lstat, so no link to follow there either). realpath() and stat() of each
 * such link cost a dozen system calls a file (a readlink per component):
 * most of a run that trusts every blob. Anything else (an absolute target,
 * a folder out of the cache, "a/../b", a trailing "/" or ".", a target cut
 * at PATH_MAX, a blob that is a link or missing) is followed as before. */
static bool usual_link(const struct hf_repo *repo, const char *dir, const char *target, long *blob)
{
	size_t tlen = strlen(target);
	if (dir[0] == '/' || target[0] == '/' || !tlen || tlen >= PATH_MAX - 1)
		return false;
	const char *last = strrchr(target, '/');
	last = last ? last + 1 : target;
	const struct hf_blob *b = *last && !is_dot(last) ? hf_repo_blob(repo, last) : NULL;
	if (!b || !b->regular)
		return false;
	/* resolved on the stack: nothing allocated for the usual link, and
	 * *final stays NULL (its end is the blob) */
	char out[2 * PATH_MAX];
	if (strlen(dir) + tlen + 2 > sizeof(out) || odd_dotdot(target))
		return false;
	size_t n = strlen(repo->real);
	bool usual = resolve_relative(dir, target, out) == RESOLVED_IN_CACHE && strncmp(out, repo->real, n) == 0 &&
		     strncmp(out + n, "/blobs/", 7) == 0 && strcmp(out + n + 7, last) == 0;
	if (usual)
		*blob = (long)(b - repo->blobs);
	return usual;
}

/* Classifies a snapshot link by the file it ends at (Path.resolve() in
 * utils/_cache_manager.py): a blob of its own repo (its index in *blob),
 * a folder (skipped upstream: is_dir() is true and glob does not descend
 * into it), another file (counted by upstream all the same), or a link
 * that ends nowhere (broken) or, under --root, leaves the cache. */
static enum hf_link classify_link(const struct hf_cache *cache, int cache_fd, const struct hf_repo *repo,
				  const char *dir, const char *name, const char *target, long *blob, char **final,
				  struct stat *st, bool *folder)
{
	*folder = false;
	*blob = -1;
	*final = NULL;
	if (usual_link(repo, dir, target, blob))
		return HF_LINK_OK;
	/* the link's own path only for the rare one followed (no join a link) */
	char *path = xpath_join(dir, name);
	enum followed r = follow(cache, cache_fd, path, final, st);
	free(path);
	if (r == FOLLOW_OUTSIDE)
		return target[0] == '/' ? HF_LINK_ABSOLUTE : HF_LINK_ESCAPES;
	if (r != FOLLOWED)
		return HF_LINK_MISSING_BLOB;
	if (S_ISDIR(st->st_mode)) {
		*folder = true;
		return HF_LINK_NOT_BLOB;
	}
	size_t n = strlen(repo->real);
	const char *rel = *final;
	const struct hf_blob *b = strncmp(rel, repo->real, n) == 0 && strncmp(rel + n, "/blobs/", 7) == 0 &&
						  rel[n + 7] && !strchr(rel + n + 7, '/')
					  ? hf_repo_blob(repo, rel + n + 7)
					  : NULL;
	if (b) {
		*blob = (long)(b - repo->blobs);
		return HF_LINK_OK;
	}
	return S_ISREG(st->st_mode) ? HF_LINK_ELSEWHERE : HF_LINK_ODD;
}

/* One snapshot folder to walk: units run in parallel, so each gathers its
 * own warnings, merged into the repo's in a fixed order afterwards. */
struct walk {
	const struct hf_cache *cache;
	int cache_fd;
	struct hf_repo *repo;
	struct hf_revision *rev;
	size_t threads; /* that may look at one folder's entries: CPUs left to it */
	size_t alloc;
	struct hf_warning *warnings;
	size_t n_warnings;
	struct hf_path_block *paths; /* where its files' paths are made (walk_path) */
};

/* A revision's file paths, made in blocks: one malloc for hundreds of
 * paths, and one free, instead of one each (20,000 frees on one thread at
 * the end of a run, of memory the walk's threads took from their arenas). */
struct hf_path_block {
	struct hf_path_block *next;
	size_t used, cap;
	char text[];
};

#define PATH_BLOCK (16u << 10)

/* "PREFIX/NAME" (NAME where prefix is empty), in w's blocks. */
static char *walk_path(struct walk *w, const char *prefix, const char *name)
{
	size_t np = strlen(prefix), nn = strlen(name), need = (np ? np + 1 : 0) + nn + 1;
	struct hf_path_block *b = w->paths;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > PATH_BLOCK - sizeof(*b) ? need : PATH_BLOCK - sizeof(*b);
		b = xmalloc(sizeof(*b) + cap);
		*b = (struct hf_path_block){ .next = w->paths, .cap = cap };
		w->paths = b;
	}
	char *p = b->text + b->used;
	if (np) {
		memcpy(p, prefix, np);
		p[np] = '/';
	}
	memcpy(p + (np ? np + 1 : 0), name, nn + 1);
	b->used += need;
	return p;
}

/* Moves the blocks of from to the end of *to's list. */
static void take_paths(struct hf_path_block **to, struct hf_path_block **from)
{
	while (*to)
		to = &(*to)->next;
	*to = *from;
	*from = NULL;
}

static void free_paths(struct hf_path_block *b)
{
	while (b) {
		struct hf_path_block *next = b->next;
		free(b);
		b = next;
	}
}

#define WALK_WARN(w, sev, hides, path, ...) add_warning(&(w)->warnings, &(w)->n_warnings, sev, hides, path, __VA_ARGS__)

/* Adds a file at rel, which the walk made for it in its blocks (no copy of
 * each of a revision's paths). */
/* Room for more files: the array sized once a folder from its entry count
 * (and once for all the subfolders' files spliced in), not doubled as files
 * come (a realloc of a multi-MB array is an mremap under the process's mm
 * lock, against the threads at work beside it). */
static void reserve_files(struct walk *w, size_t more)
{
	size_t want = w->rev->n_files + more;
	if (want <= w->alloc)
		return;
	w->alloc = want > 2 * w->alloc ? want : 2 * w->alloc;
	w->rev->files = xrealloc(w->rev->files, w->alloc * sizeof(*w->rev->files));
}

static struct hf_file *add_file(struct walk *w, char *rel, const char *target, enum hf_link link, long blob,
				uint64_t size)
{
	reserve_files(w, 1);
	/* the usual link's text is implied by the blob: kept only for the odd ones */
	char *t = target && link != HF_LINK_OK ? xstrdup(target) : NULL;
	struct hf_file *f = &w->rev->files[w->rev->n_files++];
	*f = (struct hf_file){ .path = rel, .target = t, .link = link, .blob = blob, .size = size, .listed = -1 };
	return f;
}

/* "snapshots/COMMIT/REL", made on first use (only warnings need it). A
 * function, so that two uses in one argument list are sequenced. */
static const char *where_of(char **where, const char *commit, const char *rel)
{
	if (!*where)
		*where = xasprintf("snapshots/%s/%s", commit, rel);
	return *where;
}

/* One entry of a snapshot folder and what looking at it found: read on
 * several threads (look_at), then added in readdir order (walk_snapshot), so
 * that files and warnings come out as a one-thread walk gives them. */
struct entry {
	char *name;
	char *target, *final; /* a link's text and end (classify_link) */
	long blob;            /* the blob it links to, or -1 */
	enum hf_link link;
	unsigned char type;
	bool folder; /* a link to a folder */
	bool have;   /* the three below are set */
	/* of a link's end, or a copied file's lstat: what the walk keeps of a
	 * struct stat (a whole one made the entry 200 bytes, 4 MB of fresh
	 * pages for a 20,000-file revision, most of them never read) */
	uint64_t size;
	time_t atime, mtime;
};

static void entry_stat(struct entry *e, const struct stat *st)
{
	e->have = true;
	e->size = (uint64_t)st->st_size;
	e->atime = st->st_atime;
	e->mtime = st->st_mtime;
}

struct entries {
	struct walk *w;
	int dirfd;
	const char *prefix;
	const char *dir_rel; /* the folder's path in the cache: rev->dir, then prefix */
	bool borrowed;       /* names and link texts are the folder record's (not freed here) */
	struct entry *e;
};

static void look_at(void *arg, size_t begin, size_t end)
{
	struct entries *s = arg;
	struct walk *w = s->w;
	for (size_t i = begin; i < end; i++) {
		struct entry *e = &s->e[i];
		if (e->type == DT_LNK) {
			if (!e->target) { /* else the kept listing's (dir_trust.h) */
				char target[PATH_MAX];
				ssize_t n = readlinkat(s->dirfd, e->name, target, sizeof(target) - 1);
				if (n < 0)
					n = 0;
				target[n] = '\0';
				e->target = xstrdup(target);
			}
			struct stat st;
			e->link = classify_link(w->cache, w->cache_fd, w->repo, s->dir_rel, e->name, e->target,
						&e->blob, &e->final, &st, &e->folder);
			if (e->link == HF_LINK_ELSEWHERE)
				entry_stat(e, &st);
		} else if (e->type == DT_REG) {
			struct stat st;
			if (fstatat(s->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				entry_stat(e, &st);
		}
	}
}

/* Entries of one folder looked at per thread: fewer on one thread. */
#define LOOK_SLICE 128

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* A folder's entries read afresh, sorted by name. */
static size_t read_entries(DIR *d, int dirfd, struct entry **out)
{
	struct entry *e = NULL;
	size_t count = 0, alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name))
			continue;
		if (count == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			e = xrealloc(e, alloc * sizeof(*e));
		}
		e[count++] = (struct entry){ .name = xstrdup(de->d_name), .type = entry_type(dirfd, de) };
	}
	if (count)
		qsort(e, count, sizeof(*e), entry_cmp);
	*out = e;
	return count;
}

/* The folder's listing, kept (names, types, link texts) for the next scan. */
static void keep_entries(struct walk *w, const char *key, const struct stat *st, const struct entries *s, size_t n)
{
	struct hf_dir_entry *list = xcalloc(n + 1, sizeof(*list));
	for (size_t k = 0; k < n; k++)
		list[k] = (struct hf_dir_entry){ .name = s->e[k].name, .target = s->e[k].target, .type = s->e[k].type };
	hf_dir_trust_put(w->cache->dir_trust, key, st, list, n);
	free(list);
}

static void walk_snapshot(struct walk *w, int dirfd, const char *prefix, size_t depth);

/* A subfolder of a revision's top folder, walked on a thread of its own
 * into a revision of its own (files and warnings), then spliced into the
 * real one at its place in the top folder's order: a revision of many
 * folders (one per layer, say) was walked one folder after another. */
struct sub_walk {
	struct walk w;
	struct hf_revision rev; /* dir and commit: the real one's; files: this subfolder's */
	int dirfd;              /* the top folder */
	const char *name, *rel;
	int error; /* errno of its open, or 0 */
};

struct sub_walks {
	struct sub_walk *subs;
};

static void walk_subs(void *arg, size_t begin, size_t end)
{
	struct sub_walks *s = arg;
	for (size_t i = begin; i < end; i++) {
		struct sub_walk *sw = &s->subs[i];
		int fd = open_dir_at(sw->dirfd, sw->name);
		sw->error = fd < 0 ? errno : 0;
		if (fd >= 0)
			walk_snapshot(&sw->w, fd, sw->rel, 3);
	}
}

/* Moves a subfolder's files and warnings to the end of w's. */
static void splice_sub(struct walk *w, struct sub_walk *sw)
{
	struct hf_revision *rev = w->rev;
	if (sw->rev.n_files) {
		reserve_files(w, sw->rev.n_files); /* made room for all by walk_snapshot */
		memcpy(rev->files + rev->n_files, sw->rev.files, sw->rev.n_files * sizeof(*rev->files));
		rev->n_files += sw->rev.n_files;
	}
	free(sw->rev.files);
	take_paths(&w->paths, &sw->w.paths);
	if (sw->w.n_warnings) {
		w->warnings = xrealloc(w->warnings, (w->n_warnings + sw->w.n_warnings) * sizeof(*w->warnings));
		memcpy(w->warnings + w->n_warnings, sw->w.warnings, sw->w.n_warnings * sizeof(*w->warnings));
		w->n_warnings += sw->w.n_warnings;
	}
	free(sw->w.warnings);
}

static void walk_snapshot(struct walk *w, int dirfd, const char *prefix, size_t depth)
{
	/* the names first (sorted), then the links read on several threads
	 * where the walk has CPUs to itself (one large revision): a readlink
	 * each. Both are the last scan's while the folder is unchanged
	 * (dir_trust.h): no readdir, no readlink, no sort. */
	struct entries s = { .w = w, .dirfd = dirfd, .prefix = prefix };
	size_t count = 0;
	struct stat dst;
	bool have_st = w->cache->dir_trust && fstat(dirfd, &dst) == 0;
	char *key = *prefix ? xpath_join(w->rev->dir, prefix) : xstrdup(w->rev->dir);
	s.dir_rel = key;
	const struct hf_dir_entry *kept;
	DIR *d = NULL;
	if (have_st && hf_dir_trust_get(w->cache->dir_trust, key, &dst, &kept, &count)) {
		/* the record's strings stay until the scan ends: borrowed, not copied */
		s.e = xcalloc(count + 1, sizeof(*s.e));
		for (size_t k = 0; k < count; k++)
			s.e[k] = (struct entry){ .name = kept[k].name, .type = kept[k].type, .target = kept[k].target };
		s.borrowed = true;
		have_st = false; /* nothing new to keep */
	} else {
		d = fdopendir(dirfd);
		if (!d) {
			close(dirfd);
			free(key);
			return;
		}
		count = read_entries(d, dirfd, &s.e);
	}
	if (w->threads > 1 && count >= 2 * LOOK_SLICE)
		hf_crew_for(count, LOOK_SLICE, w->threads, look_at, &s);
	else
		look_at(&s, 0, count);
	if (have_st)
		keep_entries(w, key, &dst, &s, count);
	free(key);
	reserve_files(w, count);
	/* the top folder's subfolders on several threads, where there are
	 * CPUs for it: each into a sub_walk, spliced in below */
	struct sub_walk **sub_of = NULL; /* per entry: its sub_walk, or NULL */
	struct sub_walks subs = { NULL };
	size_t n_subs = 0;
	for (size_t k = 0; depth == 2 && w->threads > 1 && k < count; k++)
		n_subs += s.e[k].type == DT_DIR;
	if (n_subs >= 2) {
		subs.subs = xcalloc(n_subs, sizeof(*subs.subs));
		sub_of = xcalloc(count, sizeof(*sub_of));
		size_t threads = w->threads < n_subs ? w->threads : n_subs;
		for (size_t k = 0, i = 0; k < count; k++) {
			if (s.e[k].type != DT_DIR)
				continue;
			struct sub_walk *sw = &subs.subs[i++];
			sw->rev = (struct hf_revision){ .dir = w->rev->dir, .commit = w->rev->commit };
			sw->w = (struct walk){ .cache = w->cache,
					       .cache_fd = w->cache_fd,
					       .repo = w->repo,
					       .rev = &sw->rev,
					       /* each may share its links out on the crew, which
					        * balances a few large subfolders over every CPU; without
					        * it, the CPUs split between them (threads a subfolder) */
					       .threads = hf_crew_held()         ? w->threads
							  : w->threads / threads ? w->threads / threads
										 : 1 };
			sw->dirfd = dirfd;
			sw->name = s.e[k].name;
			sw->rel = s.e[k].name; /* at the top, a subfolder's path is its name */
			sub_of[k] = sw;
		}
		hf_crew_for(n_subs, 1, threads, walk_subs, &subs);
		tl_mark("subfolders walked");
		size_t spliced = 0;
		for (size_t i = 0; i < n_subs; i++)
			spliced += subs.subs[i].rev.n_files;
		reserve_files(w, count + spliced);
		/* the subfolders' files are copied in below, on this thread: their
		 * fresh pages faulted on the crew's first */
		hf_crew_touch(w->rev->files + w->rev->n_files, (count + spliced) * sizeof(*w->rev->files));
	}
	for (size_t k = 0; k < count; k++) {
		struct entry *e = &s.e[k];
		char *rel = walk_path(w, prefix, e->name); /* add_file keeps it as the file's path */
		char *where = NULL;                        /* "snapshots/COMMIT/REL", made only for a warning */
#define WHERE where_of(&where, w->rev->commit, rel)
		unsigned char type = e->type;
		if (type == DT_DIR && sub_of && sub_of[k]) {
			if (sub_of[k]->error == 0)
				splice_sub(w, sub_of[k]);
			else
				WALK_WARN(w, HF_FAIL, false, WHERE, "cannot open %s: %s", WHERE,
					  strerror(sub_of[k]->error));
			take_paths(&w->paths, &sub_of[k]->w.paths); /* (none when it was not walked) */
		} else if (type == DT_DIR) {
			int sub = depth - 2 < MAX_SNAPSHOT_DEPTH ? open_dir_at(dirfd, e->name) : -1;
			if (sub >= 0)
				walk_snapshot(w, sub, rel, depth + 1);
			else
				WALK_WARN(w, HF_FAIL, false, WHERE, "cannot open %s: %s", WHERE,
					  depth - 2 < MAX_SNAPSHOT_DEPTH ? strerror(errno) : "folders nested too deep");
		} else if (type == DT_LNK) {
			const char *target = e->target;
			char *final = e->final;
			bool folder = e->folder;
			enum hf_link link = e->link;
			long idx = -1;
			uint64_t size = 0;
			if (link == HF_LINK_OK) {
				idx = e->blob;
				size = w->repo->blobs[idx].size;
			} else if (link == HF_LINK_ELSEWHERE) {
				size = e->size;
			}
			if (folder) {
				/* a linked folder: upstream's glob("**") does not enter it, is_dir() skips it */
				free(final);
				free(where);
				if (!s.borrowed) {
					free(e->target);
					free(e->name);
				}
				continue;
			}
			struct hf_file *f = add_file(w, rel, target, link, idx, size);
			f->absolute = target[0] == '/' && link == HF_LINK_OK;
			if (link == HF_LINK_ELSEWHERE) {
				f->resolved = final[0] == '/' ? xstrdup(final) : abs_of(w->cache, final);
				f->atime = e->atime;
				f->mtime = e->mtime;
			}
			switch (link) {
			case HF_LINK_OK:
				break;
			case HF_LINK_MISSING_BLOB:
				WALK_WARN(w, HF_FAIL, true, WHERE, "%s is a broken link (%s): its blob is missing",
					  WHERE, target);
				break;
			case HF_LINK_ABSOLUTE:
				WALK_WARN(
					w, HF_FAIL, false, WHERE,
					"%s is an absolute link to %s, outside this cache: not followed under --root (huggingface_hub would follow it inside the image)",
					WHERE, target);
				break;
			case HF_LINK_ESCAPES:
				WALK_WARN(
					w, HF_FAIL, false, WHERE,
					"%s links to %s, outside the cache: not followed under --root (huggingface_hub would follow it inside the image)",
					WHERE, target);
				break;
			case HF_LINK_ELSEWHERE:
				/* counted as upstream counts it; into another repo's blobs is
				 * a warning, out of the cache a failure: no cache of
				 * huggingface_hub's making links there */
				WALK_WARN(
					w, f->resolved && strncmp(final, "/", 1) == 0 ? HF_FAIL : HF_WARN, false, WHERE,
					"%s links to %s, %s: counted as scan_cache_dir() counts it, but hf verify cannot check it against a blob name",
					WHERE, final[0] == '/' ? final : f->resolved,
					final[0] == '/' ? "outside the cache" : "which is no blob of this repo");
				break;
			default:
				WALK_WARN(w, HF_FAIL, false, WHERE, "%s links to %s, which is not a plain file", WHERE,
					  target);
			}
			free(final);
		} else if (type == DT_REG) {
			struct hf_file *f = add_file(w, rel, NULL, HF_LINK_COPY, -1, e->have ? e->size : 0);
			if (e->have) {
				f->atime = e->atime;
				f->mtime = e->mtime;
			}
		} else {
			add_file(w, rel, NULL, HF_LINK_ODD, -1, 0);
			WALK_WARN(w, HF_FAIL, false, WHERE, "%s is neither a file nor a link", WHERE);
		}
#undef WHERE
		free(where);
		if (!s.borrowed) {
			free(e->target);
			free(e->name);
		}
	}
	free(s.e);
	free(subs.subs);
	free(sub_of);
	if (d)
		closedir(d);
	else
		close(dirfd);
}

static int revision_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_revision *)a)->commit, ((const struct hf_revision *)b)->commit);
}

/* Lists the commit folders; walk_unit walks each later, in parallel. */
static void scan_snapshots(const struct hf_cache *cache, int cache_fd, struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, HF_SNAPSHOTS);
	struct stat st;
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
	    fstatat(repo_fd, HF_SNAPSHOTS, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		/* upstream lists a linked snapshots/ (is_dir() follows it); so do we, inside the cache */
		const char *why = NULL;
		fd = follow_dir_link(cache, cache_fd, repo->real, HF_SNAPSHOTS, &repo->snapshots, &why);
		if (fd < 0) {
			REPO_WARN(repo, HF_FAIL, true, "snapshots", "snapshots is a link that cannot be followed: %s",
				  why);
			return;
		}
	} else if (fd < 0) {
		if (errno == ENOENT)
			REPO_WARN(repo, HF_FAIL, true, "snapshots", "snapshots/ is missing");
		else
			REPO_WARN(repo, HF_FAIL, true, "snapshots", "cannot open snapshots/: %s",
				  errno == ENOTDIR || errno == ELOOP ? "not a folder (a file or a link)"
								     : strerror(errno));
		return;
	} else {
		repo->snapshots = xasprintf("%s/snapshots", repo->real);
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name) || os_litter(de->d_name))
			continue;
		char *where = hf_snapshot_rel(de->d_name, NULL);
		unsigned char type = entry_type(fd, de);
		char *dir = NULL;
		if (type == DT_LNK) {
			/* upstream scans a linked revision folder: is_file() and glob follow it */
			const char *why = NULL;
			int rfd = follow_dir_link(cache, cache_fd, repo->snapshots, de->d_name, &dir, &why);
			if (rfd >= 0) {
				close(rfd);
			} else if (strcmp(why, "not a folder") == 0) {
				type = DT_REG;
			} else {
				REPO_WARN(repo, HF_FAIL, strcmp(why, "a broken link") == 0, where,
					  "%s is a link that is not followed: %s", where, why);
				free(where);
				continue;
			}
		}
		if (type != DT_DIR && !dir) {
			REPO_WARN(repo, HF_FAIL, true, where,
				  "%s is a file directly under snapshots/ (only commit folders belong there)", where);
			free(where);
			continue;
		}
		free(where);
		repo->revisions = xrealloc(repo->revisions, (repo->n_revisions + 1) * sizeof(*repo->revisions));
		struct hf_revision *rev = &repo->revisions[repo->n_revisions++];
		memset(rev, 0, sizeof(*rev));
		rev->commit = xstrdup(de->d_name);
		rev->dir = dir ? dir : xasprintf("%s/%s", repo->snapshots, de->d_name);
	}
	closedir(d);
	if (repo->n_revisions)
		qsort(repo->revisions, repo->n_revisions, sizeof(*repo->revisions), revision_cmp);
}

static void add_ref(struct hf_repo *repo, const char *name, const char *where, const char *buf, size_t n)
{
	repo->refs = xrealloc(repo->refs, (repo->n_refs + 1) * sizeof(*repo->refs));
	struct hf_ref *ref = &repo->refs[repo->n_refs++];
	ref->name = xstrdup(name);
	ref->commit = xstrdup(buf);
	ref->has_snapshot = !memchr(buf, '\0', n) && hf_repo_revision(repo, buf);
	size_t len = strcspn(buf, "\r\n \t");
	char *trimmed = xstrndup(buf, len);
	text_sanitize(trimmed);
	if (buf[len]) {
		REPO_WARN(
			repo, HF_FAIL, true, where,
			"%s ends with a newline or space after the commit %s (huggingface_hub reads refs raw: the ref matches no snapshot)",
			where, trimmed);
	} else if (!ref->has_snapshot) {
		REPO_WARN(repo, HF_FAIL, true, where, "%s names commit %s, which has no snapshot folder", where,
			  *trimmed ? trimmed : "(empty)");
	}
	free(trimmed);
}

/* Reads one ref from an open descriptor (at most 255 bytes: a commit is 40). */
static void read_ref_fd(struct hf_repo *repo, int fd, const char *name, const char *where)
{
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		REPO_WARN(repo, HF_FAIL, false, where, "cannot read %s: %s", where, strerror(errno));
		return;
	}
	buf[n] = '\0';
	add_ref(repo, name, where, buf, (size_t)n);
}

/* dir: the cache-relative path of the folder open at dirfd (links in it
 * resolve against it). Every file at any depth is a ref, as upstream's
 * refs_path.glob("**" "/" "*"), which does not descend into linked folders. */
static void read_refs(const struct hf_cache *cache, int cache_fd, struct hf_repo *repo, int dirfd, const char *dir,
		      const char *prefix, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name) || os_litter(de->d_name))
			continue;
		char *name = *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
		char *where = hf_ref_rel(name);
		unsigned char type = entry_type(dirfd, de);
		if (type == DT_DIR && depth < MAX_REFS_DEPTH) {
			int sub = open_dir_at(dirfd, de->d_name);
			char *subdir = xasprintf("%s/%s", dir, de->d_name);
			if (sub >= 0)
				read_refs(cache, cache_fd, repo, sub, subdir, name, depth + 1);
			free(subdir);
		} else if (type == DT_DIR) {
			REPO_WARN(repo, HF_WARN, false, where, "%s is nested more than %d folders deep: not read",
				  where, MAX_REFS_DEPTH);
		} else if (type == DT_LNK) {
			/* upstream opens a linked ref (and skips a link to a folder): inside the cache, so do we */
			char target[PATH_MAX], *real = NULL;
			ssize_t n = readlinkat(dirfd, de->d_name, target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = '\0';
			int fd = -1;
			if (n > 0 && resolve_link(cache, dir, target, &real) == RESOLVED_IN_CACHE && *real)
				fd = hf_open_in_cache(cache_fd, real, O_RDONLY | O_NONBLOCK | O_NOCTTY);
			else
				errno = EXDEV;
			struct stat st;
			if (fd < 0) {
				REPO_WARN(repo, HF_FAIL, false, where, "%s is a link to %s that is not followed: %s",
					  where, target,
					  errno == EXDEV   ? "it points outside the cache"
					  : errno == ELOOP ? "a link to a link"
							   : strerror(errno));
			} else if (fstat(fd, &st) < 0) {
				REPO_WARN(repo, HF_FAIL, false, where, "cannot stat %s: %s", where, strerror(errno));
			} else if (S_ISDIR(st.st_mode)) {
				/* a linked folder: skipped, as upstream (is_dir() is true, glob does not descend) */
			} else if (!S_ISREG(st.st_mode)) {
				REPO_WARN(repo, HF_FAIL, false, where,
					  "%s links to something that is not a plain file: not read", where);
			} else {
				read_ref_fd(repo, fd, name, where);
			}
			if (fd >= 0)
				close(fd);
			free(real);
		} else if (type != DT_REG) {
			REPO_WARN(repo, HF_FAIL, false, where, "%s is not a plain file: not read", where);
		} else {
			int fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (fd < 0) {
				REPO_WARN(repo, HF_FAIL, false, where, "cannot read %s: %s", where, strerror(errno));
			} else {
				read_ref_fd(repo, fd, name, where);
				close(fd);
			}
		}
		free(where);
		free(name);
	}
	closedir(d);
}

static void scan_refs(const struct hf_cache *cache, int cache_fd, struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, HF_REFS);
	if (fd >= 0) {
		char *dir = xasprintf("%s/refs", repo->real);
		read_refs(cache, cache_fd, repo, fd, dir, "", 0);
		free(dir);
		return;
	}
	if (errno == ENOENT)
		return;
	if (errno != ENOTDIR && errno != ELOOP) {
		REPO_WARN(repo, HF_FAIL, false, "refs", "cannot open refs/: %s", strerror(errno));
		return;
	}
	struct stat st;
	bool link = fstatat(repo_fd, HF_REFS, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
	if (!link) {
		REPO_WARN(repo, HF_FAIL, true, "refs", "refs is a file, not a folder");
		return;
	}
	char *real = NULL;
	const char *why = NULL;
	fd = follow_dir_link(cache, cache_fd, repo->real, HF_REFS, &real, &why);
	if (fd < 0) {
		REPO_WARN(repo, HF_FAIL, false, "refs", "refs is a link that cannot be followed: %s", why);
		return;
	}
	read_refs(cache, cache_fd, repo, fd, real, "", 0);
	free(real);
}

/* Size on disk, file count and times: the unique blobs the snapshots use
 * (copied files count one each), as scan_cache_dir() sums them; a repo with
 * none has its folder's times (utils/_cache_manager.py). */
/* Adds key to a list of names; false when it was there. */
static bool seen_add(char ***list, size_t *n, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], key) == 0)
			return false;
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = (char *)key;
	return true;
}

/* A file that is not one of the repo's blobs (a copy, or a link ending
 * elsewhere) counts on disk as scan_cache_dir counts it: its size, and its
 * times for the repo's last access and modification. */
static void count_on_disk(struct hf_repo *repo, const struct hf_file *f)
{
	repo->size_on_disk += f->size;
	repo->n_files++;
	if (f->atime > repo->last_accessed)
		repo->last_accessed = f->atime;
	if (f->mtime > repo->last_modified)
		repo->last_modified = f->mtime;
}

/* The files linked to the repo's blobs mark them in two small arrays
 * (seen: counted in revision r + 1's size; used: referenced), then the
 * blobs are summed in their own order: a pass that read and wrote each
 * file's blob in file order (no order of the blobs) missed the caches at
 * nearly every file. Both passes run in slices on the crew while it is
 * held (the sums, sizes and latest times, come out the same in any
 * order); copied files and links that end elsewhere are summed after, on
 * this thread, in file order as before (the first of several links to
 * one file is the one counted). */
struct sum_pass {
	struct hf_repo *repo;
	struct hf_revision *rev;
	size_t r;
	_Atomic size_t *seen;
	_Atomic unsigned char *used;
	pthread_mutex_t lock;
	uint64_t size;    /* the revision's blobs / the repo's referenced blobs */
	size_t n;         /* referenced blobs */
	size_t others;    /* copies and links ending elsewhere: summed after */
	size_t irregular; /* blobs that are no plain file */
	time_t atime, mtime;
};

static void sum_files(void *arg, size_t begin, size_t end)
{
	struct sum_pass *s = arg;
	uint64_t size = 0;
	size_t others = 0;
	for (size_t i = begin; i < end; i++) {
		const struct hf_file *f = &s->rev->files[i];
		if (f->link == HF_LINK_ELSEWHERE || f->link == HF_LINK_COPY) {
			others++;
			continue;
		}
		if (f->blob < 0)
			continue;
		if (atomic_exchange_explicit(&s->seen[f->blob], s->r + 1, memory_order_relaxed) != s->r + 1)
			size += f->size; /* the blob's (the walk's add_file) */
		atomic_store_explicit(&s->used[f->blob], 1, memory_order_relaxed);
	}
	pthread_mutex_lock(&s->lock);
	s->size += size;
	s->others += others;
	pthread_mutex_unlock(&s->lock);
}

static void sum_blobs(void *arg, size_t begin, size_t end)
{
	struct sum_pass *s = arg;
	uint64_t size = 0;
	size_t n = 0, irregular = 0;
	time_t atime = 0, mtime = 0;
	for (size_t i = begin; i < end; i++) {
		struct hf_blob *b = &s->repo->blobs[i];
		irregular += b->not_plain != NULL;
		if (!atomic_load_explicit(&s->used[i], memory_order_relaxed) || b->referenced)
			continue;
		b->referenced = true;
		size += b->size;
		n++;
		atime = b->atime > atime ? b->atime : atime;
		mtime = b->mtime > mtime ? b->mtime : mtime;
	}
	pthread_mutex_lock(&s->lock);
	s->size += size;
	s->n += n;
	s->irregular += irregular;
	s->atime = atime > s->atime ? atime : s->atime;
	s->mtime = mtime > s->mtime ? mtime : s->mtime;
	pthread_mutex_unlock(&s->lock);
}

#define SUM_SLICE 4096 /* files or blobs a slice */

static void sum_pass_run(size_t count, void (*fn)(void *, size_t, size_t), struct sum_pass *s)
{
	if (hf_crew_held())
		hf_crew_for(count, SUM_SLICE, SIZE_MAX, fn, s);
	else
		fn(s, 0, count);
}

/* Returns how many of the repo's blobs are no plain file (report_irregular_blobs' work). */
static size_t sum_repo(struct hf_repo *repo)
{
	struct sum_pass s = { .repo = repo,
			      .seen = xcalloc(repo->n_blobs + 1, sizeof(*s.seen)),
			      .used = xcalloc(repo->n_blobs + 1, sizeof(*s.used)),
			      .lock = PTHREAD_MUTEX_INITIALIZER };
	size_t others = 0;
	for (size_t r = 0; r < repo->n_revisions; r++) {
		s.rev = &repo->revisions[r];
		s.r = r;
		s.size = 0;
		s.others = 0;
		sum_pass_run(s.rev->n_files, sum_files, &s);
		s.rev->size += s.size;
		others += s.others;
	}
	s.size = 0;
	sum_pass_run(repo->n_blobs, sum_blobs, &s);
	repo->size_on_disk += s.size;
	repo->n_files += s.n;
	if (s.atime > repo->last_accessed)
		repo->last_accessed = s.atime;
	if (s.mtime > repo->last_modified)
		repo->last_modified = s.mtime;
	char **elsewhere = NULL; /* files out of the repo's blobs, by the path they end at (blob_stats' key) */
	size_t n_elsewhere = 0;
	for (size_t r = 0; others && r < repo->n_revisions; r++) {
		struct hf_revision *rev = &repo->revisions[r];
		char **in_rev = NULL;
		size_t n_in_rev = 0;
		for (size_t i = 0; i < rev->n_files; i++) {
			struct hf_file *f = &rev->files[i];
			if (f->link == HF_LINK_ELSEWHERE) {
				if (seen_add(&in_rev, &n_in_rev, f->resolved))
					rev->size += f->size;
				if (seen_add(&elsewhere, &n_elsewhere, f->resolved))
					count_on_disk(repo, f);
			} else if (f->link == HF_LINK_COPY) {
				rev->size += f->size;
				count_on_disk(repo, f);
			}
		}
		free(in_rev);
	}
	free(elsewhere);
	if (!repo->n_files) {
		repo->last_accessed = repo->folder_atime;
		repo->last_modified = repo->folder_mtime;
	}
	pthread_mutex_destroy(&s.lock);
	free(s.used);
	free(s.seen);
	return s.irregular;
}

/* [a, a + n_a) and the n_b warnings after them swap places, each keeping its order. */
static void warnings_rotate(struct hf_warning *a, size_t n_a, size_t n_b)
{
	if (!n_a || !n_b)
		return;
	struct hf_warning *tmp = xcalloc(n_a, sizeof(*tmp));
	memcpy(tmp, a, n_a * sizeof(*a));
	memmove(a, a + n_a, n_b * sizeof(*a));
	memcpy(a + n_b, tmp, n_a * sizeof(*a));
	free(tmp);
}

static void *read_listing(void *arg);

/* A revision's listing read on a thread from the moment its commit folder
 * is known: the kept listing of a 20,000-file revision is 2.6 MB of lines
 * to split, which the walk would otherwise wait for after the blobs' stat. */
struct hf_listing_reader {
	struct thread thread;
	struct walk w; /* what read_listing reads: the cache, its fd, the repo, the revision */
};

/* Readers beside the scan's own thread while *left allows (one a CPU
 * but the scan's); a revision without one is read by the walk. */
static void start_listing_readers(const struct hf_cache *cache, int cache_fd, struct hf_repo *repo, size_t *left)
{
	for (size_t v = 0; v < repo->n_revisions && *left && !cache->skip_listings; v++) {
		struct hf_revision *rev = &repo->revisions[v];
		struct hf_listing_reader *r = xcalloc(1, sizeof(*r));
		r->w = (struct walk){ .cache = cache, .cache_fd = cache_fd, .repo = repo, .rev = rev };
		if (thread_start(&r->thread, read_listing, &r->w) != 0) {
			free(r);
			return;
		}
		rev->reader = r;
		--*left;
	}
}

/* Waits for the revision's reader, if it has one. */
static bool join_listing_reader(struct hf_revision *rev)
{
	if (!rev->reader)
		return false;
	thread_join(&rev->reader->thread);
	free(rev->reader);
	rev->reader = NULL;
	return true;
}

static void scan_repo(const struct hf_cache *cache, struct hf_repo *repo, int cache_fd, size_t *readers_left)
{
	struct stat st;
	if (fstatat(cache_fd, repo->folder, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "cannot stat %s: %s", repo->folder, strerror(errno));
		return;
	}
	int fd = -1;
	if (S_ISLNK(st.st_mode)) {
		/* upstream scans a linked repo folder (is_dir() follows it); inside the cache, so do we */
		const char *why = NULL;
		fd = follow_dir_link(cache, cache_fd, "", repo->folder, &repo->real, &why);
		if (fd < 0) {
			REPO_WARN(repo, HF_FAIL, true, repo->folder, "%s is a link that is not followed: %s",
				  repo->folder, why);
			return;
		}
		if (fstat(fd, &st) < 0)
			memset(&st, 0, sizeof(st));
	} else if (!S_ISDIR(st.st_mode)) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "%s is not a folder", repo->folder);
		return;
	}
	repo->folder_atime = st.st_atime;
	repo->folder_mtime = st.st_mtime;
	struct hf_folder name;
	enum hf_folder_status fs = hf_folder_parse(repo->folder, &name);
	if (fs == HF_FOLDER_NOT_A_NAME || fs == HF_FOLDER_NO_SEPARATOR) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder,
			  "%s is not a cache folder: its name has no '" HF_REPO_ID_SEPARATOR
			  "' ({type}s" HF_REPO_ID_SEPARATOR "{org}" HF_REPO_ID_SEPARATOR "{name})",
			  repo->folder);
		hf_folder_free(&name);
		if (fd >= 0)
			close(fd);
		return;
	}
	repo->id = name.id;
	name.id = NULL;
	if (fs == HF_FOLDER_UNKNOWN_TYPE) {
		repo->type = name.prefix;
		name.prefix = NULL;
		REPO_WARN(repo, HF_FAIL, true, repo->folder,
			  "%s has the unknown repo type '%s' (models, datasets, spaces)", repo->folder, repo->type);
		if (fd >= 0)
			close(fd);
		return;
	}
	repo->type = xstrdup(name.type);
	hf_folder_free(&name);
	if (fs == HF_FOLDER_EMPTY_PART) /* upstream lists it, but no download writes it */
		REPO_WARN(repo, HF_WARN, false, repo->folder,
			  "%s reads back as the repo id '%s', which has an empty part: no repo has it", repo->folder,
			  repo->id);
	if (strcmp(repo->type, "kernel") == 0)
		REPO_WARN(repo, HF_WARN, true, repo->folder,
			  "%s: kernel repos are hidden from scan_cache_dir() of huggingface_hub before kernels support",
			  repo->folder);
	if (fd < 0) {
		fd = open_dir_at(cache_fd, repo->folder);
		repo->real = xstrdup(repo->folder);
	}
	if (fd < 0) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "cannot open %s: %s", repo->folder, strerror(errno));
		return;
	}
	repo->is_repo = true;
	/* the commit folders first, so that their listings are read beside
	 * the blobs' stat; the blobs' warnings still come first */
	size_t at = repo->n_warnings;
	scan_snapshots(cache, cache_fd, repo, fd);
	start_listing_readers(cache, cache_fd, repo, readers_left);
	size_t mid = repo->n_warnings;
	scan_blobs(cache, repo, fd);
	warnings_rotate(repo->warnings + at, mid - at, repo->n_warnings - mid);
	scan_refs(cache, cache_fd, repo, fd);
	close(fd);
}

struct walk_pool {
	int cache_fd;
	struct walk *units;
	size_t count;
};

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_file *)a)->path, ((const struct hf_file *)b)->path);
}

/* Whether huggingface_hub's os.path.isfile() is true for the snapshot file:
 * a link to a plain blob, or a copied file (_snapshot_download.py,
 * _local_file_exists). */
static bool file_present(const struct hf_repo *repo, const struct hf_file *f)
{
	if (f->link == HF_LINK_COPY)
		return true;
	return f->link == HF_LINK_OK && f->blob >= 0 && repo->blobs[f->blob].regular;
}

/* The listing's path as a snapshot path: os.path.join(base, *path.split("/"))
 * drops empty parts ("a//b") and the kernel reads "." as nothing. NULL when
 * the path is already one (the usual case: no copy made). */
static char *listed_as_snapshot_path(const char *path)
{
	bool plain = *path != '/';
	for (const char *p = path; plain && *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		plain = n && !(n == 1 && *p == '.') && !(*end && !end[1]);
		p = *end ? end + 1 : end;
	}
	if (plain)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	for (const char *p = path; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n && !(n == 1 && *p == '.')) {
			if (sb.len)
				sb_add(&sb, "/", 1);
			sb_add(&sb, p, n);
		}
		p = *end ? end + 1 : end;
	}
	return sb_detach(&sb);
}

/* The snapshot file at path (rev->files is sorted by path), looked for at
 * *next first: the listing is sorted too, so one file after another is
 * usually the next one, without a binary search. */
static const struct hf_file *snapshot_file(const struct hf_revision *rev, const char *path, size_t *next)
{
	if (*next < rev->n_files && strcmp(rev->files[*next].path, path) == 0)
		return &rev->files[(*next)++];
	struct hf_file key = { .path = (char *)path };
	const struct hf_file *f = rev->n_files ? bsearch(&key, rev->files, rev->n_files, sizeof(key), file_cmp) : NULL;
	if (f)
		*next = (size_t)(f - rev->files) + 1;
	return f;
}

#define MAX_LISTING_WARNINGS 20 /* per revision and kind; the rest are counted */

/* The names a listing warning gives (the path sanitized, snapshots/C/PATH),
 * made only when one is written: most files have none. */
struct listed_names {
	char *p, *fw;
};

static struct listed_names *listed_names(struct listed_names *n, const struct hf_revision *rev, const char *path)
{
	if (!n->p) {
		n->p = xstrdup(path);
		text_sanitize(n->p);
		n->fw = hf_snapshot_rel(rev->commit, n->p);
	}
	return n;
}

/* What comparing one listed file with the snapshot found. */
enum listed_verdict { LISTED_OK, LISTED_MISSING, LISTED_SIZE_DIFFERS, LISTED_OTHER_BLOB };

struct listed_matches {
	struct hf_revision *rev;
	const struct hf_repo *repo;
	long *file;             /* per listed file: its snapshot file, or -1 */
	unsigned char *verdict; /* per listed file: enum listed_verdict */
};

/* Matches listed files [begin, end) with the snapshot's: only reads the
 * revision, so slices run on several threads (each file costs a few cache
 * misses: its path, its blob's name and stat data). */
static void match_listed(void *arg, size_t begin, size_t end)
{
	struct listed_matches *m = arg;
	const struct hf_revision *rev = m->rev;
	size_t next = 0;
	for (size_t i = begin; i < end; i++) {
		const struct hf_listed_file *lf = &rev->listing.files[i];
		char *normal = listed_as_snapshot_path(lf->path);
		const struct hf_file *f = snapshot_file(rev, normal ? normal : lf->path, &next);
		free(normal);
		m->file[i] = f ? f - rev->files : -1;
		m->verdict[i] = !f || !file_present(m->repo, f)       ? LISTED_MISSING
				: lf->has_size && f->size != lf->size ? LISTED_SIZE_DIFFERS
				: f->link == HF_LINK_OK && hf_listed_other_blob(lf, m->repo->blobs[f->blob].name)
					? LISTED_OTHER_BLOB
					: LISTED_OK;
	}
}

/* Listed files compared per thread: fewer on one thread. */
#define MATCH_SLICE 1024

/* Compares a revision's snapshot with its listing: files the listing names
 * that are missing, sizes that differ, links to another blob than the one
 * the listing names. */
static void compare_listing(struct walk *w)
{
	struct hf_revision *rev = w->rev;
	struct hf_repo *repo = w->repo;
	char *where = hf_tree_rel(rev->commit);
	if (rev->listing.state != HF_LISTING_OK) {
		if (rev->listing.state != HF_LISTING_NONE)
			WALK_WARN(w,
				  rev->listing.state == HF_LISTING_CRASHES || rev->listing.state == HF_LISTING_TOO_BIG
					  ? HF_FAIL
					  : HF_WARN,
				  false, where, "%s is %s (%s): %s; completeness of snapshot %s not checked", where,
				  hf_listing_state_text(rev->listing.state), rev->listing.problem,
				  rev->listing.state == HF_LISTING_CRASHES ? "snapshot_download raises reading it"
				  : rev->listing.state == HF_LISTING_TOO_BIG
					  ? "gpugate could not read it"
					  : "huggingface_hub ignores it as if absent",
				  rev->commit);
		free(where);
		return;
	}
	size_t n = rev->listing.n_files;
	struct listed_matches m = {
		.rev = rev, .repo = repo, .file = xcalloc(n + 1, sizeof(long)), .verdict = xcalloc(n + 1, 1)
	};
	if (w->threads > 1 && n >= 2 * MATCH_SLICE)
		hf_crew_for(n, MATCH_SLICE, w->threads, match_listed, &m);
	else
		match_listed(&m, 0, n);
	/* in listing order, as one thread gives them: the links both ways and
	 * the warnings (names made only for a warning written) */
	for (size_t i = 0; i < n; i++) {
		struct hf_listed_file *lf = &rev->listing.files[i];
		struct hf_file *f = m.file[i] >= 0 ? &rev->files[m.file[i]] : NULL;
		if (f) {
			lf->file = m.file[i];
			f->listed = (long)i;
		}
		struct listed_names nm = { 0 };
		switch ((enum listed_verdict)m.verdict[i]) {
		case LISTED_MISSING:
			if (++rev->n_missing <= MAX_LISTING_WARNINGS) {
				char *refs = hf_refs_of(repo, rev->commit);
				listed_names(&nm, rev, lf->path);
				WALK_WARN(
					w, HF_FAIL, false, nm.fw,
					"%s is missing from snapshot %s%s%s%s (%s names it%s): offline, snapshot_download raises IncompleteSnapshotError",
					nm.p, rev->commit, *refs ? " (" : "", refs, *refs ? ")" : "", where,
					f ? ", and the snapshot's entry is not a usable file" : "");
				free(refs);
			}
			break;
		case LISTED_SIZE_DIFFERS:
			if (++rev->n_size_differs <= MAX_LISTING_WARNINGS) {
				listed_names(&nm, rev, lf->path);
				WALK_WARN(w, HF_FAIL, false, nm.fw, "%s in snapshot %s is %llu bytes, %s says %llu",
					  nm.p, rev->commit, (unsigned long long)f->size, where,
					  (unsigned long long)lf->size);
			}
			break;
		case LISTED_OTHER_BLOB:
			if (++rev->n_other_blob <= MAX_LISTING_WARNINGS) {
				listed_names(&nm, rev, lf->path);
				WALK_WARN(w, HF_FAIL, false, nm.fw, "%s in snapshot %s links to blob %s, %s names %s",
					  nm.p, rev->commit, repo->blobs[f->blob].name, where, hf_listed_hash(lf));
			}
			break;
		case LISTED_OK:
			break;
		}
		free(nm.fw);
		free(nm.p);
	}
	free(m.file);
	free(m.verdict);
	if (rev->n_missing > MAX_LISTING_WARNINGS)
		WALK_WARN(w, HF_FAIL, false, where, "and %zu more files %s names are missing from snapshot %s",
			  rev->n_missing - MAX_LISTING_WARNINGS, where, rev->commit);
	if (rev->n_size_differs > MAX_LISTING_WARNINGS)
		WALK_WARN(w, HF_FAIL, false, where, "and %zu more files in snapshot %s differ in size from %s",
			  rev->n_size_differs - MAX_LISTING_WARNINGS, rev->commit, where);
	if (rev->n_other_blob > MAX_LISTING_WARNINGS)
		WALK_WARN(w, HF_FAIL, false, where, "and %zu more files in snapshot %s link to a blob %s does not name",
			  rev->n_other_blob - MAX_LISTING_WARNINGS, rev->commit, where);
	free(where);
}

/* A revision's listing (trees/<commit>.json), read on a thread of its own
 * while the walk reads the links where there are CPUs for both. */
static void *read_listing(void *arg)
{
	struct walk *w = arg;
	struct hf_listing *l = &w->rev->listing;
	int repo_fd = hf_open_in_cache(w->cache_fd, w->repo->real, O_RDONLY | O_DIRECTORY);
	struct stat st;
	int fd = repo_fd >= 0 ? hf_listing_open(repo_fd, w->rev->commit, HF_LISTING_MAX_BYTES, &st, l) : -1;
	if (repo_fd >= 0)
		close(repo_fd);
	if (fd < 0)
		return NULL;
	/* parsed before and unchanged since (its stat data): taken as kept */
	const char *dir = w->cache->keep_dir;
	char *kept = dir ? hf_kept_listing_file(dir, w->cache->real, w->repo->folder, w->rev->commit) : NULL;
	if (!kept || !hf_kept_listing_load(kept, w->repo->folder, w->rev->commit, &st, l)) {
		struct timespec started;
		clock_gettime(CLOCK_REALTIME_COARSE, &started);
		hf_listing_read_fd(fd, &st, l);
		if (kept)
			hf_kept_listing_save(kept, w->repo->folder, w->rev->commit, &st, &started, l);
	}
	free(kept);
	close(fd);
	tl_mark("listing read");
	return NULL;
}

struct sorted_check {
	const struct hf_revision *rev;
	atomic_bool unsorted;
};

/* Pairs (i - 1, i) for i in [begin, end), i >= 1. */
static void check_sorted(void *arg, size_t begin, size_t end)
{
	struct sorted_check *c = arg;
	for (size_t i = begin ? begin : 1; i < end && !atomic_load_explicit(&c->unsorted, memory_order_relaxed); i++)
		if (strcmp(c->rev->files[i - 1].path, c->rev->files[i].path) > 0)
			atomic_store(&c->unsorted, true);
}

/* Fewer pairs than this are compared on one thread. */
#define SORTED_SLICE 4096

/* On the crew's threads while it is held: 20,000 paths compared one
 * after another were a few hundred microseconds of the walk's end. */
static bool files_sorted(const struct hf_revision *rev)
{
	struct sorted_check c = { .rev = rev };
	if (hf_crew_held())
		hf_crew_for(rev->n_files, SORTED_SLICE, SIZE_MAX, check_sorted, &c);
	else
		check_sorted(&c, 0, rev->n_files);
	return !atomic_load(&c.unsorted);
}

static void walk_units(void *arg, size_t begin, size_t end)
{
	struct walk_pool *p = arg;
	for (size_t k = begin; k < end; k++) {
		struct walk *w = &p->units[k];
		w->cache_fd = p->cache_fd;
		struct thread listing;
		bool listing_aside = false;
		if (!w->cache->skip_listings && w->threads > 1 && !w->rev->reader)
			listing_aside = thread_start(&listing, read_listing, w) == 0;
		int fd = hf_open_in_cache(p->cache_fd, w->rev->dir, O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			char *where = hf_snapshot_rel(w->rev->commit, NULL);
			WALK_WARN(w, HF_FAIL, true, where, "cannot open %s: %s", where, strerror(errno));
			free(where);
		} else {
			walk_snapshot(w, fd, "", 2);
		}
		/* each folder's entries come sorted: a sort only where a
		 * folder's name sorts before a sibling's "name/..." */
		w->rev->paths = w->paths; /* its files' paths: freed with it */
		w->paths = NULL;
		tl_mark("snapshot walked");
		if (!files_sorted(w->rev))
			qsort(w->rev->files, w->rev->n_files, sizeof(*w->rev->files), file_cmp);
		if (listing_aside)
			thread_join(&listing);
		else if (!join_listing_reader(w->rev) && !w->cache->skip_listings)
			read_listing(w);
		tl_mark("listing joined");
		compare_listing(w);
		tl_mark("listing compared");
	}
}

/* A blob that is no plain file, once the snapshot walk knows which files
 * use it: the finding names them (revision and ref), as a hash mismatch does. */
static void report_irregular_blobs(struct hf_repo *repo)
{
	for (size_t b = 0; b < repo->n_blobs; b++) {
		if (!repo->blobs[b].not_plain)
			continue;
		char *p = hf_blob_rel(repo->blobs[b].name);
		char *users = hf_blob_users(repo, (long)b, NULL, 0) ? hf_blob_users_text(repo, (long)b) : NULL;
		REPO_WARN(repo, HF_FAIL, false, p, "%s%s%s is not a plain file (%s): never opened", users ? users : "",
			  users ? ": " : "", p, repo->blobs[b].not_plain);
		repo->warnings[repo->n_warnings - 1].blob = (long)b;
		free(users);
		free(p);
	}
}

/* Walks every snapshot of every repo, one thread per CPU (the scan is
 * bound by readlink system calls), then merges the warnings in order. */
static void walk_all(struct hf_cache *cache, int cache_fd)
{
	struct walk_pool p = { .cache_fd = cache_fd };
	for (size_t r = 0; r < cache->n_repos; r++)
		p.count += cache->repos[r].n_revisions;
	p.units = xcalloc(p.count + 1, sizeof(*p.units));
	size_t k = 0;
	for (size_t r = 0; r < cache->n_repos; r++)
		for (size_t v = 0; v < cache->repos[r].n_revisions; v++)
			p.units[k++] = (struct walk){ .cache = cache,
						      .repo = &cache->repos[r],
						      .rev = &cache->repos[r].revisions[v] };
	/* CPUs beyond one per revision read the links of a large one */
	unsigned cpus = p.count ? usable_cpus() : 1; /* the quota files are read only for work to share */
	for (k = 0; k < p.count; k++)
		p.units[k].threads = p.count < cpus ? cpus / p.count : 1;
	hf_crew_for(p.count, 1, 64, walk_units, &p);
	for (k = 0; k < p.count; k++) {
		struct walk *w = &p.units[k];
		struct hf_repo *repo = w->repo;
		if (w->n_warnings) {
			repo->warnings =
				xrealloc(repo->warnings, (repo->n_warnings + w->n_warnings) * sizeof(*repo->warnings));
			memcpy(repo->warnings + repo->n_warnings, w->warnings, w->n_warnings * sizeof(*w->warnings));
			repo->n_warnings += w->n_warnings;
		}
		free(w->warnings);
	}
	free(p.units);
	tl_mark("walks merged");
	for (size_t r = 0; r < cache->n_repos; r++) {
		/* the sums first: they count the blobs that are no plain file, the
		 * warnings' loop over every blob only where there is one */
		if (sum_repo(&cache->repos[r]))
			report_irregular_blobs(&cache->repos[r]);
		tl_mark("repo summed");
	}
}

/* What scan_cache_dir() skips at the top of the cache (utils/_cache_manager.py). */
static bool top_level_litter(const char *name)
{
	return is_dot(name) || os_litter(name) || strcmp(name, HF_LOCKS) == 0 || strcmp(name, HF_CACHEDIR_TAG) == 0;
}

static int repo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_repo *)a)->folder, ((const struct hf_repo *)b)->folder);
}

static void add_alias(struct hf_cache *cache, size_t *n, const char *path)
{
	if (!path || path[0] != '/')
		return;
	char *norm = hf_path_normalize(path);
	for (size_t i = 0; i < *n; i++)
		if (strcmp(cache->aliases[i], norm) == 0) {
			free(norm);
			return;
		}
	cache->aliases = xrealloc(cache->aliases, (*n + 2) * sizeof(char *));
	cache->aliases[(*n)++] = norm;
	cache->aliases[*n] = NULL;
}

int hf_cache_scan(const char *path, struct hf_cache *cache, char *err, size_t errsize)
{
	return hf_cache_scan_as(path, NULL, cache, err, errsize);
}

int hf_cache_scan_as(const char *path, const char *alias, struct hf_cache *cache, char *err, size_t errsize)
{
	return hf_cache_scan_listings(path, alias, true, cache, err, errsize);
}

int hf_cache_scan_listings(const char *path, const char *alias, bool listings, struct hf_cache *cache, char *err,
			   size_t errsize)
{
	return hf_cache_scan_hooked(path, alias, listings, cache, err, errsize, NULL);
}

struct hook_call {
	struct thread thread;
	const struct hf_scan_hook *hook;
	const struct hf_cache *cache;
};

static void *call_hook(void *arg)
{
	struct hook_call *c = arg;
	c->hook->blobs_listed(c->cache, c->hook->arg);
	return NULL;
}

int hf_cache_scan_hooked(const char *path, const char *alias, bool listings, struct hf_cache *cache, char *err,
			 size_t errsize, const struct hf_scan_hook *hook)
{
	memset(cache, 0, sizeof(*cache));
	cache->path = xstrdup(path);
	cache->skip_listings = !listings;
	cache->keep_dir = hook && hook->keep_dir ? xstrdup(hook->keep_dir) : NULL;
	/* the clock file timestamps are taken from (current_time() reads the
	 * coarse clock): a blob changed after this instant has a time not older */
	clock_gettime(CLOCK_REALTIME_COARSE, &cache->scan_stamp);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
	/* the names an absolute link into this cache may use */
	size_t n_alias = 0;
	char cwd[PATH_MAX], real[PATH_MAX];
	if (path[0] == '/') {
		add_alias(cache, &n_alias, path);
	} else if (getcwd(cwd, sizeof(cwd))) {
		char *abs = xasprintf("%s/%s", cwd, path);
		add_alias(cache, &n_alias, abs);
		free(abs);
	}
	bool resolved = realpath(path, real) != NULL; /* once: a readlink per part of the path */
	if (resolved)
		add_alias(cache, &n_alias, real);
	cache->real = xstrdup(resolved ? real : path);
	add_alias(cache, &n_alias, alias);
	/* read at the path huggingface_hub uses (no --root): a link out of the
	 * cache is the user's own, followed as upstream follows it */
	char *n_path = cache->aliases && path[0] == '/' ? hf_path_normalize(path) : NULL;
	char *n_alias_path = alias && alias[0] == '/' ? hf_path_normalize(alias) : NULL;
	cache->follow_outside = !alias || (n_path && n_alias_path && strcmp(n_path, n_alias_path) == 0);
	free(n_path);
	free(n_alias_path);
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
	/* folder listings kept by the last scan (no --full) */
	tl_mark("scan start");
	cache->dir_trust = cache->keep_dir ? hf_dir_trust_open(cache->keep_dir, path, &cache->scan_stamp) : NULL;
	tl_mark("folder record open");
	size_t alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (top_level_litter(de->d_name))
			continue;
		if (cache->n_repos == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			cache->repos = xrealloc(cache->repos, alloc * sizeof(*cache->repos));
		}
		struct hf_repo *repo = &cache->repos[cache->n_repos++];
		memset(repo, 0, sizeof(*repo));
		repo->folder = xstrdup(de->d_name);
	}
	if (cache->n_repos)
		qsort(cache->repos, cache->n_repos, sizeof(*cache->repos), repo_cmp);
	unsigned cpus = cache->n_repos && listings ? usable_cpus() : 1;
	size_t readers_left = cpus - 1; /* listings read beside the scan */
	for (size_t i = 0; i < cache->n_repos; i++)
		scan_repo(cache, &cache->repos[i], fd, &readers_left);
	tl_mark("repos scanned");
	/* what the hook starts (the record check, the hashing) runs beside the
	 * walk: it reads only the repos' blobs, which the walk leaves as they are
	 * but for their referenced flag */
	struct hook_call call = { .hook = hook, .cache = cache };
	bool hook_aside = hook && hook->blobs_listed && thread_start(&call.thread, call_hook, &call) == 0;
	if (hook && hook->blobs_listed && !hook_aside)
		call_hook(&call);
	walk_all(cache, fd);
	tl_mark("walk done");
	if (hook_aside)
		thread_join(&call.thread);
	tl_mark("hook joined");
	cache->kept_text = hf_dir_trust_close_keeping_text(cache->dir_trust);
	cache->dir_trust = NULL;
	closedir(d);
	tl_mark("folder record closed");
	return 0;
}

static void free_warnings(struct hf_warning *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(w[i].path);
		free(w[i].message);
	}
	free(w);
}

void hf_cache_free(struct hf_cache *cache)
{
	for (size_t r = 0; r < cache->n_repos; r++) {
		struct hf_repo *repo = &cache->repos[r];
		for (size_t i = 0; i < repo->n_blobs; i++) {
			if (!repo->blob_names_kept)
				free(repo->blobs[i].name);
			free(repo->blobs[i].not_plain);
		}
		free(repo->blobs);
		free(repo->blob_keys);
		for (size_t v = 0; v < repo->n_revisions; v++) {
			for (size_t i = 0; i < repo->revisions[v].n_files; i++) {
				if (!repo->revisions[v].paths) /* else they lie in its blocks */
					free(repo->revisions[v].files[i].path);
				free(repo->revisions[v].files[i].target);
				free(repo->revisions[v].files[i].resolved);
			}
			free_paths(repo->revisions[v].paths);
			free(repo->revisions[v].dir);
			free(repo->revisions[v].files);
			free(repo->revisions[v].commit);
			hf_listing_free(&repo->revisions[v].listing);
		}
		free(repo->revisions);
		for (size_t i = 0; i < repo->n_refs; i++) {
			free(repo->refs[i].name);
			free(repo->refs[i].commit);
		}
		free(repo->refs);
		free_warnings(repo->warnings, repo->n_warnings);
		free(repo->folder);
		free(repo->type);
		free(repo->id);
		free(repo->real);
		free(repo->snapshots);
	}
	free(cache->repos);
	free_list(cache->aliases);
	free(cache->path);
	free(cache->real);
	free(cache->keep_dir);
	free(cache->kept_text);
	memset(cache, 0, sizeof(*cache));
}
