#include "listing.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Python's `x != 1` for the JSON value x: 1, 1.0 and true equal 1. */
static bool equals_one(const json_t *v)
{
	return (json_is_integer(v) && json_integer_value(v) == 1) || (json_is_real(v) && json_real_value(v) == 1.0) ||
	       json_is_true(v);
}

static bool is_hex64(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') || (s[n] >= 'A' && s[n] <= 'F')))
			return false;
	return n == 64;
}

static char *string_or_null(const json_t *v)
{
	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

static int listed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_listed_file *)a)->path, ((const struct hf_listed_file *)b)->path);
}

static void drop_files(struct hf_listing *l)
{
	for (size_t i = 0; i < l->n_files; i++) {
		free(l->files[i].path);
		free(l->files[i].blob_id);
		free(l->files[i].lfs_sha256);
		free(l->files[i].xet_hash);
	}
	free(l->files);
	l->files = NULL;
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
	l->files = xcalloc(json_object_size(files) + 1, sizeof(*l->files));
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
		f->path = xstrdup(path);
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
			if (!is_hex64(json_string_value(xet))) {
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
			f->xet_hash = xstrdup(json_string_value(xet));
		}
	}
	if (l->n_files)
		qsort(l->files, l->n_files, sizeof(*l->files), listed_cmp);
	l->state = HF_LISTING_OK;
}

void hf_listing_parse(const char *data, size_t len, struct hf_listing *out)
{
	memset(out, 0, sizeof(*out));
	json_error_t err;
	/* any top-level value, as json.load; strings may hold \u0000 as in Python */
	json_t *doc = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (!doc) {
		set_state(out, HF_LISTING_MALFORMED, "not JSON: %s at line %d", err.text, err.line);
		return;
	}
	parse_doc(doc, out);
	json_decref(doc);
}

void hf_listing_read(int repo_fd, const char *commit, size_t max_bytes, struct hf_listing *out)
{
	memset(out, 0, sizeof(*out));
	int trees = openat(repo_fd, "trees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (trees < 0) {
		if (errno != ENOENT)
			set_state(out, HF_LISTING_MALFORMED, "trees/ cannot be opened: %s",
				  errno == ELOOP || errno == ENOTDIR ? "not a folder (a link or a file): not followed"
								     : strerror(errno));
		return;
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
		return;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		set_state(out, HF_LISTING_MALFORMED, "not a plain file");
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		set_state(out, HF_LISTING_MALFORMED, "%llu bytes, more than the %zu this reader takes",
			  (unsigned long long)st.st_size, max_bytes);
		close(fd);
		return;
	}
	size_t cap = (size_t)st.st_size + 1, len = 0;
	char *buf = xmalloc(cap);
	while (len < cap) { /* a file that grows is cut at its size + 1: then malformed */
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_state(out, HF_LISTING_MALFORMED, "cannot be read: %s", strerror(errno));
			free(buf);
			close(fd);
			return;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	hf_listing_parse(buf, len, out);
	free(buf);
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
	if (!h)
		return NULL;
	size_t n = 0;
	for (; h[n]; n++)
		if (!((h[n] >= '0' && h[n] <= '9') || (h[n] >= 'a' && h[n] <= 'f') || (h[n] >= 'A' && h[n] <= 'F')))
			return NULL;
	return n == 64 || n == 40 ? h : NULL;
}
