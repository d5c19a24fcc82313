#include "record_prune.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dirents.h"
#include "../lib/util.h"

static const char *const prefixes[] = { HF_VERIFIED_PREFIX, HF_DIRS_PREFIX };

/* The cache id ("DEV-INO", lower-case hex as the writers print it) of a
 * record's name, or NULL when the name is none of gpugate's records. */
static const char *cache_id(const char *name)
{
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) != 0)
			continue;
		const char *id = name + n;
		size_t dev = strspn(id, "0123456789abcdef");
		if (!dev || id[dev] != '-')
			return NULL;
		size_t ino = strspn(id + dev + 1, "0123456789abcdef");
		return ino && !id[dev + 1 + ino] ? id : NULL;
	}
	return NULL;
}

struct record_file {
	char *name;
	const char *id; /* in name */
	struct timespec mtim;
};

struct cache_use {
	const char *id;
	struct timespec last; /* the newest mtime of its records */
};

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

static int newest_first(const void *a, const void *b)
{
	const struct cache_use *x = a, *y = b;
	int c = ts_cmp(&y->last, &x->last);
	return c ? c : strcmp(x->id, y->id);
}

void hf_records_prune(const char *written)
{
	const char *slash = strrchr(written, '/');
	const char *keep = slash ? cache_id(slash + 1) : NULL;
	if (!keep)
		return;
	char *dir = xstrndup(written, (size_t)(slash - written));
	struct dirents d;
	int rc = dirents_open(&d, AT_FDCWD, dir, O_NOFOLLOW);
	free(dir);
	if (rc < 0)
		return;
	struct record_file *files = NULL;
	struct cache_use *caches = NULL;
	size_t n = 0, n_caches = 0, alloc = 0;
	const char *name;
	unsigned char type;
	while ((name = dirents_next(&d, &type))) {
		struct stat st;
		if (!cache_id(name) || fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue; /* only gpugate's records themselves, never through a link */
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 32;
			files = xrealloc(files, alloc * sizeof(*files));
			caches = xrealloc(caches, alloc * sizeof(*caches));
		}
		char *copy = xstrdup(name);
		files[n++] = (struct record_file){ copy, cache_id(copy), st.st_mtim };
	}
	/* each cache once, at its records' newest use (a few dozen files: pairs compared) */
	for (size_t i = 0; i < n; i++) {
		size_t c = 0;
		while (c < n_caches && strcmp(caches[c].id, files[i].id) != 0)
			c++;
		if (c == n_caches)
			caches[n_caches++] = (struct cache_use){ files[i].id, files[i].mtim };
		else if (ts_cmp(&files[i].mtim, &caches[c].last) > 0)
			caches[c].last = files[i].mtim;
	}
	if (n_caches)
		qsort(caches, n_caches, sizeof(*caches), newest_first);
	size_t kept = 1; /* the cache just written stays, and counts */
	for (size_t c = 0; c < n_caches; c++) {
		if (strcmp(caches[c].id, keep) == 0)
			continue;
		if (kept < HF_RECORD_CACHES_MAX) {
			kept++;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (strcmp(files[i].id, caches[c].id) == 0)
				(void)unlinkat(d.fd, files[i].name, 0);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	free(caches);
	dirents_close(&d);
}

void hf_record_mark_used(int fd)
{
	(void)futimens(fd, NULL);
}
