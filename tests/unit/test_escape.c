/* The one escaping helper (src/lib/escape.h): each target's escapes, and
 * what no target gets raw (controls, bidi overrides, U+FFFE/U+FFFF,
 * invalid UTF-8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lib/escape.h"

static char *esc(const char *s, enum escape_target t)
{
	struct strbuf sb = STRBUF_INIT;
	escape_add(&sb, s, t);
	return sb_detach(&sb);
}

#define EXPECT(in, target, want)                \
	do {                                    \
		char *got = esc(in, target);    \
		assert_string_equal(got, want); \
		free(got);                      \
	} while (0)

static void test_line(void **state)
{
	(void)state;
	EXPECT("plain ascii, UTF-8: \xC3\xA9\xE2\x80\x94", ESCAPE_LINE, "plain ascii, UTF-8: \xC3\xA9\xE2\x80\x94");
	EXPECT("a\nFAIL forged", ESCAPE_LINE, "a\\nFAIL forged");
	EXPECT("\x1b[31mred\x7f", ESCAPE_LINE, "\\x1b[31mred\\x7f");
	EXPECT("\xC2\x9B"
	       "2J",
	       ESCAPE_LINE, "\\u{009b}2J");                                          /* C1 CSI */
	EXPECT("x\xE2\x80\xAEy\xE2\x81\xA6z", ESCAPE_LINE, "x\\u{202e}y\\u{2066}z"); /* bidi */
	EXPECT("\xEF\xBF\xBF\xEF\xBF\xBE", ESCAPE_LINE, "\\u{ffff}\\u{fffe}");
	EXPECT("\xE2\x80\xA8", ESCAPE_LINE, "\\u{2028}");
	EXPECT("bad \xFF \xC0\xAF \xED\xA0\x80 cut \xE2\x80", ESCAPE_LINE,
	       "bad \\xff \\xc0\\xaf \\xed\\xa0\\x80 cut \\xe2\\x80"); /* invalid, overlong, surrogate, cut */
	assert_true(escape_needed("a\tb"));
	assert_false(escape_needed("fine"));
}

static void test_xml(void **state)
{
	(void)state;
	EXPECT("<a href=\"x\">&'</a>", ESCAPE_XML, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
	EXPECT("l1\nl2\tt\r", ESCAPE_XML, "l1&#10;l2&#9;t&#13;");
	EXPECT("\x01\x1b\xEF\xBF\xBF", ESCAPE_XML, "\\x01\\x1b\\u{ffff}"); /* XML 1.0 forbids them even as references */
}

static void test_github(void **state)
{
	(void)state;
	EXPECT("50%\r\nnext::x", ESCAPE_GITHUB_DATA, "50%25%0D%0Anext::x");
	EXPECT("a:b,c%\n", ESCAPE_GITHUB_PROPERTY, "a%3Ab%2Cc%25%0A");
	EXPECT("\x1b[0m", ESCAPE_GITHUB_DATA, "\\x1b[0m");
}

static void test_prom_and_markdown(void **state)
{
	(void)state;
	EXPECT("a\\b\"c\nd", ESCAPE_PROM_LABEL, "a\\\\b\\\"c\\nd");
	EXPECT("a|b<script>&\nc", ESCAPE_MARKDOWN_CELL, "a\\|b&lt;script&gt;&amp;<br>c");
}

static void test_decode(void **state)
{
	(void)state;
	uint32_t cp = 0;
	assert_int_equal(utf8_decode((const unsigned char *)"\xF0\x9F\x98\x80", &cp), 4);
	assert_int_equal(cp, 0x1F600);
	assert_int_equal(utf8_decode((const unsigned char *)"\xF4\x90\x80\x80", &cp), 0); /* > U+10FFFF */
	assert_int_equal(utf8_decode((const unsigned char *)"\xE0\x80\x80", &cp), 0);     /* overlong */
}

static char *yaml(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	escape_yaml_scalar(&sb, s);
	return sb_detach(&sb);
}

#define EXPECT_YAML(in, want)                   \
	do {                                    \
		char *got = yaml(in);           \
		assert_string_equal(got, want); \
		free(got);                      \
	} while (0)

/* YAML: plain only for simple words, else double-quoted with every
 * character outside printable ASCII as an escape (no line break, no key) */
static void test_yaml(void **state)
{
	(void)state;
	EXPECT_YAML("org/model", "org/model");
	EXPECT_YAML("libze1 (= 1.17.6-1)", "libze1 (= 1.17.6-1)");
	EXPECT_YAML("yes", "\"yes\"");
	EXPECT_YAML("", "\"\"");
	EXPECT_YAML("zz/a\n  min_free: 0\n#", "\"zz/a\\x0a  min_free: 0\\x0a#\"");
	EXPECT_YAML("a #b", "\"a #b\"");
	EXPECT_YAML("q\"\\", "q\"\\"); /* a plain scalar may hold them */
	EXPECT_YAML("\"q\\", "\"\\\"q\\\\\"");
	EXPECT_YAML("x\xE2\x80\xAEy\xC3\xA9\xF0\x9F\x98\x80", "\"x\\u202ey\\xe9\\U0001f600\"");
	EXPECT_YAML("bad\xFF", "\"bad\\xff\"");
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	escape_yaml_comment(&sb, "a\nkey: 1");
	assert_string_equal(sb.buf, "a\\nkey: 1");
	sb_release(&sb);
}

/* JSON as jansson writes it: bidi, C1, DEL and U+2028 become \uXXXX */
static void test_json_document(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	escape_json_document(&sb, "{\"a\": \"x\xE2\x80\xAEy\xC2\x9B\x7f\xE2\x80\xA8\xC3\xA9\"}");
	assert_string_equal(sb.buf, "{\"a\": \"x\\u202ey\\u009b\\u007f\\u2028\xC3\xA9\"}");
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),          cmocka_unit_test(test_xml),
		cmocka_unit_test(test_github),        cmocka_unit_test(test_prom_and_markdown),
		cmocka_unit_test(test_decode),        cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_json_document),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
