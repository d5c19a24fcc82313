/* lib/digest.h against oracles nobody here wrote: `git hash-object --stdin`
 * and `sha256sum` of the same bytes (the values below are theirs:
 * printf 'hello\n' | git hash-object --stdin; printf 'hello\n' | sha256sum;
 * a million 'a's for the streaming case), fed whole and in uneven pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lib/digest.h"

static void hash_of(enum digest_kind kind, const char *data, size_t len, size_t piece, char *out)
{
	struct digest *d = digest_new(kind, len);
	assert_non_null(d); /* libcrypto.so.3 is a build dependency */
	for (size_t off = 0; off < len; off += piece)
		digest_update(d, data + off, len - off < piece ? len - off : piece);
	digest_final_hex(d, out);
	assert_int_equal(strlen(out), digest_hex_len(kind));
}

static void known_values(void **state)
{
	(void)state;
	char hex[65];
	hash_of(DIGEST_GIT_BLOB, "hello\n", 6, 6, hex);
	assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
	hash_of(DIGEST_SHA256, "hello\n", 6, 6, hex);
	assert_string_equal(hex, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
	hash_of(DIGEST_GIT_BLOB, "", 0, 1, hex); /* git's empty blob */
	assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

static void streaming_equals_whole(void **state)
{
	(void)state;
	size_t n = 1000000;
	char *a = malloc(n);
	assert_non_null(a);
	memset(a, 'a', n);
	char whole[65], pieces[65];
	hash_of(DIGEST_GIT_BLOB, a, n, n, whole);
	assert_string_equal(whole, "de1fbf0c2f34f67f01f355f31ed0cf7319643c5e");
	hash_of(DIGEST_GIT_BLOB, a, n, 4099, pieces);
	assert_string_equal(whole, pieces);
	hash_of(DIGEST_SHA256, a, n, 7, pieces);
	assert_string_equal(pieces, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
	digest_free(NULL);
	digest_free(digest_new(DIGEST_SHA256, 0)); /* dropped unfinished: no leak (ASan) */
}

static void hex_names(void **state)
{
	(void)state;
	const char *sha1 = "ce013625030ba8dba906f756967f9e9ca394464a";
	assert_true(digest_is_lower_hex(sha1, 40));
	assert_true(digest_is_hex("CE013625030BA8DBA906F756967F9E9CA394464A", 40));
	assert_false(digest_is_lower_hex("CE013625030BA8DBA906F756967F9E9CA394464A", 40));
	assert_false(digest_is_lower_hex(sha1, 39)); /* one digit more than asked */
	assert_false(digest_is_lower_hex(sha1, 41)); /* one short */
	assert_false(digest_is_hex("ce01362g030ba8dba906f756967f9e9ca394464a", 40));
	assert_false(digest_is_hex("", 0) == false); /* zero digits of nothing: true */
	unsigned char bytes[] = { 0x00, 0x0f, 0xa0, 0xff };
	char out[9];
	digest_to_hex(bytes, 4, out);
	assert_string_equal(out, "000fa0ff");
	/* hash names: 64 or 40 digits of either case, nothing else */
	assert_int_equal(digest_name_length(sha1), 40);
	assert_int_equal(digest_name_length("CE013625030BA8DBA906F756967F9E9CA394464A"), 40);
	assert_int_equal(digest_name_length("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"), 64);
	assert_int_equal(digest_name_length("ce013625030ba8dba906f756967f9e9ca394464"), 0);
	assert_int_equal(digest_name_length("ce013625030ba8dba906f756967f9e9ca394464a.incomplete"), 0);
	assert_int_equal(digest_name_length(""), 0);
	assert_int_equal(digest_lower_hex_span("ce01/x"), 4);
	assert_int_equal(digest_lower_hex_span("CE01"), 0);
	assert_int_equal(digest_lower_hex_span(""), 0);
}

/* One context restarted from content to content (hf/verify.c's workers),
 * across kinds, gives what a fresh one does; the one-shot SHA-256 too. */
static void restart_and_one_shot(void **state)
{
	(void)state;
	char hex[65];
	struct digest *d = digest_new(DIGEST_SHA256, 0);
	assert_non_null(d);
	assert_true(digest_update(d, "hello\n", 6));
	assert_true(digest_result_hex(d, hex));
	assert_string_equal(hex, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
	assert_true(digest_restart(d, DIGEST_GIT_BLOB, 6));
	assert_true(digest_update(d, "hello\n", 6));
	assert_true(digest_result_hex(d, hex));
	assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
	assert_true(digest_restart(d, DIGEST_GIT_BLOB, 0));
	digest_final_hex(d, hex);
	assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	assert_true(digest_sha256_hex("hello\n", 6, hex));
	assert_string_equal(hex, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_values),
		cmocka_unit_test(streaming_equals_whole),
		cmocka_unit_test(hex_names),
		cmocka_unit_test(restart_and_one_shot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
