/* lib/strbuf.h's contract, after git's: buf is never NULL and always
 * NUL-terminated, an empty strbuf allocates nothing, release and detach
 * leave a usable empty strbuf, the shared slop byte is never written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

static void empty_is_a_string(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.alloc, 0);
	sb_printf(&sb, "%s", ""); /* an empty write still leaves a string */
	assert_string_equal(sb.buf, "");
	sb_release(&sb);
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
	assert_int_equal(strbuf_slopbuf[0], '\0');
}

static void grows_and_releases(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 1000; i++)
		sb_printf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_true(sb.alloc > sb.len);
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	sb_add(&sb, "a\0b", 3); /* content may hold NUL bytes */
	assert_int_equal(sb.buf[sb.len], '\0');
	sb_release(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	sb_puts(&sb, "again"); /* usable after release */
	assert_string_equal(sb.buf, "again");
	sb_release(&sb);
	assert_int_equal(strbuf_slopbuf[0], '\0');
}

static void detach_is_always_owned(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	char *s = sb_detach(&sb); /* empty: a fresh "" the caller frees, not the slop byte */
	assert_string_equal(s, "");
	assert_ptr_not_equal(s, strbuf_slopbuf);
	free(s);
	sb_puts(&sb, "text");
	s = sb_detach(&sb);
	assert_string_equal(s, "text");
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
	assert_int_equal(sb.alloc, 0);
	free(s);
}

static void init_repairs_a_zeroed_struct(void **state)
{
	(void)state;
	struct strbuf sb;
	memset(&sb, 0, sizeof(sb));
	sb_init(&sb);
	assert_string_equal(sb.buf, "");
	sb_puts(&sb, "x");
	assert_string_equal(sb.buf, "x");
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_is_a_string),
		cmocka_unit_test(grows_and_releases),
		cmocka_unit_test(detach_is_always_owned),
		cmocka_unit_test(init_repairs_a_zeroed_struct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
