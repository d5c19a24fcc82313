/* trees/<commit>.json as huggingface_hub reads it (src/huggingface_hub/
 * _tree_cache.py, _read_tree_cache_from_disk and is_valid_tree_entries, commit
 * ee0a4510f4bc15e26cb722be2efc2bdb01383ca0): which listings it uses, which it
 * ignores (silently or with a warning) and which make it raise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hf/listing.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

static void test_listing_states(void **state)
{
	(void)state;
	struct {
		const char *json;
		enum hf_listing_state want;
	} cases[] = {
		{ "{\"format_version\": 1, \"files\": {}}", HF_LISTING_OK },
		{ "{\"format_version\": 1.0, \"files\": {}}", HF_LISTING_OK },  /* 1.0 == 1 in Python */
		{ "{\"format_version\": true, \"files\": {}}", HF_LISTING_OK }, /* True == 1 in Python */
		{ "{\"format_version\": \"1\", \"files\": {}}", HF_LISTING_VERSION },
		{ "{\"format_version\": 2, \"files\": {}}", HF_LISTING_VERSION },
		{ "{\"files\": {}}", HF_LISTING_VERSION },                        /* data.get() is None */
		{ "{\"format_version\": 1}", HF_LISTING_MALFORMED },              /* KeyError, caught */
		{ "{\"format_version\": 1, \"files\": []}", HF_LISTING_CRASHES }, /* [].items(): AttributeError */
		{ "[1]", HF_LISTING_CRASHES },                                    /* [].get(): AttributeError */
		{ "{\"format_version\": 1, \"files\": {\"a\": 3}}", HF_LISTING_MALFORMED }, /* 3["size"]: TypeError */
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": 1}}}", HF_LISTING_MALFORMED },
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": \"x\", \"blob_id\": null}}}", HF_LISTING_OK },
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": 1, \"blob_id\": \"b\", \"xet_hash\": \"ab\"}}}",
		  HF_LISTING_BAD_XET },
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": 1, \"blob_id\": \"b\", \"xet_hash\": 7}}}",
		  HF_LISTING_CRASHES }, /* re.fullmatch(7): TypeError */
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": 1, \"blob_id\": \"b\", \"xet_hash\": null}}}",
		  HF_LISTING_OK },
		{ "{\"format_version\": 1, \"files\": {\"a\": {\"size\": 1, \"blob_id\": \"b\", \"xet_hash\": "
		  "\"ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789\"}}}",
		  HF_LISTING_OK },
		{ "{\"format_version\": 1, \"files\": {", HF_LISTING_MALFORMED },
		{ "", HF_LISTING_MALFORMED },
		{ "\xef\xbb\xbf{\"format_version\": 1, \"files\": {}}",
		  HF_LISTING_MALFORMED }, /* BOM: json.load refuses */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct hf_listing l;
		hf_listing_parse(cases[i].json, strlen(cases[i].json), &l);
		if (l.state != cases[i].want)
			fail_msg("case %zu (%s): %s (%s), expected %s", i, cases[i].json,
				 hf_listing_state_text(l.state), l.problem ? l.problem : "-",
				 hf_listing_state_text(cases[i].want));
		if (l.state != HF_LISTING_OK && (!l.problem || !*l.problem))
			fail_msg("case %zu: no reason given", i);
		hf_listing_free(&l);
	}
}

static void test_listing_entries(void **state)
{
	(void)state;
	const char *json =
		"{\"format_version\": 1, \"files\": {"
		"\"z.bin\": {\"size\": 5, \"blob_id\": \"0123456789012345678901234567890123456789\"},"
		"\"a/model.safetensors\": {\"size\": 10, \"blob_id\": \"1111111111111111111111111111111111111111\","
		" \"lfs_sha256\": \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\", \"lfs_size\": 10}}}";
	struct hf_listing l;
	hf_listing_parse(json, strlen(json), &l);
	assert_int_equal(l.state, HF_LISTING_OK);
	assert_int_equal(l.n_files, 2);
	assert_string_equal(l.files[0].path, "a/model.safetensors"); /* sorted */
	const struct hf_listed_file *f = hf_listing_find(&l, "a/model.safetensors");
	assert_non_null(f);
	assert_true(f->has_size && f->size == 10);
	/* lfs_sha256 when set, else blob_id, as utils/_verification.py verify_maps */
	assert_string_equal(hf_listed_hash(f), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	assert_string_equal(hf_listed_hash(hf_listing_find(&l, "z.bin")), "0123456789012345678901234567890123456789");
	assert_null(hf_listing_find(&l, "nope"));
	hf_listing_free(&l);
}

/* A listing past its memory budget is TOO_BIG, a failure: never "not JSON"
 * (then ignored) and never a crash; the budget holds under ASan too. */
static void test_memory_budget(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "{\"format_version\": 1, \"files\": {");
	for (int i = 0; i < 20000; i++)
		sb_printf(&sb, "%s\"f%05d\": {\"size\": 1, \"blob_id\": \"%040d\"}", i ? "," : "", i, i);
	sb_puts(&sb, "}}");
	struct hf_listing l;
	hf_listing_parse_capped(sb.buf, sb.len, 1u << 20, &l); /* 1 MiB: jansson needs ~10 */
	assert_int_equal(l.state, HF_LISTING_TOO_BIG);
	assert_non_null(strstr(l.problem, "1 MiB of memory"));
	assert_int_equal(l.n_files, 0);
	hf_listing_free(&l);
	hf_listing_parse(sb.buf, sb.len, &l); /* its own budget, 16x: read */
	assert_int_equal(l.state, HF_LISTING_OK);
	assert_int_equal(l.n_files, 20000);
	hf_listing_free(&l);
	/* a budget of a few bytes: the refusal comes from the first allocation */
	hf_listing_parse_capped("{}", 2, 8, &l);
	assert_int_equal(l.state, HF_LISTING_TOO_BIG);
	hf_listing_free(&l);
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_states),
		cmocka_unit_test(test_listing_entries),
		cmocka_unit_test(test_memory_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
