#include "record_prune.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
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

struct pruned_file {
	char *name;
	const char *group; /* in name */
	struct timespec mtim;
	uint64_t bytes;
};

struct file_group {
	const char *id;
	struct timespec last; /* the newest mtime of its files */
	uint64_t bytes;
	size_t first, n; /* its files: a run of them once sorted by group */
};

static int by_group(const void *a, const void *b)
{
	return strcmp(((const struct pruned_file *)a)->group, ((const struct pruned_file *)b)->group);
}

static int newest_first(const void *a, const void *b)
{
	const struct file_group *x = a, *y = b;
	int c = timespec_cmp(&y->last, &x->last);
	return c ? c : strcmp(x->id, y->id);
}

/* A group's files are left when it fits within the bound, else removed. */
static bool fits(const struct hf_prune_bound *bound, size_t kept, uint64_t bytes, const struct file_group *g)
{
	return kept < bound->max_groups && bytes + g->bytes <= bound->max_bytes;
}

void hf_prune_lru(const char *dir, const char *keep, const struct hf_prune_bound *bound)
{
	struct dirents d;
	if (dirents_open(&d, AT_FDCWD, dir, O_NOFOLLOW) < 0)
		return;
	const char *keep_group = keep ? bound->group_of(keep) : NULL;
	struct pruned_file *files = NULL;
	size_t n = 0, alloc = 0;
	const char *name;
	unsigned char type;
	while ((name = dirents_next(&d, &type))) {
		struct stat st;
		if (!bound->group_of(name) || fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue; /* only the files of the bound themselves, never through a link */
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			files = xrealloc(files, alloc * sizeof(*files));
		}
		char *copy = xstrdup(name);
		files[n++] =
			(struct pruned_file){ copy, bound->group_of(copy), st.st_mtim, (uint64_t)st.st_blocks * 512 };
	}
	/* each group once, at its files' newest use */
	struct file_group *groups = n ? xmalloc(n * sizeof(*groups)) : NULL;
	size_t n_groups = 0;
	if (n)
		qsort(files, n, sizeof(*files), by_group);
	for (size_t i = 0; i < n; i++) {
		if (!n_groups || strcmp(groups[n_groups - 1].id, files[i].group) != 0)
			groups[n_groups++] = (struct file_group){ files[i].group, files[i].mtim, 0, i, 0 };
		struct file_group *g = &groups[n_groups - 1];
		if (timespec_cmp(&files[i].mtim, &g->last) > 0)
			g->last = files[i].mtim;
		g->bytes += files[i].bytes;
		g->n++;
	}
	if (n_groups)
		qsort(groups, n_groups, sizeof(*groups), newest_first);
	size_t kept = 0;
	uint64_t bytes = 0;
	for (size_t c = 0; c < n_groups; c++)
		if (keep_group && strcmp(groups[c].id, keep_group) == 0) { /* counted first: it stays */
			kept++;
			bytes += groups[c].bytes;
		}
	for (size_t c = 0; c < n_groups; c++) {
		const struct file_group *g = &groups[c];
		if (keep_group && strcmp(g->id, keep_group) == 0)
			continue;
		if (fits(bound, kept, bytes, g)) {
			kept++;
			bytes += g->bytes;
			continue;
		}
		for (size_t i = g->first; i < g->first + g->n; i++)
			(void)unlinkat(d.fd, files[i].name, 0);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	free(groups);
	dirents_close(&d);
}

static const struct hf_prune_bound records_bound = { cache_id, HF_RECORD_CACHES_MAX, UINT64_MAX };

void hf_records_prune(const char *written)
{
	const char *slash = strrchr(written, '/');
	if (!slash || !cache_id(slash + 1))
		return;
	char *dir = xstrndup(written, (size_t)(slash - written));
	hf_prune_lru(dir, slash + 1, &records_bound);
	free(dir);
}

void hf_record_mark_used(int fd)
{
	(void)futimens(fd, NULL);
}
