#include "listing.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/digest.h"
#include "cache_format.h"
#include "../lib/util.h"

const char *hf_listing_state_text(enum hf_listing_state s)
{
	switch (s) {
	case HF_LISTING_NONE:
		return "no listing";
	case HF_LISTING_OK:
		return "ok";
	case HF_LISTING_VERSION:
		return "unknown format_version";
	case HF_LISTING_MALFORMED:
		return "malformed";
	case HF_LISTING_BAD_XET:
		return "invalid xet_hash";
	case HF_LISTING_CRASHES:
		return "unreadable by huggingface_hub";
	case HF_LISTING_TOO_BIG:
		return "beyond this reader's limits";
	}
	return "?";
}

static void set_state(struct hf_listing *l, enum hf_listing_state s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_state(struct hf_listing *l, enum hf_listing_state s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(l->problem);
	l->problem = xvasprintf(fmt, ap);
	va_end(ap);
	text_sanitize(l->problem);
	l->state = s;
}

/* --- the memory budget of one parse -------------------------------------- */

/* jansson costs about 12 times a listing's size (a hash table per entry):
 * a large or hostile trees/<commit>.json could take the memory of the whole
 * container, and under a memory limit a failed allocation read as "not
 * JSON" would have the listing ignored and a cache with missing files pass.
 * So every allocation of a parse (jansson's, through json_set_alloc_funcs,
 * and the reader's copies) is counted against a budget of this thread;
 * past it, or when malloc itself fails, the parse stops and the listing is
 * HF_LISTING_TOO_BIG: a failed check naming the file, never ignored. */
static _Thread_local struct {
	bool on;      /* a parse is under way on this thread */
	bool refused; /* an allocation was refused (budget) or failed (malloc) */
	bool failed;  /* malloc itself failed (a memory limit of the process) */
	size_t used, limit;
} budget;

static void *budget_malloc(size_t n)
{
	if (budget.on && (budget.refused || n > budget.limit - budget.used)) {
		budget.refused = true;
		return NULL;
	}
	void *p = malloc(n);
	if (!p)
		budget.refused = budget.failed = budget.on;
	else if (budget.on)
		budget.used += malloc_usable_size(p);
	return p;
}

/* Freeing counts with the same measure as malloc did; a block from before
 * the parse (or another thread) only lowers the count, never below 0. */
static void budget_free(void *p)
{
	if (p && budget.on) {
		size_t n = malloc_usable_size(p);
		budget.used = n < budget.used ? budget.used - n : 0;
	}
	free(p);
}

static void install_budget_allocator(void)
{
	json_set_alloc_funcs(budget_malloc, budget_free);
}

static char *budget_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = budget_malloc(n);
	if (copy)
		memcpy(copy, s, n);
	return copy;
}

/* Python's `x != 1` for the JSON value x: 1, 1.0 and true equal 1. */
static bool equals_one(const json_t *v)
{
	return (json_is_integer(v) && json_integer_value(v) == 1) || (json_is_real(v) && json_real_value(v) == 1.0) ||
	       json_is_true(v);
}

static char *string_or_null(const json_t *v)
{
	return json_is_string(v) ? budget_strdup(json_string_value(v)) : NULL;
}

static int listed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_listed_file *)a)->path, ((const struct hf_listed_file *)b)->path);
}

static void drop_files(struct hf_listing *l)
{
	for (size_t i = 0; i < l->n_files && !l->strings; i++) {
		free(l->files[i].path);
		free(l->files[i].blob_id);
		free(l->files[i].lfs_sha256);
		free(l->files[i].xet_hash);
	}
	free(l->files);
	free(l->strings);
	l->files = NULL;
	l->strings = NULL;
	l->n_files = 0;
}

/* The steps of _read_tree_cache_from_disk() and is_valid_tree_entries(), in
 * their order, so that the first fault decides as it does upstream. */
static void parse_doc(json_t *doc, struct hf_listing *l)
{
	if (!json_is_object(doc)) { /* data.get(...): AttributeError, not caught */
		set_state(l, HF_LISTING_CRASHES,
			  "the top level is not a JSON object (huggingface_hub raises AttributeError)");
		return;
	}
	json_t *version = json_object_get(doc, "format_version");
	if (!equals_one(version)) {
		char *text = version ? json_dumps(version, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		set_state(l, HF_LISTING_VERSION, "format_version %s (this reader and huggingface_hub know 1)",
			  text ? text : "missing");
		free(text);
		return;
	}
	json_t *files = json_object_get(doc, "files");
	if (!files) {
		set_state(l, HF_LISTING_MALFORMED, "no \"files\" key");
		return;
	}
	if (!json_is_object(files)) { /* data["files"].items(): AttributeError */
		set_state(l, HF_LISTING_CRASHES,
			  "\"files\" is not a JSON object (huggingface_hub raises AttributeError)");
		return;
	}
	size_t n_entries = json_object_size(files) + 1;
	if (budget.limit / sizeof(*l->files) <= n_entries)
		budget.refused = true; /* the array alone is past the budget */
	l->files = budget.refused ? NULL : budget_malloc(n_entries * sizeof(*l->files));
	if (!l->files)
		return; /* budget.refused: the caller says so */
	memset(l->files, 0, n_entries * sizeof(*l->files));
	const char *path;
	json_t *info;
	json_object_foreach(files, path, info)
	{
		/* info["size"], info["blob_id"]: TypeError or KeyError, both caught */
		if (!json_is_object(info) || !json_object_get(info, "size") || !json_object_get(info, "blob_id")) {
			char *p = xstrdup(path);
			text_sanitize(p);
			set_state(l, HF_LISTING_MALFORMED, "the entry for \"%s\" %s", p,
				  json_is_object(info) ? "lacks size or blob_id" : "is not an object");
			free(p);
			drop_files(l);
			return;
		}
		struct hf_listed_file *f = &l->files[l->n_files++];
		f->path = budget_strdup(path);
		f->file = -1;
		json_t *size = json_object_get(info, "size");
		f->has_size = json_is_integer(size) && json_integer_value(size) >= 0;
		f->size = f->has_size ? (uint64_t)json_integer_value(size) : 0;
		f->blob_id = string_or_null(json_object_get(info, "blob_id"));
		json_t *lfs = json_object_get(info, "lfs_sha256");
		f->lfs_sha256 = json_is_null(lfs) ? NULL : string_or_null(lfs);
		json_t *xet = json_object_get(info, "xet_hash");
		if (xet && !json_is_null(xet)) {
			if (!json_is_string(xet)) { /* re.fullmatch on a non-string: TypeError, not caught */
				char *p = xstrdup(path);
				text_sanitize(p);
				set_state(l, HF_LISTING_CRASHES,
					  "the xet_hash of \"%s\" is not a string (huggingface_hub raises TypeError)",
					  p);
				free(p);
				drop_files(l);
				return;
			}
			if (!digest_is_hex(json_string_value(xet), 64)) {
				char *p = xstrdup(path);
				text_sanitize(p);
				set_state(
					l, HF_LISTING_BAD_XET,
					"the xet_hash of \"%s\" is not 64 hex digits (huggingface_hub ignores the listing)",
					p);
				free(p);
				drop_files(l);
				return;
			}
			f->xet_hash = budget_strdup(json_string_value(xet));
		}
		if (budget.refused) {
			drop_files(l);
			return;
		}
	}
	if (l->n_files)
		qsort(l->files, l->n_files, sizeof(*l->files), listed_cmp);
	l->state = HF_LISTING_OK;
}

/* The budget of a listing of len bytes: 16 times its size (a listing as
 * huggingface_hub writes it takes about 12) and some room for a small one,
 * never more than HF_LISTING_MAX_MEMORY. */
static size_t budget_for(size_t len)
{
	size_t cap = HF_LISTING_MAX_MEMORY;
	return len > (cap - (16u << 20)) / 16 ? cap : 16 * len + (16u << 20);
}

void hf_listing_parse(const char *data, size_t len, struct hf_listing *out)
{
	hf_listing_parse_capped(data, len, budget_for(len), out);
}

void hf_listing_parse_capped(const char *data, size_t len, size_t memory_cap, struct hf_listing *out)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install_budget_allocator);
	memset(out, 0, sizeof(*out));
	budget.on = true;
	budget.refused = budget.failed = false;
	budget.used = 0;
	budget.limit = memory_cap;
	json_error_t err;
	/* any top-level value, as json.load; strings may hold \u0000 as in Python */
	json_t *doc = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (doc && !budget.refused)
		parse_doc(doc, out);
	json_decref(doc);
	bool refused = budget.refused, failed = budget.failed;
	budget.on = false;
	if (refused) {
		drop_files(out);
		if (failed)
			set_state(out, HF_LISTING_TOO_BIG,
				  "memory ran out parsing its %zu bytes (a memory limit?): its completeness is not "
				  "checked, so it counts as a failure",
				  len);
		else
			set_state(out, HF_LISTING_TOO_BIG,
				  "parsing its %zu bytes needs more than the %zu MiB of memory this reader allows: its "
				  "completeness is not checked, so it counts as a failure",
				  len, memory_cap >> 20);
	} else if (!doc) {
		set_state(out, HF_LISTING_MALFORMED, "not JSON: %s at line %d", err.text, err.line);
	}
}

int hf_listing_open(int repo_fd, const char *commit, size_t max_bytes, struct stat *st, struct hf_listing *out)
{
	memset(out, 0, sizeof(*out));
	int trees = openat(repo_fd, HF_TREES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (trees < 0) {
		if (errno != ENOENT)
			set_state(out, HF_LISTING_MALFORMED, "trees/ cannot be opened: %s",
				  errno == ELOOP || errno == ENOTDIR ? "not a folder (a link or a file): not followed"
								     : strerror(errno));
		return -1;
	}
	char *name = xasprintf("%s.json", commit);
	int fd = openat(trees, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int e = errno;
	free(name);
	close(trees);
	if (fd < 0) {
		if (e != ENOENT)
			set_state(out, HF_LISTING_MALFORMED, "cannot be opened: %s",
				  e == ELOOP ? "a link: not followed" : strerror(e));
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		set_state(out, HF_LISTING_MALFORMED, "not a plain file");
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > max_bytes) {
		set_state(out, HF_LISTING_TOO_BIG,
			  "%llu bytes, more than the %zu this reader takes: its completeness is not checked, so it "
			  "counts as a failure",
			  (unsigned long long)st->st_size, max_bytes);
		close(fd);
		return -1;
	}
	return fd;
}

void hf_listing_read_fd(int fd, const struct stat *st, struct hf_listing *out)
{
	size_t cap = (size_t)st->st_size + 1, len = 0;
	char *buf = xmalloc(cap);
	while (len < cap) { /* a file that grows is cut at its size + 1: then malformed */
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_state(out, HF_LISTING_MALFORMED, "cannot be read: %s", strerror(errno));
			free(buf);
			return;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	hf_listing_parse(buf, len, out);
	free(buf);
}

void hf_listing_read(int repo_fd, const char *commit, size_t max_bytes, struct hf_listing *out)
{
	struct stat st;
	int fd = hf_listing_open(repo_fd, commit, max_bytes, &st, out);
	if (fd < 0)
		return;
	hf_listing_read_fd(fd, &st, out);
	close(fd);
}

void hf_listing_free(struct hf_listing *l)
{
	drop_files(l);
	free(l->problem);
	memset(l, 0, sizeof(*l));
}

const struct hf_listed_file *hf_listing_find(const struct hf_listing *l, const char *path)
{
	if (!l || !l->n_files)
		return NULL;
	struct hf_listed_file key = { .path = (char *)path };
	return bsearch(&key, l->files, l->n_files, sizeof(key), listed_cmp);
}

const char *hf_listed_hash(const struct hf_listed_file *f)
{
	const char *h = f->lfs_sha256 && *f->lfs_sha256 ? f->lfs_sha256 : f->blob_id;
	return h && digest_name_length(h) ? h : NULL;
}

bool hf_listed_other_blob(const struct hf_listed_file *f, const char *blob)
{
	const char *h = f->lfs_sha256 && *f->lfs_sha256 ? f->lfs_sha256 : f->blob_id;
	/* equal bytes first: the usual case, and a fraction of strcasecmp's cost */
	return h && strcmp(blob, h) != 0 && strcasecmp(blob, h) != 0 && digest_name_length(h);
}
