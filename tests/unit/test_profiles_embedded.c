/* The built-in profiles and vendor pins are embedded with their full-line
 * comments blanked (src/tools/embed.sh --yaml): the embedded text must load
 * to the very document of its file in checks/ (the same spec digest, which
 * covers every key and value), on the same lines (a blanked line was a
 * comment, every other line is the file's own). Run from the repository
 * root, as make test runs the unit tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/embedded.h"
#include "lib/util.h"
#include "registry.h"
#include "report/report.h"
#include "spec.h"

static void same_as_file(const struct embedded_file *f, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	if (read_file(path, &text, &len) < 0)
		fail_msg("%s: cannot read (run from the repository root)", path);
	/* line by line: the same line, or a comment line blanked */
	const char *a = text, *b = (const char *)f->data;
	const char *a_end = text + len, *b_end = b + f->size;
	while (a < a_end && b < b_end) {
		const char *an = memchr(a, '\n', (size_t)(a_end - a)), *bn = memchr(b, '\n', (size_t)(b_end - b));
		an = an ? an : a_end;
		bn = bn ? bn : b_end;
		bool same = an - a == bn - b && memcmp(a, b, (size_t)(an - a)) == 0;
		if (!same) {
			const char *c = a;
			while (c < an && (*c == ' ' || *c == '\t'))
				c++;
			if (bn != b || c == an || *c != '#')
				fail_msg("%s: embedded line '%.*s' is neither the file's nor a blanked comment", path,
					 (int)(bn - b), b);
		}
		a = an < a_end ? an + 1 : an;
		b = bn < b_end ? bn + 1 : bn;
	}
	assert_true(a == a_end && b == b_end);

	struct spec from_file, embedded;
	struct spec_error err;
	if (spec_load_builtin(&from_file, &registry_schema, path, text, len, &err) < 0)
		fail_msg("%s: %s", path, err.msg);
	if (spec_load_builtin(&embedded, &registry_schema, f->name, (const char *)f->data, f->size, &err) < 0)
		fail_msg("%s embedded: %s", f->name, err.msg);
	char *d1 = report_spec_digest(&from_file), *d2 = report_spec_digest(&embedded);
	assert_non_null(d1);
	assert_non_null(d2);
	assert_string_equal(d1, d2);
	free(d1);
	free(d2);
	spec_free(&from_file);
	spec_free(&embedded);
	free(text);
}

static void profiles_load_as_their_files(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct embedded_file *f = embedded_profiles; f->name; f++, n++) {
		char path[256];
		snprintf(path, sizeof(path), "checks/%s.yaml", f->name);
		same_as_file(f, path);
	}
	assert_true(n >= 3);
}

static void vendor_pins_load_as_their_files(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct embedded_file *f = embedded_vendor_pins; f->name; f++, n++) {
		char path[256];
		snprintf(path, sizeof(path), "checks/vendor/%s.yaml", f->name);
		same_as_file(f, path);
	}
	assert_true(n >= 1);
}

/* The blanking leaves little for the parser: most of each file was comments. */
static void comments_are_blanked(void **state)
{
	(void)state;
	const struct embedded_file *f = embedded_find(embedded_vendor_pins, "intel");
	assert_non_null(f);
	assert_null(memchr(f->data, '#', f->size));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profiles_load_as_their_files),
		cmocka_unit_test(vendor_pins_load_as_their_files),
		cmocka_unit_test(comments_are_blanked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
