/* Small rules of the hub cache layout: repo folder names from ids, hex
 * names, and the blob hash of an open file (sha256 for 64 hex digits, git
 * blob sha1 for 40) against known vectors (`printf 'hello\n' | git
 * hash-object --stdin`, FIPS 180-2 "abc"). */
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

#include "hf/cache_format.h"
#include "hf/layout.h"
#include "hf/verify.h"

static void test_repo_folder(void **state)
{
	(void)state;
	struct {
		const char *id, *type, *folder;
	} cases[] = {
		{ "Qwen/Qwen3-0.6B", NULL, "models--Qwen--Qwen3-0.6B" },
		{ "gpt2", NULL, "models--gpt2" },
		{ "datasets/glue", NULL, "datasets--glue" },
		{ "spaces/org/app", NULL, "spaces--org--app" },
		{ "glue", "dataset", "datasets--glue" },
		{ "org/x", "space", "spaces--org--x" },
		{ "models--org--x", NULL, "models--org--x" },
		{ "glue", "datasets", "datasets--glue" },                  /* the type as its folder prefix */
		{ "kernels/org/k", NULL, "kernels--org--k" },              /* constants.py REPO_TYPES_MAPPING */
		{ "org/x", "widget", "models--org--x" },                   /* a type no one knows: a model */
		{ "datasets/org/x", "space", "spaces--datasets--org--x" }, /* the type given wins */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *f = hf_repo_folder(cases[i].id, cases[i].type);
		if (strcmp(f, cases[i].folder) != 0)
			fail_msg("%s: %s, expected %s", cases[i].id, f, cases[i].folder);
		free(f);
	}
}

static void test_hex_length(void **state)
{
	(void)state;
	assert_true(hf_is_commit("ce013625030ba8dba906f756967f9e9ca394464a"));
	assert_false(hf_is_commit("CE013625030BA8DBA906F756967F9E9CA394464A")); /* commits are lower case */
	assert_false(hf_is_commit("ce013625030ba8dba906f756967f9e9ca394464"));
	assert_false(hf_is_commit(""));
	assert_int_equal(hf_blob_name_length("CE013625030BA8DBA906F756967F9E9CA394464A"), 40);
	assert_int_equal(hf_blob_name_length("ce013625030ba8dba906f756967f9e9ca394464a.incomplete"), 0);
	assert_true(hf_is_incomplete("ce01.1a2b3c4d.incomplete"));
}

/* The writer and the reader build the same paths: the link hf fetch makes
 * is the one the layout accepts (../ per folder of the path, then blobs/). */
static void test_paths(void **state)
{
	(void)state;
	const char *c = "ce013625030ba8dba906f756967f9e9ca394464a";
	char *p;
	assert_string_equal(p = hf_snapshot_link_target("a.txt", "ff"), "../../blobs/ff");
	free(p);
	assert_string_equal(p = hf_snapshot_link_target("d/e/a.txt", "ff"), "../../../../blobs/ff");
	free(p);
	assert_string_equal(p = hf_snapshot_rel(c, "d/a.txt"),
			    "snapshots/ce013625030ba8dba906f756967f9e9ca394464a/d/a.txt");
	free(p);
	assert_string_equal(p = hf_snapshot_rel(c, NULL), "snapshots/ce013625030ba8dba906f756967f9e9ca394464a");
	free(p);
	assert_string_equal(p = hf_tree_rel(c), "trees/ce013625030ba8dba906f756967f9e9ca394464a.json");
	free(p);
	assert_string_equal(p = hf_ref_rel("main"), "refs/main");
	free(p);
	assert_string_equal(p = hf_blob_rel("ff"), "blobs/ff");
	free(p);
	assert_string_equal(p = hf_no_exist_rel(c, "x"), ".no_exist/ce013625030ba8dba906f756967f9e9ca394464a/x");
	free(p);
	assert_string_equal(p = hf_lock_rel("models--a--b"), ".locks/models--a--b");
	free(p);
	/* the reader's side of the link: blobs/<name>, one component */
	assert_string_equal(hf_blob_of_rel("blobs/ff"), "ff");
	assert_null(hf_blob_of_rel("blobs/"));
	assert_null(hf_blob_of_rel("blobs/a/b"));
	assert_null(hf_blob_of_rel("blobsx/ff"));
	assert_null(hf_blob_of_rel("snapshots/ff"));
}

static void hash_of(const char *content, size_t hex_len, char hex[65], int *rc)
{
	char path[] = "/tmp/gpugate-hash-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	unsigned char buf[3]; /* tiny reads: the streaming path */
	uint64_t bytes = 0;
	*rc = hf_hash_fd(fd, hex_len, buf, sizeof(buf), hex, &bytes);
	assert_int_equal(bytes, strlen(content));
	close(fd);
	unlink(path);
}

static void test_hash_vectors(void **state)
{
	(void)state;
	char hex[65];
	int rc;
	hash_of("hello\n", 40, hex, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
	hash_of("abc", 64, hex, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hash_of("", 40, hex, &rc);
	assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"); /* git's empty blob */
	/* not a plain file: refused */
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	unsigned char buf[16];
	uint64_t bytes;
	assert_int_equal(hf_hash_fd(fd, 64, buf, sizeof(buf), hex, &bytes), -EINVAL);
	close(fd);
}

/* hf_repo_blob's search by 8-byte keys finds every blob a scan lists and
 * nothing else: names that share their first 8 bytes, shorter names, a
 * byte above 0x7f (strcmp compares unsigned bytes). Files in a temp folder. */
static void test_blob_lookup(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpugate-layout-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *names[] = { "a",        "ab",         "aaaaaaaa", "aaaaaaaa1", "aaaaaaaa2",
				"aaaaaaab", "aaaaaaaa10", "b\xff",    "b\xff\x01", "bbbbbbbbbbbbbbbbbbbb",
				"c",        "\xff\xfe" };
	const char *absent[] = { "",  "aa",    "aaaaaaa",  "aaaaaaaa0", "aaaaaaaa3", "aaaaaaaa11",
				 "b", "b\xfe", "bbbbbbbb", "d",         "\xff",      "\xff\xfe\x01" };
	char path[256];
	snprintf(path, sizeof(path), "%s/models--o--r", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/models--o--r/blobs", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(path, sizeof(path), "%s/models--o--r/blobs/%s", dir, names[i]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	struct hf_cache cache;
	char err[256];
	assert_int_equal(hf_cache_scan(dir, &cache, err, sizeof(err)), 0);
	assert_int_equal(cache.n_repos, 1);
	const struct hf_repo *repo = &cache.repos[0];
	assert_int_equal(repo->n_blobs, sizeof(names) / sizeof(*names));
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const struct hf_blob *b = hf_repo_blob(repo, names[i]);
		if (!b || strcmp(b->name, names[i]) != 0)
			fail_msg("blob %zu not found", i);
	}
	for (size_t i = 0; i < sizeof(absent) / sizeof(*absent); i++)
		if (hf_repo_blob(repo, absent[i]))
			fail_msg("absent name %zu found", i);
	hf_cache_free(&cache);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repo_folder),  cmocka_unit_test(test_hex_length),  cmocka_unit_test(test_paths),
		cmocka_unit_test(test_hash_vectors), cmocka_unit_test(test_blob_lookup),
	};
	return cmocka_run_group_tests_name("hf_layout", tests, NULL, NULL);
}
