#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/protocol.h"

/* Writes through the child's functions into a pipe and reads it back. */
static char *roundtrip(void (*emit)(struct probe_channel *))
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct probe_channel ch = { p[1] };
	emit(&ch);
	close(p[1]);
	static char buf[4096];
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	buf[n] = '\0';
	return buf;
}

static void emit_stage(struct probe_channel *ch)
{
	probe_stage(ch, "sync", "0000:03:00.0");
}
static void emit_stage_bad_device(struct probe_channel *ch)
{
	probe_stage(ch, "init", "a b\n");
}
static void emit_result(struct probe_channel *ch)
{
	json_t *j = json_pack("{s:b, s:s, s:s}", "ok", 0, "stage", "module", "message", "line1\nline2 \xc3\xa9");
	probe_result(ch, j);
	json_decref(j);
}

static void test_stage_roundtrip(void **state)
{
	(void)state;
	char *text = roundtrip(emit_stage);
	assert_string_equal(text, "stage sync 0000:03:00.0\n");
	text[strlen(text) - 1] = '\0';
	struct probe_line l;
	probe_parse_line(text, &l);
	assert_int_equal(l.kind, PROBE_LINE_STAGE);
	assert_string_equal(l.stage, "sync");
	assert_string_equal(l.device, "0000:03:00.0");
	/* a device that is not a token is left out, never breaks the line */
	assert_string_equal(roundtrip(emit_stage_bad_device), "stage init\n");
}

static void test_result_roundtrip(void **state)
{
	(void)state;
	char *text = roundtrip(emit_result);
	char *nl = strchr(text, '\n');
	assert_non_null(nl);
	assert_string_equal(nl + 1, ""); /* exactly one line, despite the newline in message */
	*nl = '\0';
	struct probe_line l;
	probe_parse_line(text, &l);
	assert_int_equal(l.kind, PROBE_LINE_RESULT);
	assert_string_equal(json_string_value(json_object_get(l.result, "stage")), "module");
	assert_string_equal(json_string_value(json_object_get(l.result, "message")), "line1\nline2 \xc3\xa9");
	json_decref(l.result);
}

static void emit_enumerated(struct probe_channel *ch)
{
	json_t *j = json_pack("{s:s, s:[{s:i}]}", "backend", "cuda", "devices", "index", 0);
	probe_enumerated(ch, j);
	json_decref(j);
}

static void test_enumerated_roundtrip(void **state)
{
	(void)state;
	char *text = roundtrip(emit_enumerated);
	assert_true(strncmp(text, "enumerated {", 12) == 0);
	text[strlen(text) - 1] = '\0';
	struct probe_line l;
	probe_parse_line(text, &l);
	assert_int_equal(l.kind, PROBE_LINE_ENUMERATED);
	assert_string_equal(json_string_value(json_object_get(l.result, "backend")), "cuda");
	assert_int_equal(json_array_size(json_object_get(l.result, "devices")), 1);
	json_decref(l.result);
}

static void test_bad_lines(void **state)
{
	(void)state;
	const char *bad[] = { "",
			      "stage",
			      "stage ",
			      "stage \x01x",
			      "result",
			      "result {",
			      "result [1]",
			      "result {\"a\":1,\"a\":2}",
			      "hello",
			      "enumerated",
			      "enumerated [",
			      "enumerated 3",
			      "stage verylongstagenameverylongstagenamexxxxx" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct probe_line l;
		probe_parse_line(bad[i], &l);
		assert_int_equal(l.kind, PROBE_LINE_BAD);
		assert_true(strlen(l.error) > 0);
		assert_null(l.result);
	}
	struct probe_line l;
	probe_parse_line("stage loader", &l);
	assert_int_equal(l.kind, PROBE_LINE_STAGE);
	assert_string_equal(l.device, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_roundtrip),
		cmocka_unit_test(test_result_roundtrip),
		cmocka_unit_test(test_enumerated_roundtrip),
		cmocka_unit_test(test_bad_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
