#include "verified_record.h"
#include "../lib/timeline.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crew.h"
#include "../lib/dirents.h"
#include "../lib/parallel.h"
#include "../lib/safe_io.h"
#include "../lib/util.h"
#include "listing.h"
#include "record_prune.h"

#define MAGIC "gpugate-hf-verified 1"

/* Folder names and the cache path go into a line of space-separated fields:
 * every byte that could split or end it, and '%', as %XX. The record only
 * compares encoded forms, so nothing decodes them. */
void hf_record_encode(struct strbuf *sb, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '%')
			sb_printf(sb, "%%%02X", *p);
		else
			sb_add(sb, (const char *)p, 1);
}

char *hf_record_folder_key(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	hf_record_encode(&sb, s);
	return sb_detach(&sb);
}

char *hf_record_file(const char *state_dir, const char *cache_path, char *why, size_t why_size)
{
	struct stat st;
	if (stat(cache_path, &st) < 0) {
		snprintf(why, why_size, "cannot stat the cache %s: %s", cache_path, strerror(errno));
		text_sanitize(why);
		return NULL;
	}
	return xasprintf("%s/" HF_VERIFIED_PREFIX "%" PRIx64 "-%" PRIx64, state_dir, (uint64_t)st.st_dev,
			 (uint64_t)st.st_ino);
}

/* The cache line this cache must have: device, inode and path. The path is
 * the folder's canonical one (realpath: absolute, no link, no "." or ".."),
 * so "hub", "/abs/hub" and a link to it share one record, however each run
 * spells the cache; under --root, cache_path is the folder inside the root
 * as the scan reads it, resolved the same way every time. */
char *hf_record_cache_line(const char *cache_path)
{
	char real[PATH_MAX];
	const char *path = realpath(cache_path, real) ? real : cache_path;
	struct stat st;
	if (stat(path, &st) < 0)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "cache %" PRIu64 " %" PRIu64 " ", (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	hf_record_encode(&sb, path);
	return sb_detach(&sb);
}

static int entry_cmp(const char *fa, const char *ba, const char *fb, const char *bb)
{
	int c = strcmp(fa, fb);
	return c ? c : strcmp(ba, bb);
}

/* The next space-separated field of a line (the line's spaces become NULs). */
char *hf_record_field(char **cursor)
{
	char *s = *cursor;
	if (!s || !*s)
		return NULL;
	char *sp = strchr(s, ' ');
	if (sp) {
		*sp = '\0';
		*cursor = sp + 1;
	} else {
		*cursor = NULL;
	}
	return s;
}

/* A decimal number filling the whole field, at most max: digits only, no
 * sign, no leading space, no overflow. Read by hand, in one pass that also
 * finds the field's end (hf_record_field's search for the space, then a
 * loop over the digits, read every byte twice), without strtoull's locale
 * and errno work: a 20,000-entry record holds 180,000 of them. */
bool hf_record_number(char **cursor, uint64_t max, uint64_t *out)
{
	const char *s = *cursor;
	if (!s)
		return false;
	uint64_t v = 0;
	size_t i = 0;
	/* 19 digits cannot overflow 64 bits: the overflow test only past them */
	for (unsigned d; (d = (unsigned)(s[i] - '0')) <= 9; i++) {
		if (i >= 19 && v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (!i || (s[i] != ' ' && s[i] != '\0') || v > max)
		return false;
	*cursor = s[i] == ' ' ? *cursor + i + 1 : NULL;
	*out = v;
	return true;
}

bool hf_record_timespec(char **cursor, struct timespec *ts)
{
	uint64_t s, ns;
	if (!hf_record_number(cursor, INT64_MAX, &s) || !hf_record_number(cursor, 999999999, &ns))
		return false;
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)ns;
	return true;
}

/* Whether the next line of *text is exactly want; consumes it. */
char *hf_record_next_line(char **text)
{
	char *s = *text;
	if (!s || !*s)
		return NULL;
	char *nl = strchr(s, '\n');
	if (!nl)
		return NULL; /* every line ends with a newline: a file cut short */
	*nl = '\0';
	*text = nl + 1;
	return s;
}

/* A thread's share of a record read, and the most shares: the read's cost
 * is mostly the page faults of the fresh buffer (on a host whose fresh
 * memory is slow, 0.5 ms a MB), which threads take side by side; the
 * crew's threads are there already (crew.h). */
#define READ_PIECE  (128u << 10)
#define READ_PIECES 16

struct read_pieces {
	int fd;
	char *buf;
	size_t size, n;
	bool ok[READ_PIECES], nul[READ_PIECES];
};

static void read_piece(void *arg, size_t begin, size_t end)
{
	struct read_pieces *r = arg;
	for (size_t k = begin; k < end; k++) {
		size_t off = r->size / r->n * k, stop = k + 1 == r->n ? r->size : r->size / r->n * (k + 1);
		size_t at = off;
		while (at < stop) {
			ssize_t got = pread(r->fd, r->buf + at, stop - at, (off_t)at);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			at += (size_t)got;
		}
		r->ok[k] = at == stop;
		r->nul[k] = memchr(r->buf + off, '\0', stop - off) != NULL;
	}
}

int hf_record_read(int fd, const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize)
{
	struct stat st;
	char one;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= 2 * READ_PIECE &&
	    (uint64_t)st.st_size <= max) {
		struct read_pieces r = { .fd = fd, .size = (size_t)st.st_size };
		r.n = r.size / READ_PIECE > READ_PIECES ? READ_PIECES : r.size / READ_PIECE;
		r.buf = xmalloc(r.size + 2);
		hf_crew_for(r.n, 1, r.n, read_piece, &r);
		bool ok = pread(fd, &one, 1, (off_t)r.size) == 0, nul = false; /* its end where fstat said */
		for (size_t k = 0; k < r.n; k++) {
			ok &= r.ok[k];
			nul |= r.nul[k];
		}
		if (ok && !nul) {
			r.buf[r.size] = '\0';
			*content = r.buf;
			*len = r.size;
			return 0;
		}
		free(r.buf);
		if (ok) {
			snprintf(err, errsize, "%s holds a NUL byte", path);
			return -EINVAL;
		} /* else changed while read (pread leaves the offset): read as it is now */
	}
	int rc = safe_read_fd(fd, path, max, content, len, err, errsize);
	if (rc == 0 && strlen(*content) != *len) {
		free(*content);
		*content = NULL;
		snprintf(err, errsize, "%s holds a NUL byte", path);
		return -EINVAL;
	}
	return rc;
}

/* Lines [i, stop) from *text, the first of them at index first: line, then
 * the order against the line before (within these lines). */
static int lines_from(const struct hf_record_lines *how, char **text, char *end, size_t i, size_t stop, size_t first,
		      size_t *bad)
{
	for (; i < stop; i++) {
		char *s = *text;
		char *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
		if (!nl) {
			*bad = i;
			return HF_LINES_MISSING;
		}
		*nl = '\0';
		int c = how->line(how->arg, i, s, (size_t)(nl - s));
		if (!c && i > first && !how->in_order(how->arg, i))
			c = HF_LINES_ORDER;
		if (c) {
			*bad = i;
			return c;
		}
		*text = nl + 1;
	}
	return 0;
}

#define LINES_A_PIECE 2048 /* fewer lines a piece: not worth a thread */
#define PIECES_MAX    16

struct pieces {
	const struct hf_record_lines *how;
	size_t lines[PIECES_MAX];     /* piece k's line ends */
	char *start[PIECES_MAX + 1];  /* piece k: [start[k], start[k + 1]) */
	size_t first[PIECES_MAX + 1]; /* index of piece k's first line; then the count */
	size_t bad[PIECES_MAX];
	int code[PIECES_MAX];
};

static void count_piece(void *arg, size_t begin, size_t end)
{
	struct pieces *p = arg;
	for (size_t k = begin; k < end; k++) {
		size_t c = 0;
		for (char *s = p->start[k]; (s = memchr(s, '\n', (size_t)(p->start[k + 1] - s))); s++)
			c++;
		p->lines[k] = c;
	}
}

static void parse_piece(void *arg, size_t begin, size_t end)
{
	struct pieces *p = arg;
	for (size_t k = begin; k < end; k++) {
		char *text = p->start[k];
		p->code[k] = lines_from(p->how, &text, p->start[k + 1], p->first[k], p->first[k + 1], p->first[k],
					&p->bad[k]);
	}
}

int hf_record_parse_lines(char **text, char *end, size_t n, const struct hf_record_lines *how, size_t *bad)
{
	if (n < 2 * LINES_A_PIECE)
		return lines_from(how, text, end, 0, n, 0, bad);
	struct pieces p = { .how = how };
	size_t pieces = n / LINES_A_PIECE > PIECES_MAX ? PIECES_MAX : n / LINES_A_PIECE;
	size_t bytes = (size_t)(end - *text);
	p.start[0] = *text;
	for (size_t k = 1; k < pieces; k++) { /* each piece begins after a line's end */
		char *at = *text + bytes / pieces * k;
		at = at < p.start[k - 1] ? p.start[k - 1] : at;
		char *nl = memchr(at, '\n', (size_t)(end - at));
		p.start[k] = nl ? nl + 1 : end;
	}
	p.start[pieces] = end;
	/* each piece's lines counted, side by side on the crew (20,000 memchr
	 * calls were a few hundred microseconds on one thread; without it, on
	 * this thread: not worth starting threads for), then the pieces' first
	 * indexes added up here, up to the n-th line's end: what follows it is
	 * the caller's */
	if (hf_crew_held())
		hf_crew_for(pieces, 1, pieces, count_piece, &p);
	else
		count_piece(&p, 0, pieces);
	size_t total = 0, used = 0;
	char *stop = NULL;
	for (; used < pieces && !stop; used++) {
		p.first[used] = total;
		if (total + p.lines[used] < n) {
			total += p.lines[used];
			continue;
		}
		for (char *s = p.start[used]; (s = memchr(s, '\n', (size_t)(p.start[used + 1] - s))); s++)
			if (++total == n) {
				stop = s + 1;
				break;
			}
	}
	if (!stop) /* cut short: the one thread finds where */
		return lines_from(how, text, end, 0, n, 0, bad);
	pieces = used;
	p.start[pieces] = stop;
	p.first[pieces] = n;
	hf_crew_for(pieces, 1, pieces, parse_piece, &p);
	/* the first fault in file order: a piece's own, or an edge's order */
	int code = 0;
	*bad = n;
	for (size_t k = 0; k < pieces; k++)
		if (p.code[k] && p.bad[k] < *bad) {
			*bad = p.bad[k];
			code = p.code[k];
		}
	for (size_t k = 1; k < pieces; k++) {
		size_t i = p.first[k];
		if (i >= *bad) /* every line before the first fault is parsed */
			break;
		if (i && i < n && !how->in_order(how->arg, i)) {
			*bad = i;
			code = HF_LINES_ORDER;
			break;
		}
	}
	if (!code)
		*text = stop;
	return code;
}

static void unusable(struct hf_record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unusable(struct hf_record *rec, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rec->why, sizeof(rec->why), fmt, ap);
	va_end(ap);
	text_sanitize(rec->why);
	rec->usable = false;
	free(rec->entries);
	rec->entries = NULL;
	rec->n = 0;
}

#define CUT_SHORT 1 /* entry_line's codes */
#define NOT_ENTRY 2

/* "FOLDER BLOB DEV INO SIZE MSEC MNSEC CSEC CNSEC" into entry i. */
static int entry_line(void *arg, size_t i, char *line, size_t len)
{
	(void)len;
	struct hf_record *rec = arg;
	if (strcmp(line, "end") == 0)
		return CUT_SHORT;
	char *cur = line;
	struct hf_record_entry *e = &rec->entries[i];
	e->folder = hf_record_field(&cur);
	e->blob = hf_record_field(&cur);
	if (!e->folder || !e->blob || !hf_record_number(&cur, UINT64_MAX, &e->st.dev) ||
	    !hf_record_number(&cur, UINT64_MAX, &e->st.ino) || !hf_record_number(&cur, INT64_MAX, &e->st.size) ||
	    !hf_record_timespec(&cur, &e->st.mtim) || !hf_record_timespec(&cur, &e->st.ctim) || cur)
		return NOT_ENTRY;
	return 0;
}

static bool entry_in_order(void *arg, size_t i)
{
	const struct hf_record_entry *e = ((struct hf_record *)arg)->entries;
	return entry_cmp(e[i - 1].folder, e[i - 1].blob, e[i].folder, e[i].blob) < 0;
}

static int parse(struct hf_record *rec, const char *file, const char *cache_path, size_t len)
{
	char *text = rec->buf;
	char *line = hf_record_next_line(&text);
	if (!line || strcmp(line, MAGIC) != 0) {
		unusable(rec, "%s is not a record of this version (no '" MAGIC "' line)", file);
		return -1;
	}
	char *want = hf_record_cache_line(cache_path);
	line = hf_record_next_line(&text);
	bool same = want && line && strcmp(line, want) == 0;
	free(want);
	if (!same) {
		unusable(rec, "%s was made for another cache (its device, inode or path differ)", file);
		return -1;
	}
	line = hf_record_next_line(&text);
	char *cur = line;
	if (!line || strcmp(hf_record_field(&cur) ? line : "", "stamp") != 0 ||
	    !hf_record_timespec(&cur, &rec->stamp) || cur) {
		unusable(rec, "%s: line 3 is not 'stamp SEC NSEC'", file);
		return -1;
	}
	line = hf_record_next_line(&text);
	cur = line;
	uint64_t n;
	if (!line || strcmp(hf_record_field(&cur) ? line : "", "entries") != 0 ||
	    !hf_record_number(&cur, HF_RECORD_MAX_ENTRIES, &n) || cur) {
		unusable(rec, "%s: line 4 is not 'entries N' (N at most %u)", file, HF_RECORD_MAX_ENTRIES);
		return -1;
	}
	rec->entries = xcalloc(n + 1, sizeof(*rec->entries));
	struct hf_record_lines how = { .line = entry_line, .in_order = entry_in_order, .arg = rec };
	size_t bad;
	int c = hf_record_parse_lines(&text, rec->buf + len, n, &how, &bad);
	if (c == HF_LINES_MISSING || c == CUT_SHORT) {
		unusable(rec, "%s: cut short after %zu of its %" PRIu64 " entries", file, bad, n);
		return -1;
	} else if (c == HF_LINES_ORDER) { /* strictly in order: lookups are binary searches, and no blob twice */
		unusable(rec, "%s: line %zu is out of order", file, bad + 5);
		return -1;
	} else if (c) {
		unusable(rec, "%s: line %zu is not an entry", file, bad + 5);
		return -1;
	}
	rec->n = n;
	line = hf_record_next_line(&text);
	if (!line || strcmp(line, "end") != 0 || (text && *text)) {
		unusable(rec, "%s: no 'end' line after its %" PRIu64 " entries (cut short or grown)", file, n);
		return -1;
	}
	rec->usable = true;
	return 0;
}

void hf_record_load(struct hf_record *rec, const char *file, const char *cache_path)
{
	memset(rec, 0, sizeof(*rec));
	char err[SAFE_ERR_MAX];
	struct stat st;
	/* no link followed, a regular file only (a FIFO fails at once), capped */
	int fd = safe_open_read_at(AT_FDCWD, file, O_NOFOLLOW, SAFE_KIND_REG, HF_RECORD_MAX_BYTES, &st, err,
				   sizeof(err));
	if (fd == -ENOENT) {
		unusable(rec, "no record yet (%s)", file);
		return;
	}
	if (fd < 0) {
		unusable(rec, "%s", err);
		return;
	}
	size_t len;
	int rc = hf_record_read(fd, file, HF_RECORD_MAX_BYTES, &rec->buf, &len, err, sizeof(err));
	if (rc < 0)
		unusable(rec, "%s", err);
	else if (parse(rec, file, cache_path, len) == 0)
		hf_record_mark_used(fd); /* the last of the state folder's records to be pruned */
	close(fd);
}

struct hf_record_loading {
	struct thread thread;
	bool started;
	char *file, *cache_path;
	struct hf_record rec;
};

static void *load_aside(void *arg)
{
	struct hf_record_loading *l = arg;
	hf_record_load(&l->rec, l->file, l->cache_path);
	tl_mark("record loaded");
	return NULL;
}

struct hf_record_loading *hf_record_load_start(const char *file, const char *cache_path)
{
	struct hf_record_loading *l = xcalloc(1, sizeof(*l));
	l->file = xstrdup(file);
	l->cache_path = xstrdup(cache_path);
	l->started = thread_start(&l->thread, load_aside, l) == 0;
	return l;
}

void hf_record_load_join(struct hf_record_loading *l, struct hf_record *rec)
{
	if (l->started)
		thread_join(&l->thread);
	else
		load_aside(l);
	*rec = l->rec;
	free(l->file);
	free(l->cache_path);
	free(l);
}

void hf_record_free(struct hf_record *rec)
{
	free(rec->entries);
	free(rec->buf);
	memset(rec, 0, sizeof(*rec));
}

const struct hf_record_entry *hf_record_find(const struct hf_record *rec, const char *folder_key, const char *blob)
{
	if (!rec || !rec->usable || !rec->n)
		return NULL;
	const char *enc = folder_key;
	size_t lo = 0, hi = rec->n;
	const struct hf_record_entry *hit = NULL;
	while (lo < hi && !hit) {
		size_t mid = lo + (hi - lo) / 2;
		int c = entry_cmp(enc, blob, rec->entries[mid].folder, rec->entries[mid].blob);
		if (c == 0)
			hit = &rec->entries[mid];
		else if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return hit;
}

const struct hf_record_entry *hf_record_find_next(const struct hf_record *rec, const char *folder_key, const char *blob,
						  size_t *next)
{
	if (!rec || !rec->usable)
		return NULL;
	const struct hf_record_entry *e = *next < rec->n ? &rec->entries[*next] : NULL;
	if (!e || strcmp(e->blob, blob) != 0 || strcmp(e->folder, folder_key) != 0)
		e = hf_record_find(rec, folder_key, blob);
	if (e)
		*next = (size_t)(e - rec->entries) + 1;
	return e;
}

static bool ts_equal(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

bool hf_record_racy(const struct timespec *stamp, const struct hf_record_stat *st)
{
	return timespec_cmp(&st->mtim, stamp) >= 0 || timespec_cmp(&st->ctim, stamp) >= 0;
}

bool hf_record_trusts(const struct hf_record *rec, const struct hf_record_entry *e, const struct hf_record_stat *now)
{
	if (!rec || !rec->usable || !e)
		return false;
	const struct hf_record_stat *was = &e->st;
	return was->dev == now->dev && was->ino == now->ino && was->size == now->size &&
	       ts_equal(&was->mtim, &now->mtim) && ts_equal(&was->ctim, &now->ctim) &&
	       !hf_record_racy(&rec->stamp, now);
}

static int item_cmp(const void *a, const void *b)
{
	const struct hf_record_item *x = a, *y = b;
	return entry_cmp(x->folder, x->blob, y->folder, y->blob);
}

static int item_by_size(const void *a, const void *b)
{
	const struct hf_record_item *x = a, *y = b;
	return x->st.size < y->st.size ? 1 : x->st.size > y->st.size ? -1 : 0;
}

int hf_record_save(const char *file, const char *cache_path, const struct timespec *scan_start,
		   struct hf_record_item *items, size_t n, char *why, size_t why_size)
{
	char *cl = hf_record_cache_line(cache_path);
	if (!cl) {
		int e = errno;
		snprintf(why, why_size, "cannot stat the cache %s: %s", cache_path, strerror(e));
		text_sanitize(why);
		return -e;
	}
	if (n > HF_RECORD_MAX_ENTRIES) { /* bounded: keep the blobs that cost most to hash */
		qsort(items, n, sizeof(*items), item_by_size);
		n = HF_RECORD_MAX_ENTRIES;
	}
	qsort(items, n, sizeof(*items), item_cmp);
	struct timespec stamp = *scan_start;
	stamp.tv_sec -= HF_RECORD_RACY_MARGIN;
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, MAGIC "\n%s\nstamp %lld %ld\n", cl, (long long)stamp.tv_sec, stamp.tv_nsec);
	size_t header = sb.len;
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && item_cmp(&items[i - 1], &items[i]) == 0)
			continue; /* a blob given twice (two runs' worth): once */
		const struct hf_record_item *it = &items[i];
		sb_printf(&sb, "%s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %lld %ld %lld %ld\n", it->folder, it->blob,
			  it->st.dev, it->st.ino, it->st.size, (long long)it->st.mtim.tv_sec, it->st.mtim.tv_nsec,
			  (long long)it->st.ctim.tv_sec, it->st.ctim.tv_nsec);
		count++;
	}
	sb_puts(&sb, "end\n");
	/* the count goes before the entries: written once they are counted */
	char head[64];
	snprintf(head, sizeof(head), "entries %zu\n", count);
	struct strbuf out = STRBUF_INIT;
	sb_add(&out, sb.buf, header);
	sb_puts(&out, head);
	sb_add(&out, sb.buf + header, sb.len - header);
	sb_release(&sb);
	char err[SAFE_ERR_MAX];
	/* a state file: only ever a regular file replaced (a FIFO or link there
	 * is an error), and its loss costs only a full hash */
	int rc = safe_write_file(file, out.buf, out.len, 0600, SAFE_WRITE_REPLACE_ONLY | SAFE_WRITE_NO_SYNC, err,
				 sizeof(err));
	if (rc < 0) {
		snprintf(why, why_size, "%s", err);
		text_sanitize(why);
	} else {
		hf_records_prune(file); /* one record per cache: bounded */
	}
	sb_release(&out);
	free(cl);
	return rc;
}

/* --- the kept listings ---------------------------------------------------- */

#define LISTING_MAGIC  "gpugate-hf-listing 1"
#define MAX_KEPT_FILES 10000000u /* a listing's files: far past what HF_LISTING_MAX_BYTES holds */

char *hf_kept_listing_file(const char *state_dir, const char *cache_real, const char *folder, const char *commit)
{
	/* FNV-1a of the three names: a collision only costs a parse (the header says whose it is) */
	uint64_t h = 0xcbf29ce484222325u;
	const char *parts[] = { cache_real, folder, commit };
	for (size_t i = 0; i < 3; i++)
		for (const unsigned char *p = (const unsigned char *)parts[i];; p++) {
			h = (h ^ *p) * 0x100000001b3u;
			if (!*p)
				break;
		}
	return xasprintf("%s/" HF_KEPT_LISTING_PREFIX "%016" PRIx64, state_dir, h);
}

static void key_line(struct strbuf *sb, const char *folder, const char *commit)
{
	sb_puts(sb, "key ");
	hf_record_encode(sb, folder);
	sb_puts(sb, " ");
	hf_record_encode(sb, commit);
}

static void stat_line(struct strbuf *sb, const struct stat *st)
{
	sb_printf(sb, "stat %" PRIu64 " %" PRIu64 " %" PRIu64 " %lld %ld %lld %ld", (uint64_t)st->st_dev,
		  (uint64_t)st->st_ino, (uint64_t)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		  (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

static struct hf_record_stat record_stat(const struct stat *st)
{
	return (struct hf_record_stat){ .dev = (uint64_t)st->st_dev,
					.ino = (uint64_t)st->st_ino,
					.size = (uint64_t)st->st_size,
					.mtim = st->st_mtim,
					.ctim = st->st_ctim };
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

bool hf_record_decode(char *s)
{
	s = strchr(s, '%'); /* most strings have none: nothing to do */
	if (!s)
		return true;
	char *w = s;
	for (; *s; s++) {
		if (*s != '%') {
			*w++ = *s;
			continue;
		}
		int hi = hex_value(s[1]), lo = hi < 0 ? -1 : hex_value(s[2]);
		if (lo < 0 || !(hi | lo))
			return false;
		*w++ = (char)(hi << 4 | lo);
		s += 2;
	}
	*w = '\0';
	return true;
}

/* A string field: "-" (none) or "=" and its percent-encoded bytes (no NUL),
 * decoded in place: the text read is the strings' one block. */
static bool string_field(char **cursor, char **out)
{
	char *s = hf_record_field(cursor);
	*out = NULL;
	if (!s)
		return false;
	if (strcmp(s, "-") == 0)
		return true;
	if (*s++ != '=' || !hf_record_decode(s))
		return false;
	*out = s;
	return true;
}

static void string_out(struct strbuf *sb, const char *s)
{
	if (!s) {
		sb_puts(sb, " -");
		return;
	}
	sb_puts(sb, " =");
	hf_record_encode(sb, s);
}

static bool keyword(char **cursor, const char *word)
{
	const char *f = hf_record_field(cursor);
	return f && strcmp(f, word) == 0;
}

/* "HAS_SIZE SIZE PATH BLOB_ID LFS_SHA256 XET_HASH" into file i. */
static int kept_line(void *arg, size_t i, char *line, size_t len)
{
	(void)len;
	struct hf_listed_file *f = &((struct hf_listing *)arg)->files[i];
	char *cur = line;
	uint64_t has = 0;
	f->file = -1;
	bool ok = hf_record_number(&cur, 1, &has) && hf_record_number(&cur, INT64_MAX, &f->size) &&
		  string_field(&cur, &f->path) && f->path && string_field(&cur, &f->blob_id) &&
		  string_field(&cur, &f->lfs_sha256) && string_field(&cur, &f->xet_hash) && !cur;
	f->has_size = has;
	return ok ? 0 : 1;
}

static bool kept_in_order(void *arg, size_t i) /* strictly: the listing is searched by path */
{
	const struct hf_listed_file *f = ((struct hf_listing *)arg)->files;
	return strcmp(f[i - 1].path, f[i].path) < 0;
}

static bool kept_entries(char **text, char *end, uint64_t n, struct hf_listing *l)
{
	l->files = calloc(n + 1, sizeof(*l->files)); /* as string_field: NULL means parse the JSON */
	if (!l->files)
		return false;
	l->n_files = n; /* its strings are the text's: nothing of a file is freed with it */
	struct hf_record_lines how = { .line = kept_line, .in_order = kept_in_order, .arg = l };
	size_t bad;
	return hf_record_parse_lines(text, end, n, &how, &bad) == 0;
}

bool hf_kept_listing_load(const char *file, const char *folder, const char *commit, const struct stat *st,
			  struct hf_listing *out)
{
	char err[SAFE_ERR_MAX];
	struct stat kst;
	int fd = safe_open_read_at(AT_FDCWD, file, O_NOFOLLOW, SAFE_KIND_REG, HF_LISTING_MAX_BYTES, &kst, err,
				   sizeof(err));
	if (fd < 0)
		return false;
	char *buf = NULL;
	size_t len;
	int rc = hf_record_read(fd, file, HF_LISTING_MAX_BYTES, &buf, &len, err, sizeof(err));
	if (rc < 0) {
		free(buf);
		close(fd);
		return false;
	}
	struct strbuf want_key = STRBUF_INIT, want_stat = STRBUF_INIT;
	key_line(&want_key, folder, commit);
	stat_line(&want_stat, st);
	char *text = buf, *line = hf_record_next_line(&text);
	bool ok = line && strcmp(line, LISTING_MAGIC) == 0;
	ok = ok && (line = hf_record_next_line(&text)) && strcmp(line, want_key.buf) == 0;
	ok = ok && (line = hf_record_next_line(&text)) && strcmp(line, want_stat.buf) == 0;
	sb_release(&want_key);
	sb_release(&want_stat);
	struct timespec stamp;
	char *cur = ok ? hf_record_next_line(&text) : NULL;
	ok = cur && keyword(&cur, "stamp") && hf_record_timespec(&cur, &stamp) && !cur;
	struct hf_record_stat now = record_stat(st);
	ok = ok && !hf_record_racy(&stamp, &now); /* it could have changed unseen within its granule */
	uint64_t n = 0;
	cur = ok ? hf_record_next_line(&text) : NULL;
	ok = cur && keyword(&cur, "files") && hf_record_number(&cur, MAX_KEPT_FILES, &n) && !cur;
	struct hf_listing l = { .state = HF_LISTING_OK, .strings = buf }; /* freed with it */
	/* every entry takes a line of at least 12 bytes: a count past that is a lie */
	ok = ok && n <= len / 12 && kept_entries(&text, buf + len, n, &l);
	ok = ok && (line = hf_record_next_line(&text)) && strcmp(line, "end") == 0 && !(text && *text);
	if (!ok) {
		close(fd);
		hf_listing_free(&l);
		return false;
	}
	*out = l;
	(void)futimens(fd, NULL); /* used now: the last to be pruned */
	close(fd);
	return true;
}

/* A kept listing is a group of its own (record_prune.h). */
static const char *kept_listing(const char *name)
{
	return strncmp(name, HF_KEPT_LISTING_PREFIX, strlen(HF_KEPT_LISTING_PREFIX)) == 0 ? name : NULL;
}

void hf_kept_listings_prune(const char *state_dir, const char *keep)
{
	static const struct hf_prune_bound bound = { kept_listing, HF_KEPT_LISTINGS_MAX, HF_KEPT_LISTINGS_MAX_BYTES };
	hf_prune_lru(state_dir, keep, &bound);
}

void hf_kept_listing_save(const char *file, const char *folder, const char *commit, const struct stat *st,
			  const struct timespec *started, const struct hf_listing *l)
{
	struct timespec stamp = *started;
	stamp.tv_sec -= HF_RECORD_RACY_MARGIN;
	struct hf_record_stat now = record_stat(st);
	if (l->state != HF_LISTING_OK || hf_record_racy(&stamp, &now))
		return; /* only what a later run may take as it is */
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, LISTING_MAGIC "\n");
	key_line(&sb, folder, commit);
	sb_puts(&sb, "\n");
	stat_line(&sb, st);
	sb_printf(&sb, "\nstamp %lld %ld\nfiles %zu\n", (long long)stamp.tv_sec, stamp.tv_nsec, l->n_files);
	for (size_t i = 0; i < l->n_files; i++) {
		const struct hf_listed_file *f = &l->files[i];
		sb_printf(&sb, "%d %" PRIu64, f->has_size ? 1 : 0, f->has_size ? f->size : 0);
		string_out(&sb, f->path);
		string_out(&sb, f->blob_id);
		string_out(&sb, f->lfs_sha256);
		string_out(&sb, f->xet_hash);
		sb_puts(&sb, "\n");
	}
	sb_puts(&sb, "end\n");
	char err[SAFE_ERR_MAX];
	int rc = safe_write_file(file, sb.buf, sb.len, 0600, SAFE_WRITE_REPLACE_ONLY | SAFE_WRITE_NO_SYNC, err,
				 sizeof(err));
	sb_release(&sb);
	const char *slash = strrchr(file, '/');
	if (rc == 0 && slash) { /* bounded: the least recently used go */
		char *dir = xstrndup(file, (size_t)(slash - file));
		hf_kept_listings_prune(dir, slash + 1);
		free(dir);
	}
}
