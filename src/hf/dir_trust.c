#include "dir_trust.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crew.h"
#include "record_prune.h"
#include "verified_record.h"
#include "../lib/safe_io.h"
#include "../lib/strbuf.h"
#include "../lib/util.h"

#define MAGIC "gpugate-hf-dirs 2" /* 2: large listings summed by blocks */

/* A folder as the record holds it; its lines are parsed when asked for. */
struct loaded_dir {
	const char *key;
	struct hf_record_stat st;
	uint64_t n_entries, sum;
	char *body; /* n_entries lines, bytes long */
	size_t bytes;
	bool claimed; /* handed out (or refused) once this scan */
	struct hf_dir_entry *entries;
};

/* A folder to write: taken from the record or read afresh. */
struct kept_dir {
	char *key;
	struct hf_record_stat st;
	struct hf_dir_entry *entries;
	size_t n;
	bool owned; /* entries and their strings are this list's (read afresh) */
};

struct hf_dir_trust {
	char *file;       /* NULL: nothing is written */
	char *cache_line; /* the "cache ..." line */
	struct timespec scan_stamp;
	struct hf_record rec; /* usable and stamp: the record's racy rule (hf_record_trusts) */
	char *buf;
	struct loaded_dir *dirs; /* sorted by key */
	size_t n_dirs;
	pthread_mutex_t lock; /* claimed flags and the list below */
	struct kept_dir *out;
	size_t n_out, alloc_out;
	bool fresh; /* some folder was read afresh: write the record */
};

/* FNV-1a's step (64 bits, the FNV authors' parameters,
 * draft-eastlake-fnv) over 8-byte words in the host's order, then the
 * bytes left: catches a listing edited or damaged in place at a multiply
 * per word (a byte a step costs the 3 MB record of a 20,000-file cache a
 * few ms). The record is this host's own state, so the order is too. */
static uint64_t fnv1a_words(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 1099511628211ull;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* A listing's checksum: fnv1a_words of it up to SUM_BLOCK bytes; a larger
 * one is cut into SUM_BLOCK-byte blocks whose sums are folded in order by
 * the same step (one multiply a block), so that the blocks are summed side
 * by side on the crew (crew.h): one thread's chain of multiplies over the
 * 1.3 MB listing of a 20,000-blob blobs/ was a few hundred microseconds of
 * the scan's serial path. */
#define SUM_BLOCK (64u << 10)
#define SUM_SLICE 4 /* blocks a slice */

struct block_sums {
	const char *p;
	size_t n;
	uint64_t *sums;
};

static void sum_blocks(void *arg, size_t begin, size_t end)
{
	struct block_sums *b = arg;
	for (size_t k = begin; k < end; k++) {
		size_t at = k * SUM_BLOCK;
		b->sums[k] = fnv1a_words(b->p + at, b->n - at < SUM_BLOCK ? b->n - at : SUM_BLOCK);
	}
}

static uint64_t checksum(const char *p, size_t n)
{
	if (n <= SUM_BLOCK)
		return fnv1a_words(p, n);
	struct block_sums b = { .p = p, .n = n };
	size_t blocks = (n + SUM_BLOCK - 1) / SUM_BLOCK;
	b.sums = xcalloc(blocks, sizeof(*b.sums));
	if (hf_crew_held())
		hf_crew_for(blocks, SUM_SLICE, SIZE_MAX, sum_blocks, &b);
	else
		sum_blocks(&b, 0, blocks);
	uint64_t h = 14695981039346656037ull;
	for (size_t k = 0; k < blocks; k++)
		h = (h ^ b.sums[k]) * 1099511628211ull;
	free(b.sums);
	return h;
}

int hf_dir_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hf_dir_entry *)a)->name, ((const struct hf_dir_entry *)b)->name);
}

static int loaded_cmp(const void *key, const void *d)
{
	return strcmp(key, ((const struct loaded_dir *)d)->key);
}

static struct hf_record_stat stat_of(const struct stat *st)
{
	return (struct hf_record_stat){ .dev = (uint64_t)st->st_dev,
					.ino = (uint64_t)st->st_ino,
					.size = (uint64_t)st->st_size,
					.mtim = st->st_mtim,
					.ctim = st->st_ctim };
}

/* The header lines and each folder's "dir" line; any fault: false, and
 * nothing of the record is used. */
static bool parse(struct hf_dir_trust *t, char *text, const char *end)
{
	char *line = hf_record_next_line(&text);
	if (!line || strcmp(line, MAGIC) != 0)
		return false;
	line = hf_record_next_line(&text);
	if (!line || !t->cache_line || strcmp(line, t->cache_line) != 0)
		return false;
	char *cur = hf_record_next_line(&text);
	const char *word = hf_record_field(&cur);
	if (!word || strcmp(word, "stamp") != 0 || !hf_record_timespec(&cur, &t->rec.stamp) || cur)
		return false;
	cur = hf_record_next_line(&text);
	word = hf_record_field(&cur);
	uint64_t n;
	/* a "dir" line takes more than 16 bytes: no count past what the file holds */
	if (!word || strcmp(word, "dirs") != 0 || !hf_record_number(&cur, (uint64_t)(end - text) / 16, &n) || cur)
		return false;
	t->dirs = xcalloc(n + 1, sizeof(*t->dirs));
	for (t->n_dirs = 0; t->n_dirs < n; t->n_dirs++) {
		struct loaded_dir *d = &t->dirs[t->n_dirs];
		cur = hf_record_next_line(&text);
		word = hf_record_field(&cur);
		uint64_t bytes;
		if (!word || strcmp(word, "dir") != 0 || !(d->key = hf_record_field(&cur)) || !*d->key ||
		    !hf_record_number(&cur, UINT64_MAX, &d->st.dev) ||
		    !hf_record_number(&cur, UINT64_MAX, &d->st.ino) ||
		    !hf_record_number(&cur, UINT64_MAX, &d->st.size) || !hf_record_timespec(&cur, &d->st.mtim) ||
		    !hf_record_timespec(&cur, &d->st.ctim) ||
		    !hf_record_number(&cur, HF_DIR_TRUST_MAX_BYTES, &d->n_entries) ||
		    !hf_record_number(&cur, (uint64_t)(end - text), &bytes) ||
		    !hf_record_number(&cur, UINT64_MAX, &d->sum) || cur)
			return false;
		if (!hf_record_decode((char *)d->key) || (t->n_dirs && strcmp(t->dirs[t->n_dirs - 1].key, d->key) >= 0))
			return false; /* sorted, each once: what bsearch needs */
		d->body = text;
		d->bytes = (size_t)bytes;
		if (bytes ? d->body[bytes - 1] != '\n' : d->n_entries != 0)
			return false;
		text += bytes;
	}
	return strcmp(text, "end\n") == 0;
}

struct hf_dir_trust *hf_dir_trust_open(const char *state_dir, const char *cache_path, const struct timespec *scan_stamp)
{
	struct hf_dir_trust *t = xcalloc(1, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->scan_stamp = *scan_stamp;
	struct stat st;
	if (!state_dir || stat(cache_path, &st) < 0)
		return t;
	t->file = xasprintf("%s/" HF_DIRS_PREFIX "%" PRIx64 "-%" PRIx64, state_dir, (uint64_t)st.st_dev,
			    (uint64_t)st.st_ino);
	t->cache_line = hf_record_cache_line(cache_path);
	char err[SAFE_ERR_MAX];
	struct stat fst;
	/* no link followed, a regular file only (a FIFO fails at once), capped */
	int fd = safe_open_read_at(AT_FDCWD, t->file, O_NOFOLLOW, SAFE_KIND_REG, HF_DIR_TRUST_MAX_BYTES, &fst, err,
				   sizeof(err));
	if (fd < 0)
		return t;
	size_t len;
	int rc = hf_record_read(fd, t->file, HF_DIR_TRUST_MAX_BYTES, &t->buf, &len, err, sizeof(err));
	if (rc < 0 || !parse(t, t->buf, t->buf + len)) {
		close(fd);
		free(t->dirs);
		t->dirs = NULL;
		t->n_dirs = 0;
		return t;
	}
	hf_record_mark_used(fd); /* the last of the state folder's records to be pruned */
	close(fd);
	t->rec.usable = true;
	return t;
}

static char letter_of(unsigned char type)
{
	return type == DT_DIR ? 'd' : type == DT_LNK ? 'l' : type == DT_REG ? 'f' : 'o';
}

/* One string field of an entry line, [s, end): no space in it, at least a
 * byte, %XX decoded in place (only where a '%' is: most names have none).
 * NUL-terminated at end (the space or newline after it). */
static bool entry_field(char *s, char *end)
{
	size_t n = (size_t)(end - s);
	if (!n || memchr(s, ' ', n))
		return false;
	*end = '\0';
	return !memchr(s, '%', n) || hf_record_decode(s);
}

/* One line "T NAME" (a link: "l NAME TARGET"), len bytes, into entry i:
 * split with memchr (the C library's vector code rather than a field
 * parser's bytes one by one). Nonzero when the line is not one. */
static int entry_line(void *arg, size_t i, char *line, size_t len)
{
	struct hf_dir_entry *e = &((struct hf_dir_entry *)arg)[i];
	char *nl = line + len;
	if (len < 3 || !strchr("dlfo", line[0]) || line[1] != ' ')
		return 1;
	char t = line[0], *name = line + 2, *name_end = nl, *target = NULL;
	if (t == 'l') { /* "l NAME TARGET": the first space after the name splits them */
		char *sp = memchr(name, ' ', (size_t)(nl - name));
		if (!sp || !entry_field(sp + 1, nl))
			return 1;
		target = sp + 1;
		name_end = sp;
	}
	if (!entry_field(name, name_end) || strchr(name, '/'))
		return 1;
	*e = (struct hf_dir_entry){ .name = name,
				    .target = target,
				    .type = t == 'd'   ? DT_DIR
					    : t == 'l' ? DT_LNK
					    : t == 'f' ? DT_REG
						       : DT_UNKNOWN };
	return 0;
}

static bool entry_in_order(void *arg, size_t i)
{
	const struct hf_dir_entry *e = arg;
	return strcmp(e[i - 1].name, e[i].name) < 0;
}

/* A folder's lines into entries, checked: the checksum, the count, each
 * line, names strictly increasing (blobs/ of a 20,000-blob cache, which
 * the blobs' stat waits for, in pieces on several threads). */
static bool parse_entries(struct loaded_dir *d)
{
	/* an entry line takes at least 4 bytes ("o x\n"): no count past the lines */
	if (d->n_entries > d->bytes / 4 || checksum(d->body, d->bytes) != d->sum)
		return false;
	struct hf_dir_entry *e = xcalloc(d->n_entries + 1, sizeof(*e));
	char *text = d->body, *end = d->body + d->bytes;
	struct hf_record_lines how = { .line = entry_line, .in_order = entry_in_order, .arg = e };
	size_t bad;
	if (hf_record_parse_lines(&text, end, (size_t)d->n_entries, &how, &bad) != 0 || text != end) {
		free(e);
		return false;
	}
	d->entries = e;
	return true;
}

static void keep(struct hf_dir_trust *t, struct kept_dir k)
{
	if (t->n_out == t->alloc_out) {
		t->alloc_out = t->alloc_out ? t->alloc_out * 2 : 16;
		t->out = xrealloc(t->out, t->alloc_out * sizeof(*t->out));
	}
	t->out[t->n_out++] = k;
}

bool hf_dir_trust_get(struct hf_dir_trust *t, const char *key, const struct stat *st,
		      const struct hf_dir_entry **entries, size_t *n)
{
	if (!t || !t->rec.usable)
		return false;
	struct loaded_dir *d = bsearch(key, t->dirs, t->n_dirs, sizeof(*t->dirs), loaded_cmp);
	if (!d)
		return false;
	pthread_mutex_lock(&t->lock);
	bool mine = !d->claimed;
	d->claimed = true;
	pthread_mutex_unlock(&t->lock);
	struct hf_record_stat now = stat_of(st);
	struct hf_record_entry was = { .st = d->st };
	if (!mine || !hf_record_trusts(&t->rec, &was, &now) || !parse_entries(d))
		return false;
	*entries = d->entries;
	*n = (size_t)d->n_entries;
	pthread_mutex_lock(&t->lock);
	keep(t, (struct kept_dir){ .key = xstrdup(key), .st = d->st, .entries = d->entries, .n = *n });
	pthread_mutex_unlock(&t->lock);
	return true;
}

void hf_dir_trust_put(struct hf_dir_trust *t, const char *key, const struct stat *st,
		      const struct hf_dir_entry *entries, size_t n)
{
	if (!t || !t->file)
		return;
	struct hf_dir_entry *copy = xcalloc(n + 1, sizeof(*copy));
	for (size_t i = 0; i < n; i++)
		copy[i] = (struct hf_dir_entry){ .name = xstrdup(entries[i].name),
						 .target = entries[i].target ? xstrdup(entries[i].target) : NULL,
						 .type = entries[i].type };
	pthread_mutex_lock(&t->lock);
	keep(t, (struct kept_dir){ .key = xstrdup(key), .st = stat_of(st), .entries = copy, .n = n, .owned = true });
	t->fresh = true;
	pthread_mutex_unlock(&t->lock);
}

static int kept_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kept_dir *)a)->key, ((const struct kept_dir *)b)->key);
}

static void save(struct hf_dir_trust *t)
{
	qsort(t->out, t->n_out, sizeof(*t->out), kept_cmp);
	struct timespec stamp = t->scan_stamp;
	stamp.tv_sec -= HF_RECORD_RACY_MARGIN;
	struct strbuf dirs = STRBUF_INIT, body = STRBUF_INIT;
	size_t count = 0;
	for (size_t i = 0; i < t->n_out; i++) {
		const struct kept_dir *k = &t->out[i];
		if (i && strcmp(t->out[i - 1].key, k->key) == 0)
			continue; /* a folder reached twice (two linked revisions): once */
		sb_release(&body);
		for (size_t j = 0; j < k->n; j++) {
			const struct hf_dir_entry *e = &k->entries[j];
			char type[3] = { letter_of(e->type), ' ', '\0' };
			sb_puts(&body, type);
			hf_record_encode(&body, e->name);
			if (e->type == DT_LNK) {
				sb_puts(&body, " ");
				hf_record_encode(&body, e->target ? e->target : "");
			}
			sb_puts(&body, "\n");
		}
		sb_puts(&dirs, "dir ");
		hf_record_encode(&dirs, k->key);
		sb_printf(&dirs, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %lld %ld %lld %ld %zu %zu %" PRIu64 "\n",
			  k->st.dev, k->st.ino, k->st.size, (long long)k->st.mtim.tv_sec, k->st.mtim.tv_nsec,
			  (long long)k->st.ctim.tv_sec, k->st.ctim.tv_nsec, k->n, body.len,
			  checksum(body.buf, body.len));
		sb_add(&dirs, body.buf, body.len);
		count++;
		if (dirs.len > HF_DIR_TRUST_MAX_BYTES)
			break;
	}
	sb_release(&body);
	struct strbuf out = STRBUF_INIT;
	sb_printf(&out, MAGIC "\n%s\nstamp %lld %ld\ndirs %zu\n", t->cache_line, (long long)stamp.tv_sec, stamp.tv_nsec,
		  count);
	sb_add(&out, dirs.buf, dirs.len);
	sb_puts(&out, "end\n");
	sb_release(&dirs);
	char err[SAFE_ERR_MAX];
	/* a state file: only ever a regular file replaced, its loss costs a walk */
	if (out.len <= HF_DIR_TRUST_MAX_BYTES &&
	    safe_write_file(t->file, out.buf, out.len, 0600, SAFE_WRITE_REPLACE_ONLY | SAFE_WRITE_NO_SYNC, err,
			    sizeof(err)) == 0)
		hf_records_prune(t->file); /* one record per cache: bounded */
	sb_release(&out);
}

/* text: where the record's text goes instead of being freed, or NULL */
static void close_trust(struct hf_dir_trust *t, char **text)
{
	if (t->fresh && t->file && t->cache_line)
		save(t);
	for (size_t i = 0; i < t->n_out; i++) {
		struct kept_dir *k = &t->out[i];
		if (k->owned) {
			for (size_t j = 0; j < k->n; j++) {
				free(k->entries[j].name);
				free(k->entries[j].target);
			}
			free(k->entries);
		}
		free(k->key);
	}
	free(t->out);
	for (size_t i = 0; i < t->n_dirs; i++)
		free(t->dirs[i].entries);
	free(t->dirs);
	if (text)
		*text = t->buf;
	else
		free(t->buf);
	free(t->cache_line);
	free(t->file);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void hf_dir_trust_close(struct hf_dir_trust *t)
{
	if (t)
		close_trust(t, NULL);
}

char *hf_dir_trust_close_keeping_text(struct hf_dir_trust *t)
{
	char *text = NULL;
	if (t)
		close_trust(t, &text);
	return text;
}
