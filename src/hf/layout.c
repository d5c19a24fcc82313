#include "layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_dir.h"
#include "../lib/util.h"

#define MAX_SNAPSHOT_DEPTH 64 /* folders inside one snapshot; deeper is hostile */

const char *hf_link_text(enum hf_link link)
{
	switch (link) {
	case HF_LINK_OK: return "ok";
	case HF_LINK_COPY: return "copied file";
	case HF_LINK_MISSING_BLOB: return "broken link (blob missing)";
	case HF_LINK_ABSOLUTE: return "absolute link";
	case HF_LINK_ESCAPES: return "link escapes the repo";
	case HF_LINK_NOT_BLOB: return "link to something other than a blob";
	case HF_LINK_ODD: return "not a file or link";
	}
	return "?";
}

size_t hf_hex_length(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++)
		if (!((name[n] >= '0' && name[n] <= '9') || (name[n] >= 'a' && name[n] <= 'f')))
			return 0;
	return n;
}

static void add_warning(struct hf_warning **list, size_t *n, enum hf_severity sev, bool hides,
			const char *path, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_warning(struct hf_warning **list, size_t *n, enum hf_severity sev, bool hides,
			const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	text_sanitize(msg);
	char *p = xstrdup(path);
	text_sanitize(p);
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = (struct hf_warning){ sev, hides, p, msg };
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

static int blob_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_blob *)a)->name, ((const struct hf_blob *)b)->name);
}

const struct hf_blob *hf_repo_blob(const struct hf_repo *repo, const char *name)
{
	struct hf_blob key = { .name = (char *)name };
	return repo->n_blobs ? bsearch(&key, repo->blobs, repo->n_blobs, sizeof(key), blob_cmp) : NULL;
}

const struct hf_revision *hf_repo_revision(const struct hf_repo *repo, const char *commit)
{
	for (size_t i = 0; i < repo->n_revisions; i++)
		if (strcmp(repo->revisions[i].commit, commit) == 0)
			return &repo->revisions[i];
	return NULL;
}

static void scan_blobs(struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, "blobs");
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			REPO_WARN(repo, HF_FAIL, false, "blobs", "blobs is not a folder (a link or a file): not followed");
		else if (errno != ENOENT)
			REPO_WARN(repo, HF_FAIL, false, "blobs", "cannot open blobs/: %s", strerror(errno));
		return;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	size_t alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name))
			continue;
		struct stat st;
		bool have = fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (str_ends_with(de->d_name, ".incomplete")) {
			uint64_t size = have ? (uint64_t)st.st_size : 0;
			repo->n_incomplete++;
			repo->incomplete_bytes += size;
			char *p = xasprintf("blobs/%s", de->d_name);
			REPO_WARN(repo, HF_WARN, false, p,
				  "leftover partial download blobs/%s (%llu bytes): a download was killed or the disk filled up",
				  de->d_name, (unsigned long long)size);
			free(p);
			continue;
		}
		if (repo->n_blobs == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			repo->blobs = xrealloc(repo->blobs, alloc * sizeof(*repo->blobs));
		}
		struct hf_blob *b = &repo->blobs[repo->n_blobs++];
		memset(b, 0, sizeof(*b));
		b->name = xstrdup(de->d_name);
		if (have) {
			b->regular = S_ISREG(st.st_mode);
			b->size = (uint64_t)st.st_size;
			b->atime = st.st_atime;
			b->mtime = st.st_mtime;
		}
		if (!b->regular) {
			char *p = xasprintf("blobs/%s", de->d_name);
			REPO_WARN(repo, HF_FAIL, false, p, "blobs/%s is not a plain file (%s): never opened", de->d_name,
				  !have ? strerror(errno) : S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a folder" : "a special file");
			free(p);
		}
	}
	closedir(d);
	if (repo->n_blobs)
		qsort(repo->blobs, repo->n_blobs, sizeof(*repo->blobs), blob_cmp);
}

/* Classifies a snapshot link found depth folders below the repo folder.
 * Only "../" * depth + "blobs/<name>" is what huggingface_hub writes; the
 * name of the blob goes to *blob_name. */
static enum hf_link classify_link(const char *target, size_t depth, const char **blob_name)
{
	if (target[0] == '/')
		return HF_LINK_ABSOLUTE;
	size_t level = depth, ups = 0, names = 0;
	bool escapes = false;
	const char *p = target, *second = NULL, *first = NULL;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && *p == '.')) {
			/* "a//b", "./": nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (level == 0)
				escapes = true;
			else
				level--;
			if (names)
				names = 99; /* ".." after a name: not the canonical form */
			else
				ups++;
		} else {
			level++;
			if (names == 0)
				first = p;
			else if (names == 1)
				second = p;
			names++;
		}
		p = *end ? end + 1 : end;
	}
	if (escapes)
		return HF_LINK_ESCAPES;
	if (ups != depth || names != 2 || strncmp(first, "blobs/", 6) != 0 || !*second || strchr(second, '/'))
		return HF_LINK_NOT_BLOB;
	*blob_name = second;
	return HF_LINK_OK;
}

/* One snapshot folder to walk: units run in parallel, so each gathers its
 * own warnings, merged into the repo's in a fixed order afterwards. */
struct walk {
	struct hf_repo *repo;
	struct hf_revision *rev;
	size_t alloc;
	struct hf_warning *warnings;
	size_t n_warnings;
};

#define WALK_WARN(w, sev, hides, path, ...) \
	add_warning(&(w)->warnings, &(w)->n_warnings, sev, hides, path, __VA_ARGS__)

static void add_file(struct walk *w, const char *rel, const char *target, enum hf_link link, long blob, uint64_t size)
{
	if (w->rev->n_files == w->alloc) {
		w->alloc = w->alloc ? w->alloc * 2 : 16;
		w->rev->files = xrealloc(w->rev->files, w->alloc * sizeof(*w->rev->files));
	}
	/* the usual link's text is implied by the blob: kept only for the odd ones */
	char *t = target && link != HF_LINK_OK ? xstrdup(target) : NULL;
	w->rev->files[w->rev->n_files++] = (struct hf_file){ xstrdup(rel), t, link, blob, size };
}

/* "snapshots/COMMIT/REL", made on first use (only warnings need it). A
 * function, so that two uses in one argument list are sequenced. */
static const char *where_of(char **where, const char *commit, const char *rel)
{
	if (!*where)
		*where = xasprintf("snapshots/%s/%s", commit, rel);
	return *where;
}

static void walk_snapshot(struct walk *w, int dirfd, const char *prefix, size_t depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name))
			continue;
		char *rel = *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
		char *where = NULL; /* "snapshots/COMMIT/REL", made only for a warning */
#define WHERE where_of(&where, w->rev->commit, rel)
		unsigned char type = entry_type(dirfd, de);
		if (type == DT_DIR) {
			int sub = depth - 2 < MAX_SNAPSHOT_DEPTH ? open_dir_at(dirfd, de->d_name) : -1;
			if (sub >= 0)
				walk_snapshot(w, sub, rel, depth + 1);
			else
				WALK_WARN(w, HF_FAIL, false, WHERE, "cannot open %s: %s", WHERE,
					  depth - 2 < MAX_SNAPSHOT_DEPTH ? strerror(errno) : "folders nested too deep");
		} else if (type == DT_LNK) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(dirfd, de->d_name, target, sizeof(target) - 1);
			if (n < 0)
				n = 0;
			target[n] = '\0';
			const char *blob_name = NULL;
			enum hf_link link = classify_link(target, depth, &blob_name);
			long idx = -1;
			uint64_t size = 0;
			if (link == HF_LINK_OK) {
				const struct hf_blob *b = hf_repo_blob(w->repo, blob_name);
				if (!b) {
					link = HF_LINK_MISSING_BLOB;
				} else {
					idx = (long)(b - w->repo->blobs);
					size = b->size;
				}
			}
			add_file(w, rel, target, link, idx, size);
			switch (link) {
			case HF_LINK_OK:
				break;
			case HF_LINK_MISSING_BLOB:
				WALK_WARN(w, HF_FAIL, true, WHERE, "%s is a broken link: its blob %s is missing", WHERE, target);
				break;
			case HF_LINK_ABSOLUTE:
				WALK_WARN(w, HF_FAIL, false, WHERE, "%s is an absolute link to %s (huggingface_hub writes relative links; a moved or hostile cache): not followed",
					  WHERE, target);
				break;
			case HF_LINK_ESCAPES:
				WALK_WARN(w, HF_FAIL, false, WHERE, "%s links to %s, outside the repo folder (a 'cp -a' of a single snapshot, or a hostile cache): not followed",
					  WHERE, target);
				break;
			default:
				WALK_WARN(w, HF_FAIL, false, WHERE, "%s links to %s, which is not ../blobs/<name> of this repo: not followed",
					  WHERE, target);
			}
		} else if (type == DT_REG) {
			struct stat st;
			uint64_t size = fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_size : 0;
			add_file(w, rel, NULL, HF_LINK_COPY, -1, size);
		} else {
			add_file(w, rel, NULL, HF_LINK_ODD, -1, 0);
			WALK_WARN(w, HF_FAIL, false, WHERE, "%s is neither a file nor a link", WHERE);
		}
#undef WHERE
		free(where);
		free(rel);
	}
	closedir(d);
}

static int revision_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_revision *)a)->commit, ((const struct hf_revision *)b)->commit);
}

/* Lists the commit folders; walk_unit walks each later, in parallel. */
static void scan_snapshots(struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, "snapshots");
	if (fd < 0) {
		if (errno == ENOENT)
			REPO_WARN(repo, HF_FAIL, true, "snapshots", "snapshots/ is missing");
		else
			REPO_WARN(repo, HF_FAIL, true, "snapshots", "cannot open snapshots/: %s",
				  errno == ENOTDIR || errno == ELOOP ? "not a folder (a file or a link)" : strerror(errno));
		return;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name))
			continue;
		char *where = xasprintf("snapshots/%s", de->d_name);
		if (entry_type(fd, de) != DT_DIR) {
			REPO_WARN(repo, HF_FAIL, true, where, "%s is a file directly under snapshots/ (only commit folders belong there)", where);
			free(where);
			continue;
		}
		free(where);
		repo->revisions = xrealloc(repo->revisions, (repo->n_revisions + 1) * sizeof(*repo->revisions));
		struct hf_revision *rev = &repo->revisions[repo->n_revisions++];
		memset(rev, 0, sizeof(*rev));
		rev->commit = xstrdup(de->d_name);
	}
	closedir(d);
	if (repo->n_revisions)
		qsort(repo->revisions, repo->n_revisions, sizeof(*repo->revisions), revision_cmp);
}

static void read_refs(struct hf_repo *repo, int dirfd, const char *prefix, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (is_dot(de->d_name))
			continue;
		char *name = *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
		char *where = xasprintf("refs/%s", name);
		unsigned char type = entry_type(dirfd, de);
		if (type == DT_DIR && depth < 8) {
			int sub = open_dir_at(dirfd, de->d_name);
			if (sub >= 0)
				read_refs(repo, sub, name, depth + 1);
		} else if (type != DT_REG) {
			REPO_WARN(repo, HF_FAIL, false, where, "%s is not a plain file: not read", where);
		} else {
			char buf[256];
			int fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (n < 0) {
				REPO_WARN(repo, HF_FAIL, false, where, "cannot read %s: %s", where, strerror(errno));
			} else {
				buf[n] = '\0';
				repo->refs = xrealloc(repo->refs, (repo->n_refs + 1) * sizeof(*repo->refs));
				struct hf_ref *ref = &repo->refs[repo->n_refs++];
				ref->name = xstrdup(name);
				ref->commit = xstrdup(buf);
				ref->has_snapshot = !memchr(buf, '\0', (size_t)n) && hf_repo_revision(repo, buf);
				size_t len = strcspn(buf, "\r\n \t");
				char *trimmed = xstrndup(buf, len);
				text_sanitize(trimmed);
				if (buf[len]) {
					REPO_WARN(repo, HF_FAIL, true, where,
						  "%s ends with a newline or space after the commit %s (huggingface_hub reads refs raw: the ref matches no snapshot)",
						  where, trimmed);
				} else if (!ref->has_snapshot) {
					REPO_WARN(repo, HF_FAIL, true, where, "%s names commit %s, which has no snapshot folder",
						  where, *trimmed ? trimmed : "(empty)");
				}
				free(trimmed);
			}
		}
		free(where);
		free(name);
	}
	closedir(d);
}

static void scan_refs(struct hf_repo *repo, int repo_fd)
{
	int fd = open_dir_at(repo_fd, "refs");
	if (fd >= 0) {
		read_refs(repo, fd, "", 0);
	} else if (errno == ENOTDIR || errno == ELOOP) {
		struct stat st;
		bool link = fstatat(repo_fd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
		REPO_WARN(repo, HF_FAIL, !link, "refs", "refs is %s, not a folder", link ? "a link" : "a file");
	} else if (errno != ENOENT) {
		REPO_WARN(repo, HF_FAIL, false, "refs", "cannot open refs/: %s", strerror(errno));
	}
}

/* Size on disk and file count: the unique blobs the snapshots use (copied
 * files count one each), as scan_cache_dir() sums them. */
static void sum_repo(struct hf_repo *repo)
{
	size_t *seen = xcalloc(repo->n_blobs + 1, sizeof(*seen));
	for (size_t r = 0; r < repo->n_revisions; r++) {
		struct hf_revision *rev = &repo->revisions[r];
		for (size_t i = 0; i < rev->n_files; i++) {
			struct hf_file *f = &rev->files[i];
			if (f->link == HF_LINK_COPY) {
				rev->size += f->size;
				repo->size_on_disk += f->size;
				repo->n_files++;
				continue;
			}
			if (f->blob < 0)
				continue;
			struct hf_blob *b = &repo->blobs[f->blob];
			if (seen[f->blob] != r + 1) {
				seen[f->blob] = r + 1;
				rev->size += b->size;
			}
			if (!b->referenced) {
				b->referenced = true;
				repo->size_on_disk += b->size;
				repo->n_files++;
				if (b->atime > repo->last_accessed)
					repo->last_accessed = b->atime;
				if (b->mtime > repo->last_modified)
					repo->last_modified = b->mtime;
			}
		}
	}
	free(seen);
}

static void scan_repo(struct hf_repo *repo, int cache_fd)
{
	struct stat st;
	if (fstatat(cache_fd, repo->folder, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "cannot stat %s: %s", repo->folder, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "%s is not a folder%s", repo->folder,
			  S_ISLNK(st.st_mode) ? " (a link: not followed)" : "");
		return;
	}
	const char *sep = strstr(repo->folder, "--");
	if (!sep) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "%s is not a cache folder: its name has no '--' ({type}s--{org}--{name})",
			  repo->folder);
		return;
	}
	size_t tl = (size_t)(sep - repo->folder);
	static const struct { const char *prefix, *type; } types[] = {
		{ "models", "model" }, { "datasets", "dataset" }, { "spaces", "space" }, { "kernels", "kernel" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strlen(types[i].prefix) == tl && strncmp(repo->folder, types[i].prefix, tl) == 0)
			repo->type = xstrdup(types[i].type);
	struct strbuf id = STRBUF_INIT;
	sb_puts(&id, "");
	for (const char *p = sep + 2; *p;) {
		const char *next = strstr(p, "--");
		size_t n = next ? (size_t)(next - p) : strlen(p);
		sb_add(&id, p, n);
		if (next)
			sb_add(&id, "/", 1);
		p = next ? next + 2 : p + n;
	}
	repo->id = sb_detach(&id);
	if (!repo->type) {
		repo->type = xstrndup(repo->folder, tl);
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "%s has the unknown repo type '%s' (models, datasets, spaces)",
			  repo->folder, repo->type);
		return;
	}
	if (strcmp(repo->type, "kernel") == 0)
		REPO_WARN(repo, HF_WARN, true, repo->folder,
			  "%s: kernel repos are hidden from scan_cache_dir() of huggingface_hub before kernels support", repo->folder);
	int fd = open_dir_at(cache_fd, repo->folder);
	if (fd < 0) {
		REPO_WARN(repo, HF_FAIL, true, repo->folder, "cannot open %s: %s", repo->folder, strerror(errno));
		return;
	}
	repo->is_repo = true;
	scan_blobs(repo, fd);
	scan_snapshots(repo, fd);
	scan_refs(repo, fd);
	close(fd);
}

struct walk_pool {
	int cache_fd;
	struct walk *units;
	size_t count;
	atomic_size_t next;
};

/* Opens cache/REPO/snapshots/COMMIT without following a link on the way. */
static int open_revision(int cache_fd, const struct hf_repo *repo, const char *commit)
{
	int fd = open_dir_at(cache_fd, repo->folder);
	if (fd < 0)
		return -1;
	int snaps = open_dir_at(fd, "snapshots");
	close(fd);
	if (snaps < 0)
		return -1;
	fd = open_dir_at(snaps, commit);
	int e = errno;
	close(snaps);
	errno = e;
	return fd;
}

static void *walk_worker(void *arg)
{
	struct walk_pool *p = arg;
	for (size_t k; (k = atomic_fetch_add(&p->next, 1)) < p->count;) {
		struct walk *w = &p->units[k];
		int fd = open_revision(p->cache_fd, w->repo, w->rev->commit);
		if (fd < 0) {
			char *where = xasprintf("snapshots/%s", w->rev->commit);
			WALK_WARN(w, HF_FAIL, true, where, "cannot open %s: %s", where, strerror(errno));
			free(where);
			continue;
		}
		walk_snapshot(w, fd, "", 2);
	}
	return NULL;
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
			p.units[k++] = (struct walk){ .repo = &cache->repos[r], .rev = &cache->repos[r].revisions[v] };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t threads = cpus > 1 ? (size_t)cpus : 1;
	if (threads > p.count)
		threads = p.count;
	if (threads > 64)
		threads = 64;
	pthread_t tids[64];
	size_t started = 0;
	for (size_t t = 1; t < threads; t++) /* this thread is one of them */
		if (pthread_create(&tids[started], NULL, walk_worker, &p) == 0)
			started++;
	walk_worker(&p);
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	for (k = 0; k < p.count; k++) {
		struct walk *w = &p.units[k];
		struct hf_repo *repo = w->repo;
		if (w->n_warnings) {
			repo->warnings = xrealloc(repo->warnings, (repo->n_warnings + w->n_warnings) * sizeof(*repo->warnings));
			memcpy(repo->warnings + repo->n_warnings, w->warnings, w->n_warnings * sizeof(*w->warnings));
			repo->n_warnings += w->n_warnings;
		}
		free(w->warnings);
	}
	free(p.units);
	for (size_t r = 0; r < cache->n_repos; r++)
		sum_repo(&cache->repos[r]);
}

static bool top_level_litter(const char *name)
{
	static const char *const skip[] = { ".locks", "CACHEDIR.TAG", ".DS_Store", "Thumbs.db", "desktop.ini", "." , ".." };
	for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
		if (strcmp(name, skip[i]) == 0)
			return true;
	return str_starts_with(name, "._");
}

static int repo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_repo *)a)->folder, ((const struct hf_repo *)b)->folder);
}

int hf_cache_scan(const char *path, struct hf_cache *cache, char *err, size_t errsize)
{
	memset(cache, 0, sizeof(*cache));
	cache->path = xstrdup(path);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
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
	for (size_t i = 0; i < cache->n_repos; i++)
		scan_repo(&cache->repos[i], fd);
	walk_all(cache, fd);
	closedir(d);
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
		for (size_t i = 0; i < repo->n_blobs; i++)
			free(repo->blobs[i].name);
		free(repo->blobs);
		for (size_t v = 0; v < repo->n_revisions; v++) {
			for (size_t i = 0; i < repo->revisions[v].n_files; i++) {
				free(repo->revisions[v].files[i].path);
				free(repo->revisions[v].files[i].target);
			}
			free(repo->revisions[v].files);
			free(repo->revisions[v].commit);
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
	}
	free(cache->repos);
	free(cache->path);
	memset(cache, 0, sizeof(*cache));
}
