/* The repo folder names of src/hf/cache_format.c, both ways: every row of
 * tests/vectors/hf-repo-folders.tsv (decided by huggingface_hub's own
 * lines in tests/integration/test_hf_folder_names.py), then every id and
 * name over a small alphabet, where both directions must agree as
 * cache_format.h says. Run from the repository root (make test-unit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf/cache_format.h"

#define VECTORS "tests/vectors/hf-repo-folders.tsv"

static const char *verdicts[] = { "ok", "lossy", "empty-part", "unknown-type", "no-separator", "not-a-name" };
#define N_VERDICTS (sizeof(verdicts) / sizeof(*verdicts))

static const char *null_text(const char *s)
{
	return s ? s : "(null)";
}

/* One row: fails with the row's name and what went wrong. */
static void check_row(const char *name, const char *type, const char *id, const char *verdict)
{
	struct hf_folder f;
	enum hf_folder_status st = hf_folder_parse(name, &f);
	char *written = NULL;
	if (strcmp(verdict, "ok") == 0 || strcmp(verdict, "lossy") == 0 || strcmp(verdict, "empty-part") == 0) {
		written = hf_folder_name(type, id);
		if (strcmp(written, name) != 0)
			fail_msg("'%s': hf_folder_name(%s, '%s') wrote '%s'", name, type, id, written);
	}
	if (strcmp(verdict, "ok") == 0) {
		if (st != HF_FOLDER_OK || strcmp(null_text(f.type), type) != 0 || strcmp(f.id, id) != 0)
			fail_msg("'%s': read as %d %s '%s', expected ok %s '%s'", name, st, null_text(f.type),
				 null_text(f.id), type, id);
		if (!hf_repo_id_round_trips(id))
			fail_msg("'%s': '%s' said not to round-trip", name, id);
		if (strcmp(null_text(hf_repo_folder_type(name)), type) != 0)
			fail_msg("'%s': hf_repo_folder_type gave %s", name, null_text(hf_repo_folder_type(name)));
	} else if (strcmp(verdict, "lossy") == 0) {
		if (hf_repo_id_round_trips(id))
			fail_msg("'%s': '%s' said to round-trip", name, id);
		if (!f.id || strcmp(f.id, id) == 0)
			fail_msg("'%s': read back as '%s'", name, null_text(f.id));
	} else if (strcmp(verdict, "empty-part") == 0) {
		if (st != HF_FOLDER_EMPTY_PART || strcmp(null_text(f.type), type) != 0 || strcmp(f.id, id) != 0)
			fail_msg("'%s': read as %d %s '%s', expected an empty part", name, st, null_text(f.type),
				 null_text(f.id));
	} else if (strcmp(verdict, "unknown-type") == 0) {
		if (st != HF_FOLDER_UNKNOWN_TYPE || f.type || strcmp(f.prefix, type) != 0 || strcmp(f.id, id) != 0)
			fail_msg("'%s': read as %d %s '%s' '%s', expected an unknown type", name, st, null_text(f.type),
				 null_text(f.prefix), null_text(f.id));
		if (hf_repo_folder_type(name))
			fail_msg("'%s': hf_repo_folder_type knows it", name);
	} else if (strcmp(verdict, "no-separator") == 0) {
		if (st != HF_FOLDER_NO_SEPARATOR || f.prefix || f.id)
			fail_msg("'%s': read as %d, expected no separator", name, st);
	} else if (strcmp(verdict, "not-a-name") == 0) {
		if (st != HF_FOLDER_NOT_A_NAME || f.prefix || f.id)
			fail_msg("'%s': read as %d, expected not a name", name, st);
	} else {
		fail_msg("'%s': unknown verdict '%s'", name, verdict);
	}
	free(written);
	hf_folder_free(&f);
}

static void upstream_vectors(void **state)
{
	(void)state;
	FILE *in = fopen(VECTORS, "r");
	assert_non_null(in);
	char line[1024];
	size_t rows = 0, upstream = 0, seen[N_VERDICTS] = { 0 };
	while (fgets(line, sizeof(line), in)) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *rest = line, *col[5];
		for (size_t i = 0; i < 5; i++) {
			col[i] = strsep(&rest, "\t");
			if (!col[i])
				fail_msg("row %zu: fewer than 5 columns", rows + 1);
		}
		check_row(col[0], col[1], col[2], col[3]);
		for (size_t v = 0; v < N_VERDICTS; v++)
			seen[v] += strcmp(col[3], verdicts[v]) == 0;
		upstream += strncmp(col[4], "upstream ", 9) == 0;
		rows++;
	}
	fclose(in);
	/* the file as written: a truncated or emptied one fails */
	assert_true(rows >= 31);
	assert_true(upstream >= 14);
	for (size_t v = 0; v < N_VERDICTS; v++)
		if (!seen[v])
			fail_msg("no row with the verdict %s", verdicts[v]);
}

/* Every string over alphabet of length 0 to max, in turn. */
static size_t next_string(char *s, size_t len, size_t max, const char *alphabet)
{
	size_t k = strlen(alphabet);
	for (size_t i = len; i-- > 0;) {
		const char *at = strchr(alphabet, s[i]);
		if ((size_t)(at - alphabet) + 1 < k) {
			s[i] = at[1];
			return len;
		}
		s[i] = alphabet[0];
	}
	if (len == max)
		return (size_t)-1;
	s[len] = alphabet[0];
	s[len + 1] = '\0';
	return len + 1;
}

static bool empty_part(const char *id)
{
	size_t n = strlen(id);
	return !n || id[0] == '/' || id[n - 1] == '/' || strstr(id, "//");
}

/* id -> name -> id: every id over {a, -, /} up to 7 characters, of each
 * type. hf_repo_id_round_trips says exactly whether it reads back, and it
 * reads back with the type and the empty-part verdict. */
static void ids_round_trip(void **state)
{
	(void)state;
	static const char *const types[] = { "model", "dataset", "space", "kernel" };
	size_t checked = 0, lossy = 0;
	for (size_t t = 0; t < sizeof(types) / sizeof(*types); t++) {
		char id[16] = "";
		for (size_t len = 0; len != (size_t)-1; len = next_string(id, len, 7, "a-/")) {
			char *name = hf_folder_name(types[t], id);
			struct hf_folder f;
			enum hf_folder_status st = hf_folder_parse(name, &f);
			bool back = f.id && strcmp(f.id, id) == 0;
			if (back != hf_repo_id_round_trips(id))
				fail_msg("'%s' -> '%s' -> '%s', but round-trips says %d", id, name, null_text(f.id),
					 hf_repo_id_round_trips(id));
			if (st != (empty_part(f.id) ? HF_FOLDER_EMPTY_PART : HF_FOLDER_OK) ||
			    strcmp(null_text(f.type), types[t]) != 0)
				fail_msg("'%s' read as %d %s", name, st, null_text(f.type));
			lossy += !back;
			checked++;
			hf_folder_free(&f);
			free(name);
		}
	}
	assert_int_equal(checked, 4 * (1 + 3 + 9 + 27 + 81 + 243 + 729 + 2187));
	assert_true(lossy > 0 && lossy < checked);
}

/* name -> id -> name: every name models--X with X over {a, -} up to 9
 * characters reads as an id whose folder is the name, an id that itself
 * round-trips. */
static void names_round_trip(void **state)
{
	(void)state;
	char rest[16] = "";
	size_t checked = 0;
	for (size_t len = 0; len != (size_t)-1; len = next_string(rest, len, 9, "a-")) {
		char name[32];
		snprintf(name, sizeof(name), "models" HF_REPO_ID_SEPARATOR "%s", rest);
		struct hf_folder f;
		enum hf_folder_status st = hf_folder_parse(name, &f);
		assert_true(st == HF_FOLDER_OK || st == HF_FOLDER_EMPTY_PART);
		char *again = hf_folder_name(f.type, f.id);
		if (strcmp(again, name) != 0 || !hf_repo_id_round_trips(f.id))
			fail_msg("'%s' -> '%s' -> '%s'", name, f.id, again);
		free(again);
		hf_folder_free(&f);
		checked++;
	}
	assert_int_equal(checked, 1023);
}

static void type_prefixes(void **state)
{
	(void)state;
	assert_string_equal(hf_repo_type_prefix("model"), "models");
	assert_string_equal(hf_repo_type_prefix("datasets"), "datasets");
	assert_null(hf_repo_type_prefix("widget"));
	assert_string_equal(hf_repo_type_of_prefix("spaces--x", 6), "space");
	assert_null(hf_repo_type_of_prefix("space", 5));
	char *n = hf_folder_name("widget", "a/b"); /* upstream's f"{repo_type}s" */
	assert_string_equal(n, "widgets--a--b");
	free(n);
	assert_null(hf_repo_folder_type("CACHEDIR.TAG"));
	assert_null(hf_repo_folder_type(".locks"));
	assert_string_equal(hf_repo_folder_type("datasets--glue"), "dataset");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(upstream_vectors),
		cmocka_unit_test(ids_round_trip),
		cmocka_unit_test(names_round_trip),
		cmocka_unit_test(type_prefixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
