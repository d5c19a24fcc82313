/* hf/verified_record: each trust rule on its own (one stat field changed at
 * a time, the racy rule), and every way a record file is refused as a whole
 * (truncated, out of order, foreign, another version, a FIFO, a link, a NUL,
 * too many entries). Files live in a temp folder of this test only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf/crew.h"
#include "hf/listing.h"
#include "hf/record_prune.h"
#include "hf/verified_record.h"
#include "lib/util.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[64], cache[96], other[96], file[128];
static struct timespec run_start;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpugate-record-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cache, sizeof(cache), "%s/hub", dir);
	snprintf(other, sizeof(other), "%s/other hub", dir);
	assert_int_equal(mkdir(cache, 0700), 0);
	assert_int_equal(mkdir(other, 0700), 0);
	char why[256];
	char *f = hf_record_file(dir, cache, why, sizeof(why));
	assert_non_null(f);
	snprintf(file, sizeof(file), "%s", f);
	free(f);
	/* a run that began an hour from now: the entries below (times of 1000 s) are not racy */
	clock_gettime(CLOCK_REALTIME, &run_start);
	run_start.tv_sec += 3600;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const struct hf_record_stat base = {
	.dev = 987654321, .ino = 1234, .size = 4096, .mtim = { 1000, 111 }, .ctim = { 1000, 222 }
};

/* Saves one entry (folder with a space and a newline: encoded) plus another. */
static void save_two(void)
{
	char *k1 = hf_record_folder_key("models--org--a b\n");
	char *k2 = hf_record_folder_key("models--org--z");
	struct hf_record_item items[] = {
		{ .folder = k2, .blob = "bbbb", .st = base },
		{ .folder = k1, .blob = "aaaa", .st = base },
	};
	char why[512];
	assert_int_equal(hf_record_save(file, cache, &run_start, items, 2, why, sizeof(why)), 0);
	free(k1);
	free(k2);
}

static const struct hf_record_entry *find(const struct hf_record *rec, const char *folder, const char *blob)
{
	char *k = hf_record_folder_key(folder);
	const struct hf_record_entry *e = hf_record_find(rec, k, blob);
	free(k);
	return e;
}

static void unchanged_is_trusted_each_field_is_not(void **state)
{
	(void)state;
	save_two();
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_true(rec.usable);
	assert_int_equal(rec.n, 2);
	const struct hf_record_entry *e = find(&rec, "models--org--a b\n", "aaaa");
	assert_non_null(e);
	assert_non_null(find(&rec, "models--org--z", "bbbb"));
	assert_null(find(&rec, "models--org--z", "aaaa"));
	assert_true(hf_record_trusts(&rec, e, &base));
	struct hf_record_stat s;
	s = base, s.dev++;
	assert_false(hf_record_trusts(&rec, e, &s));
	s = base, s.ino++; /* replaced by another file of the same size */
	assert_false(hf_record_trusts(&rec, e, &s));
	s = base, s.size++;
	assert_false(hf_record_trusts(&rec, e, &s));
	s = base, s.mtim.tv_nsec++;
	assert_false(hf_record_trusts(&rec, e, &s));
	s = base, s.mtim.tv_sec++;
	assert_false(hf_record_trusts(&rec, e, &s));
	s = base, s.ctim.tv_nsec++; /* content changed, mtime put back (touch -r) */
	assert_false(hf_record_trusts(&rec, e, &s));
	assert_false(hf_record_trusts(&rec, NULL, &base));
	hf_record_free(&rec);
}

static void racy_entries_are_not_trusted(void **state)
{
	(void)state;
	/* the run began at 1000.500 s: its stamp is HF_RECORD_RACY_MARGIN earlier */
	struct timespec start = { 1000 + HF_RECORD_RACY_MARGIN, 500 };
	char *k = hf_record_folder_key("models--org--a");
	struct hf_record_stat racy_m = base, racy_c = base, old = base;
	racy_m.mtim = (struct timespec){ 1000, 500 }; /* same instant as the stamp: racy */
	racy_c.ctim = (struct timespec){ 1001, 0 };   /* ctime after it: racy */
	old.mtim = old.ctim = (struct timespec){ 1000, 499 };
	struct hf_record_item items[] = {
		{ .folder = k, .blob = "a1", .st = racy_m },
		{ .folder = k, .blob = "a2", .st = racy_c },
		{ .folder = k, .blob = "a3", .st = old },
	};
	char why[512];
	assert_int_equal(hf_record_save(file, cache, &start, items, 3, why, sizeof(why)), 0);
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_true(rec.usable);
	assert_int_equal(rec.stamp.tv_sec, 1000);
	assert_false(hf_record_trusts(&rec, hf_record_find(&rec, k, "a1"), &racy_m));
	assert_false(hf_record_trusts(&rec, hf_record_find(&rec, k, "a2"), &racy_c));
	assert_true(hf_record_trusts(&rec, hf_record_find(&rec, k, "a3"), &old));
	assert_true(hf_record_racy(&rec.stamp, &racy_m));
	assert_false(hf_record_racy(&rec.stamp, &old));
	hf_record_free(&rec);
	free(k);
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	return text;
}

static void put(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Loads the record after edit() changed its text; it must be refused with why containing words. */
static void refused_after(void (*edit)(char *text, size_t *len), const char *words)
{
	save_two();
	char *text = slurp(file);
	size_t len = strlen(text);
	edit(text, &len);
	put(file, text, len);
	free(text);
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_false(rec.usable);
	assert_int_equal(rec.n, 0);
	assert_null(find(&rec, "models--org--z", "bbbb"));
	if (!strstr(rec.why, words))
		fail_msg("why '%s' lacks '%s'", rec.why, words);
	hf_record_free(&rec);
}

static void cut_last_line(char *t, size_t *len)
{
	t[*len - 4] = '\0'; /* "end\n" gone */
	*len -= 4;
}

static void cut_an_entry(char *t, size_t *len)
{
	char *end = strstr(t, "models--org--z");
	memcpy(end, "end\n", 5);
	*len = strlen(t);
}

static void swap_entries(char *t, size_t *len)
{
	char *a = strstr(t, "models--org--a"), *z = strstr(t, "models--org--z");
	size_t la = (size_t)(z - a), lz = strlen(z) - 4;
	char *copy = xstrndup(a, la + lz);
	memcpy(a, copy + la, lz);
	memcpy(a + lz, copy, la);
	free(copy);
	(void)len;
}

static void other_version(char *t, size_t *len)
{
	t[strlen("gpugate-hf-verified ")] = '9';
	(void)len;
}

static void a_nul(char *t, size_t *len)
{
	t[*len - 2] = '\0';
}

static void bad_number(char *t, size_t *len)
{
	char *p = strstr(t, " 987654321 ");
	p[1] = 'x';
	(void)len;
}

static void too_many(char *t, size_t *len)
{
	char *p = strstr(t, "entries 2");
	memcpy(p, "entries 9", 9);
	(void)len;
}

static void truncated_record_is_refused(void **state)
{
	(void)state;
	refused_after(cut_last_line, "no 'end' line");
	refused_after(cut_an_entry, "cut short after 1 of its 2 entries");
	refused_after(too_many, "cut short after 2 of its 9");
}

static void corrupt_record_is_refused(void **state)
{
	(void)state;
	refused_after(swap_entries, "out of order");
	refused_after(other_version, "not a record of this version");
	refused_after(a_nul, "NUL");
	refused_after(bad_number, "not an entry");
}

static void record_of_another_cache_is_refused(void **state)
{
	(void)state;
	save_two();
	struct hf_record rec;
	hf_record_load(&rec, file, other);
	assert_false(rec.usable);
	assert_non_null(strstr(rec.why, "another cache"));
	hf_record_free(&rec);
	/* the same folder under another path (renamed): its path differs */
	char moved[128];
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	assert_int_equal(rename(cache, moved), 0);
	hf_record_load(&rec, file, moved);
	assert_false(rec.usable);
	hf_record_free(&rec);
	assert_int_equal(rename(moved, cache), 0);
	hf_record_load(&rec, file, cache);
	assert_true(rec.usable);
	hf_record_free(&rec);
}

static void fifo_link_and_missing_records_are_refused(void **state)
{
	(void)state;
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_false(rec.usable);
	assert_non_null(strstr(rec.why, "no record yet"));
	hf_record_free(&rec);
	/* a link to a good record is not followed */
	save_two();
	char real[160];
	snprintf(real, sizeof(real), "%s.real", file);
	assert_int_equal(rename(file, real), 0);
	assert_int_equal(symlink(real, file), 0);
	hf_record_load(&rec, file, cache);
	assert_false(rec.usable);
	assert_non_null(strstr(rec.why, "symlink"));
	hf_record_free(&rec);
	/* nor written through: the writer refuses it and leaves it */
	char why[512];
	struct hf_record_item item = { .folder = "models--x", .blob = "cc", .st = base };
	assert_true(hf_record_save(file, cache, &run_start, &item, 1, why, sizeof(why)) < 0);
	struct stat st;
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(unlink(file), 0);
	/* a FIFO with no writer: refused at once, never a hang */
	assert_int_equal(mkfifo(file, 0600), 0);
	double t0 = monotonic_seconds();
	hf_record_load(&rec, file, cache);
	assert_true(monotonic_seconds() - t0 < 1.0);
	assert_false(rec.usable);
	assert_non_null(strstr(rec.why, "FIFO"));
	hf_record_free(&rec);
	assert_true(hf_record_save(file, cache, &run_start, &item, 1, why, sizeof(why)) < 0);
}

/* Saves n entries of models--big, each named by its index ("%08zx") and,
 * when sized, as large as its index (else base's size). */
static void save_named(size_t n, bool sized)
{
	struct hf_record_item *items = calloc(n, sizeof(*items));
	char(*names)[16] = calloc(n, 16);
	assert_non_null(items);
	assert_non_null(names);
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], 16, "%08zx", i);
		items[i] = (struct hf_record_item){ .folder = "models--big", .blob = names[i], .st = base };
		if (sized)
			items[i].st.size = i;
	}
	char why[512];
	assert_int_equal(hf_record_save(file, cache, &run_start, items, n, why, sizeof(why)), 0);
	free(items);
	free(names);
}

static void bounded_keeps_the_largest(void **state)
{
	(void)state;
	save_named(HF_RECORD_MAX_ENTRIES + 3, true); /* the three smallest (0, 1, 2) go */
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_true(rec.usable);
	assert_int_equal(rec.n, HF_RECORD_MAX_ENTRIES);
	assert_null(hf_record_find(&rec, "models--big", "00000000"));
	assert_non_null(hf_record_find(&rec, "models--big", "00000003"));
	hf_record_free(&rec);
}

/* A record of many entries is parsed in pieces on several threads
 * (hf_record_parse_lines): each fault is found and named as the one thread
 * names it, wherever it falls, at a piece's edge too. */
#define MANY 20000 /* 1.2 MB: read in pieces too */
static char *save_many(size_t *len)
{
	save_named(MANY, false);
	char *text = slurp(file);
	*len = strlen(text);
	return text;
}

/* The entry line of index i in text (header: 4 lines). */
static char *entry_at(char *text, size_t i)
{
	for (size_t k = 0; k < i + 4; k++)
		text = strchr(text, '\n') + 1;
	return text;
}

static void expect_refused(const char *text, size_t len, const char *words)
{
	put(file, text, len);
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_false(rec.usable);
	if (!strstr(rec.why, words))
		fail_msg("why '%s' lacks '%s'", rec.why, words);
	hf_record_free(&rec);
}

static void large_record_parsed_in_pieces_as_in_one(void **state)
{
	(void)state;
	size_t len;
	char *good = save_many(&len);
	struct hf_record rec;
	hf_record_load(&rec, file, cache);
	assert_true(rec.usable);
	assert_int_equal(rec.n, MANY);
	for (size_t i = 0; i < MANY; i += 997) {
		char name[16];
		snprintf(name, sizeof(name), "%08zx", i);
		assert_true(hf_record_trusts(&rec, hf_record_find(&rec, "models--big", name), &base));
	}
	hf_record_free(&rec);
	/* entries i - 1 and i swapped (the fault is at i: line i + 5), every
	 * few hundred lines and at each line near the pieces' edges (the lines
	 * are of one length: edges at ninths, 20,000 / 2048 = 9 pieces) */
	size_t line_len = (size_t)(entry_at(good, 1) - entry_at(good, 0));
	char *copy = malloc(len + 1), *tmp = malloc(line_len);
	size_t at[128], n_at = 0;
	for (size_t i = 1; i < MANY; i += 397)
		at[n_at++] = i;
	for (size_t k = 1; k < 9; k++)
		for (size_t i = MANY * k / 9 - 2; i <= MANY * k / 9 + 3; i++)
			at[n_at++] = i;
	for (size_t k = 0; k < n_at; k++) {
		size_t i = at[k];
		memcpy(copy, good, len + 1);
		char *a = entry_at(copy, i - 1);
		memcpy(tmp, a, line_len);
		memcpy(a, a + line_len, line_len);
		memcpy(a + line_len, tmp, line_len);
		char words[64];
		snprintf(words, sizeof(words), "line %zu is out of order", i + 5);
		expect_refused(copy, len, words);
	}
	/* a bad number, an early "end" line, too high a count */
	memcpy(copy, good, len + 1);
	char *p = strstr(entry_at(copy, 7000), " 987654321 ");
	p[1] = 'x';
	expect_refused(copy, len, "line 7005 is not an entry");
	memcpy(copy, good, len + 1);
	memcpy(entry_at(copy, 6000), "end\n", 4);
	expect_refused(copy, len, "cut short after 6000 of its 20000 entries");
	memcpy(copy, good, len + 1);
	memcpy(strstr(copy, "entries 20000"), "entries 20009", 13);
	expect_refused(copy, len, "cut short after 20000 of its 20009 entries");
	memcpy(copy, good, len + 1);
	entry_at(copy, 15000)[3] = '\0';
	expect_refused(copy, len, "holds a NUL byte");
	free(tmp);
	free(copy);
	free(good);
}

/* The same with hf verify's crew held (crew.h): the lines are counted and
 * parsed on its threads, each fault still named as the one thread names it. */
static void large_record_parsed_on_the_crew_as_in_one(void **state)
{
	hf_crew_hold(true);
	assert_true(hf_crew_held());
	large_record_parsed_in_pieces_as_in_one(state);
	hf_crew_release();
	assert_false(hf_crew_held());
}

/* A kept listing gives back exactly what was parsed (odd bytes in paths and
 * strings, a "-" string apart from none), and only for the same listing:
 * each stat field, the folder, the commit, a racy stamp. */
static void kept_listing_round_trip_and_its_rules(void **state)
{
	(void)state;
	const char json[] = "{\"format_version\": 1, \"files\": {"
			    "\"a b/%x\\n.bin\": {\"size\": 7, \"blob_id\": \"-\", \"lfs_sha256\": null},"
			    "\"c.txt\": {\"size\": \"big\", \"blob_id\": 5, \"xet_hash\": \"" HEX64 "\"}}}";
	struct hf_listing parsed, kept;
	hf_listing_parse(json, sizeof(json) - 1, &parsed);
	assert_int_equal(parsed.state, HF_LISTING_OK);
	struct stat st = { .st_dev = 5, .st_ino = 6, .st_size = 100 };
	st.st_mtim = (struct timespec){ 1000, 1 };
	st.st_ctim = (struct timespec){ 1000, 2 };
	char *f = hf_kept_listing_file(dir, cache, "models--a--b", "c0ffee");
	hf_kept_listing_save(f, "models--a--b", "c0ffee", &st, &run_start, &parsed);
	assert_true(hf_kept_listing_load(f, "models--a--b", "c0ffee", &st, &kept));
	assert_int_equal(kept.state, HF_LISTING_OK);
	assert_int_equal(kept.n_files, parsed.n_files);
	for (size_t i = 0; i < kept.n_files; i++) {
		const struct hf_listed_file *x = &parsed.files[i], *y = &kept.files[i];
		assert_string_equal(x->path, y->path);
		assert_int_equal(x->has_size, y->has_size);
		assert_int_equal(x->size, y->size);
		assert_true((!x->blob_id && !y->blob_id) || strcmp(x->blob_id, y->blob_id) == 0);
		assert_true((!x->lfs_sha256 && !y->lfs_sha256) || strcmp(x->lfs_sha256, y->lfs_sha256) == 0);
		assert_true((!x->xet_hash && !y->xet_hash) || strcmp(x->xet_hash, y->xet_hash) == 0);
		assert_int_equal(y->file, -1);
	}
	assert_string_equal(kept.files[0].path, "a b/%x\n.bin");
	assert_string_equal(kept.files[0].blob_id, "-");
	assert_null(kept.files[1].blob_id);
	hf_listing_free(&kept);
	/* each field of the stat data, the folder and the commit must be the same */
	struct stat changed[5] = { st, st, st, st, st };
	changed[0].st_dev = 9;
	changed[1].st_ino = 9;
	changed[2].st_size = 9;
	changed[3].st_mtim.tv_nsec = 9;
	changed[4].st_ctim.tv_nsec = 9;
	for (size_t i = 0; i < 5; i++)
		assert_false(hf_kept_listing_load(f, "models--a--b", "c0ffee", &changed[i], &kept));
	assert_false(hf_kept_listing_load(f, "models--a--c", "c0ffee", &st, &kept));
	assert_false(hf_kept_listing_load(f, "models--a--b", "c0ffef", &st, &kept));
	/* a listing not older than the parse's start (less the margin) is not kept */
	unlink(f);
	struct timespec early = { 1000, 0 };
	hf_kept_listing_save(f, "models--a--b", "c0ffee", &st, &early, &parsed);
	assert_int_equal(access(f, F_OK), -1);
	free(f);
	hf_listing_free(&parsed);
}

/* The group of "v-X" and "d-X" is X (as a cache's two records share its id). */
static const char *test_group(const char *name)
{
	return (name[0] == 'v' || name[0] == 'd') && name[1] == '-' ? name + 2 : NULL;
}

static void prune_file(const char *name, time_t used)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/prune/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs("x\n", f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	struct timespec times[2] = { { used, 0 }, { used, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool prune_has(const char *name)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/prune/%s", dir, name);
	return faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* hf_prune_lru: groups are used at their newest file and go whole, least
 * recently used first; the kept file's group stays however old; the byte
 * bound skips a group too big and keeps a later one that fits; a name of no
 * group, a FIFO and a link are left alone. */
static void lru_prune_keeps_whole_groups_within_both_bounds(void **state)
{
	(void)state;
	char sub[96];
	snprintf(sub, sizeof(sub), "%s/prune", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	struct {
		const char *name;
		time_t used;
	} files[] = { { "v-a", 4000 }, { "d-a", 1000 }, { "v-b", 3000 },
		      { "v-c", 2000 }, { "v-d", 5000 }, { "other", 1 } };
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		prune_file(files[i].name, files[i].used);
	char path[160];
	snprintf(path, sizeof(path), "%s/v-fifo", sub);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/v-link", sub);
	assert_int_equal(symlink(file, path), 0);
	/* at most three groups: c (kept), d and a stay, b goes */
	struct hf_prune_bound count = { test_group, 3, UINT64_MAX };
	hf_prune_lru(sub, "v-c", &count);
	assert_true(prune_has("v-c") && prune_has("v-d") && prune_has("v-a") && prune_has("d-a"));
	assert_false(prune_has("v-b"));
	assert_true(prune_has("other") && prune_has("v-fifo") && prune_has("v-link"));
	/* three files' worth of bytes: c (kept) and d stay, a (two files) goes, b fits */
	prune_file("v-b", 3000);
	struct stat st;
	snprintf(path, sizeof(path), "%s/v-b", sub);
	assert_int_equal(stat(path, &st), 0);
	struct hf_prune_bound bytes = { test_group, 10, 3 * (uint64_t)st.st_blocks * 512 };
	hf_prune_lru(sub, "v-c", &bytes);
	assert_true(prune_has("v-c") && prune_has("v-d") && prune_has("v-b"));
	assert_false(prune_has("v-a") || prune_has("d-a"));
	/* no file kept: the newest go first into the bound */
	struct hf_prune_bound one = { test_group, 1, UINT64_MAX };
	hf_prune_lru(sub, NULL, &one);
	assert_true(prune_has("v-d"));
	assert_false(prune_has("v-c") || prune_has("v-b"));
	assert_true(prune_has("other") && prune_has("v-fifo") && prune_has("v-link"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(unchanged_is_trusted_each_field_is_not, setup, teardown),
		cmocka_unit_test_setup_teardown(racy_entries_are_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(truncated_record_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(corrupt_record_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(record_of_another_cache_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_link_and_missing_records_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(bounded_keeps_the_largest, setup, teardown),
		cmocka_unit_test_setup_teardown(kept_listing_round_trip_and_its_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(lru_prune_keeps_whole_groups_within_both_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(large_record_parsed_in_pieces_as_in_one, setup, teardown),
		cmocka_unit_test_setup_teardown(large_record_parsed_on_the_crew_as_in_one, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
