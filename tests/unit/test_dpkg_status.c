/* The dpkg status parser: continuation lines, multi-arch, states, CRLF,
 * missing final newline, empty and large files, and malformed input, each
 * decided as dpkg 1.21's lib/dpkg/parse.c decides it (the real dpkg decides
 * the same cases in tests/integration/test_dpkg_exact.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/dpkg_status.h"
#include "lib/util.h"

static const char sample[] =
	"Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.21.22\n\n"
	"Package: libze1\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
	"Multi-Arch: same\nVersion: 1.8.12-1\nDescription: oneAPI Level Zero\n"
	" The loader\n .\n\tmore text: with a colon\n\n"
	"Package: libze1\nStatus: install ok installed\nArchitecture: i386\nMulti-Arch: same\nVersion: 1.8.11-1\n\n"
	"Package: intel-opencl-icd\nstatus: deinstall ok config-files\nARCHITECTURE: amd64\nversion: 22.43.24595.41-1\n\n"
	"Package: unrelated\nStatus: install ok installed\nVersion: 1\n";
/* the same without its final newline: dpkg refuses it */
static const char no_final_newline[] = "Package: aa\nStatus: install ok installed\nVersion: 1";

static struct dpkg_status parse_ok(const char *text, const char *const *wanted)
{
	struct dpkg_status st;
	char err[512];
	int rc = dpkg_status_parse("status", text, strlen(text), wanted, &st, err, sizeof(err));
	if (rc != 0)
		fail_msg("parse failed: %s", err);
	return st;
}

static void test_sample(void **state)
{
	(void)state;
	const char *wanted[] = { "libze1", "intel-opencl-icd", NULL };
	struct dpkg_status st = parse_ok(sample, wanted);
	assert_string_equal(st.native_arch, "amd64");
	assert_int_equal(st.count, 3);
	assert_string_equal(st.pkgs[0].name, "libze1");
	assert_string_equal(st.pkgs[0].arch, "amd64");
	assert_string_equal(st.pkgs[0].version, "1.8.12-1");
	assert_true(dpkg_pkg_installed(&st.pkgs[0]));
	assert_int_equal(st.pkgs[0].line, 6);
	assert_string_equal(st.pkgs[1].arch, "i386"); /* multi-arch: both kept */
	assert_string_equal(st.pkgs[1].version, "1.8.11-1");
	assert_string_equal(st.pkgs[2].name, "intel-opencl-icd"); /* field names any case */
	assert_string_equal(st.pkgs[2].state, "config-files");
	assert_false(dpkg_pkg_installed(&st.pkgs[2]));
	assert_int_equal(st.pkgs[2].line, 23);
	dpkg_status_free(&st);

	st = parse_ok(sample, NULL); /* everything */
	assert_int_equal(st.count, 5);
	assert_string_equal(st.pkgs[4].name, "unrelated");
	assert_string_equal(st.pkgs[4].arch, "");
	dpkg_status_free(&st);
}

static void expect_error(const char *text, const char *words);

/* CRLF: a field's value loses the CR (white space at its end), but "\r\n"
 * is no empty line, so two stanzas run into one (dpkg: duplicate Package). */
static void test_crlf_and_empty(void **state)
{
	(void)state;
	const char *wanted[] = { "libze1", NULL };
	struct dpkg_status st =
		parse_ok("Package: libze1\r\nStatus: install ok installed\r\nVersion: 1.8-1\r\n", wanted);
	assert_int_equal(st.count, 1);
	assert_string_equal(st.pkgs[0].version, "1.8-1");
	assert_string_equal(st.pkgs[0].state, "installed");
	dpkg_status_free(&st);
	expect_error("Package: aa\r\nVersion: 1\r\n\r\nPackage: bb\r\n", "duplicate value for 'Package' field");

	st = parse_ok("", wanted);
	assert_int_equal(st.count, 0);
	dpkg_status_free(&st);
	st = parse_ok("\n\n\n", wanted);
	assert_int_equal(st.count, 0);
	dpkg_status_free(&st);
	expect_error("\n\n  \n\n", "empty field name");
	expect_error(no_final_newline, "missing final newline");
}

static void expect_error(const char *text, const char *words)
{
	struct dpkg_status st;
	char err[512];
	assert_int_equal(dpkg_status_parse("/x/status", text, strlen(text), NULL, &st, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("error '%s' lacks '%s'", err, words);
	assert_int_equal(st.count, 0);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error("Package: a\nthis line has no colon\n",
		     "/x/status:2: field name 'this' must be followed by colon");
	expect_error(" leading continuation\n", "/x/status:1: empty field name");
	expect_error("Package: aa\nStatus: install ok\n", "/x/status:2: third (status) word in 'Status' field");
	expect_error("Version: 1\nStatus: install ok installed\n\n", "/x/status:1: missing 'Package' field");
	expect_error("Package: aa\n\nPackage: \nVersion: 1\n", "/x/status:3: invalid package name in 'Package' field");
	expect_error("Package: aa\n: novalue\n", "empty field name");
	expect_error("# a comment\nPackage: aa\n", "field name '#' must be followed by colon");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nversion: 2\n",
		     "duplicate value for 'Version'");
	expect_error("Package: aa\nX-A: 1\nx-a: 2\n", "duplicate value for user-defined field");
	expect_error("Package: aa\nX: 1\n", "too short");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1.0-\n", "revision number is empty");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1:\n", "nothing after colon");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nConfig-Version: 1\n", "Config-Version");
	expect_error("Package: aa\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1\n\n"
		     "Package: aa\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2\n",
		     "/x/status:6: package aa: multiple non-coinstallable");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nDepends: b |\n", "missing package name");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nMulti-Arch: sometimes\n", "quadstate");
	expect_error("Package: aa\nStatus: install ok installedx\nVersion: 1\n", "trailing junk");
	/* beside the fast paths of the usual spellings: the search's rules */
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nMulti-Arch: samex\n", "quadstate");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nMulti-Arch: foreign x\n", "quadstate");
	expect_error("Package: aa\nStatus: install ok installed\nVersion: 1\nPriority: optionalx\n", "trailing junk");
}

/* What dpkg accepts: letter case of status words, Multi-Arch values and
 * field names; blanks before the colon; a Provides over several lines; a
 * package without Architecture (a warning); a user field starting with '#'. */
static void test_accepted(void **state)
{
	(void)state;
	const char *wanted[] = { "aa", "virt", NULL };
	struct dpkg_status st = parse_ok("Package : AA\nSTATUS: Install OK Installed\nVersion: 1\nMulti-Arch: Foreign\n"
					 "#note: x\n\nPackage: bb\nStatus: install ok installed\nVersion: 2\n"
					 "Provides: other,\n virt (= 2)\n",
					 wanted);
	assert_int_equal(st.count, 2);
	assert_string_equal(st.pkgs[0].name, "aa");
	assert_string_equal(st.pkgs[0].state, "installed");
	assert_string_equal(st.pkgs[0].multiarch, "foreign");
	assert_string_equal(st.pkgs[0].arch, "");
	assert_string_equal(st.pkgs[1].name, "bb");
	assert_true(dpkg_provides_names(st.pkgs[1].provides, strlen(st.pkgs[1].provides), "virt"));
	dpkg_status_free(&st);
}

static void test_large(void **state)
{
	(void)state;
	/* about 5 MB of stanzas with long descriptions; the wanted one is last */
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; sb.len < 5 * 1024 * 1024; i++) {
		sb_printf(&sb,
			  "Package: pkg%d\nStatus: install ok installed\nArchitecture: amd64\n"
			  "Version: %d.0-1\nDescription: filler\n",
			  i, i);
		for (int k = 0; k < 20; k++)
			sb_puts(&sb, " Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.\n");
		sb_puts(&sb, "\n");
	}
	sb_puts(&sb, "Package: libze1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.17.0-1\n");
	const char *wanted[] = { "libze1", "pkg7", NULL };
	struct dpkg_status st = parse_ok(sb.buf, wanted);
	assert_int_equal(st.count, 2);
	assert_string_equal(st.pkgs[0].name, "pkg7");
	assert_int_equal(st.pkgs[0].line, 7 * 26 + 1);
	assert_string_equal(st.pkgs[1].version, "1.17.0-1");
	dpkg_status_free(&st);
	sb_release(&sb);
}

/* A NUL byte is a byte of a field like another for dpkg 1.21's
 * parse_stanza(); a known field's value is then read up to it (its parser
 * gets a C string), and a user-defined field's name compared with
 * strncasecmp against the earlier ones saved as C strings. The same cases,
 * and more, are judged by the real dpkg in tests/integration/
 * test_dpkg_exact.py (tests/vectors/dpkg-status.tsv, nul-*). */
static void expect_load_matches_parse(const char *text, size_t len, const char *const *wanted);

static struct dpkg_status parse_bytes(const char *text, size_t len, const char *const *wanted, int want_rc,
				      const char *want_err)
{
	struct dpkg_status st;
	char err[512] = "";
	int rc = dpkg_status_parse("/x/status", text, len, wanted, &st, err, sizeof(err));
	if (rc != want_rc || (want_err && !strstr(err, want_err)))
		fail_msg("rc %d '%s', expected rc %d '%s'", rc, err, want_rc, want_err ? want_err : "");
	expect_load_matches_parse(text, len, wanted);
	return st;
}

static void test_nul_bytes_as_dpkg_reads_them(void **state)
{
	(void)state;
	const char *wanted[] = { "aa", "wanted", NULL };
	static const char version[] = "Package: aa\nStatus: install ok installed\nVersion: 1.0\0junk\n";
	struct dpkg_status st = parse_bytes(version, sizeof(version) - 1, wanted, 0, NULL);
	assert_int_equal(st.count, 1);
	assert_string_equal(st.pkgs[0].version, "1.0");
	dpkg_status_free(&st);
	static const char name[] = "Package: aa\0zz\nStatus: install ok installed\nVersion: 1\n";
	st = parse_bytes(name, sizeof(name) - 1, wanted, 0, NULL);
	assert_int_equal(st.count, 1);
	assert_string_equal(st.pkgs[0].name, "aa");
	dpkg_status_free(&st);
	static const char user_other[] = "Package: aa\nVersion: 1\nXa\0b: 1\nXA\0c: 2\nXa\0b: 3\n";
	st = parse_bytes(user_other, sizeof(user_other) - 1, wanted, 0, NULL);
	dpkg_status_free(&st);
	static const char user_twice[] = "Package: aa\nVersion: 1\nXa\0b: 1\nxa: 2\n";
	parse_bytes(user_twice, sizeof(user_twice) - 1, wanted, -1,
		    "/x/status:4: duplicate value for user-defined field 'xa'");
	static const char status[] = "Package: aa\nStatus: install ok inst\0alled\nVersion: 1\n";
	parse_bytes(status, sizeof(status) - 1, wanted, -1, "/x/status:2: third (status) word");
	static const char empty[] = "Package: aa\nStatus: install ok installed\nVersion: \0 1\n";
	parse_bytes(empty, sizeof(empty) - 1, wanted, -1, "/x/status:3: 'Version' field value");
	/* in a description of a package nobody asked for, at every offset of
	 * a line: read, and the lines after it counted */
	for (size_t at = 0; at < 40; at++) {
		struct strbuf sb = STRBUF_INIT;
		sb_puts(&sb, "Package: other\nDescription: x\n");
		size_t line_start = sb.len;
		sb_puts(&sb, " 0123456789abcdef0123456789abcdef0123456789\n\nPackage: wanted\nVersion: 1\n");
		sb.buf[line_start + 1 + at] = '\0';
		st = parse_bytes(sb.buf, sb.len, wanted, 0, NULL);
		assert_int_equal(st.count, 1);
		assert_int_equal(st.pkgs[0].line, 5);
		dpkg_status_free(&st);
		sb_release(&sb);
	}
}

/* A random status file: CRLF, tabs, lines of blanks in values,
 * indented description lines, long and short lines. */
static void random_status(struct strbuf *sb, unsigned *seed)
{
	/* only an empty line ends a stanza (a line of blanks continues a value) */
	static const char *const bodies[] = { " text", "  * indented", " .", "\tx", " a: b", "   ", " \t y" };
#define RND(n) ((*seed = *seed * 1103515245u + 12345u) >> 16) % (n)
	int stanzas = 1 + (int)RND(12);
	for (int i = 0; i < stanzas; i++) {
		const char *eol = RND(4) == 0 ? "\r\n" : "\n";
		sb_printf(sb, "Package: p%d%s", i, eol);
		sb_printf(sb, "Version: %d%s", i, eol);
		sb_printf(sb, "Description: d%s", eol);
		int lines = (int)RND(8);
		for (int k = 0; k < lines; k++) {
			const char *body = bodies[RND(ARRAY_SIZE(bodies))];
			if (strcmp(body, "   ") == 0)
				body = " x "; /* a line of blanks is allowed, with a warning */
			sb_puts(sb, body);
			for (int pad = (int)RND(40); pad > 0; pad--)
				sb_puts(sb, RND(5) ? "z" : " ");
			sb_puts(sb, eol);
		}
		if (i + 1 < stanzas) {
			int blanks = 1 + (int)RND(3);
			for (int b = 0; b < blanks; b++)
				sb_puts(sb, "\n");
		}
	}
#undef RND
}

/* A parse keeping some packages against one keeping all: random stanzas
 * (CRLF, tabs, indented description lines, long
 * and short lines) parsed keeping only some packages must give exactly the
 * packages, versions and line numbers that a parse keeping everything gives
 * for them. */
static void test_skip_matches_full_parse(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int round = 0; round < 300; round++) {
		struct strbuf sb = STRBUF_INIT;
		random_status(&sb, &seed);
		const char *wanted[] = { "p1", "p4", NULL };
		struct dpkg_status all = parse_ok(sb.buf, NULL), some = parse_ok(sb.buf, wanted);
		size_t k = 0;
		for (size_t i = 0; i < all.count; i++) {
			if (strcmp(all.pkgs[i].name, "p1") != 0 && strcmp(all.pkgs[i].name, "p4") != 0)
				continue;
			if (k >= some.count)
				fail_msg("round %d: %s at line %zu missing when skipping", round, all.pkgs[i].name,
					 all.pkgs[i].line);
			assert_string_equal(all.pkgs[i].name, some.pkgs[k].name);
			assert_string_equal(all.pkgs[i].version, some.pkgs[k].version);
			assert_int_equal(all.pkgs[i].line, some.pkgs[k].line);
			k++;
		}
		assert_int_equal(k, some.count);
		dpkg_status_free(&all);
		dpkg_status_free(&some);
		sb_release(&sb);
	}
}

/* dpkg_status_load reads the file through a small buffer, whole stanzas at a
 * time: with every buffer size from 1 byte up it must give exactly what one
 * parse of the whole text gives (packages, lines, native arch, errors). */
static void expect_load_matches_parse(const char *text, size_t len, const char *const *wanted)
{
	char path[] = "/tmp/gpugate-status-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	struct dpkg_status whole, read;
	char whole_err[512] = "", read_err[512] = "";
	int whole_rc = dpkg_status_parse(path, text, len, wanted, &whole, whole_err, sizeof(whole_err));
	static const size_t sizes[] = { 1, 2, 3, 5, 8, 13, 64, 100, 4096, DPKG_STATUS_BUFFER };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		read_err[0] = '\0';
		int rc = dpkg_status_load_buffered(path, wanted, sizes[i], &read, read_err, sizeof(read_err));
		if (rc != whole_rc || strcmp(read_err, whole_err) != 0)
			fail_msg("buffer %zu: rc %d '%s', whole parse rc %d '%s'", sizes[i], rc, read_err, whole_rc,
				 whole_err);
		assert_int_equal(read.count, whole.count);
		for (size_t k = 0; k < read.count; k++) {
			assert_string_equal(read.pkgs[k].name, whole.pkgs[k].name);
			assert_string_equal(read.pkgs[k].arch, whole.pkgs[k].arch);
			assert_string_equal(read.pkgs[k].version, whole.pkgs[k].version);
			assert_string_equal(read.pkgs[k].state, whole.pkgs[k].state);
			assert_int_equal(read.pkgs[k].line, whole.pkgs[k].line);
		}
		assert_true((read.native_arch == NULL) == (whole.native_arch == NULL));
		if (read.native_arch)
			assert_string_equal(read.native_arch, whole.native_arch);
		dpkg_status_free(&read);
	}
	/* cut into parts at empty lines, each parsed on a thread and joined
	 * in file order, read through a buffer or mapped (buffer size 0): the
	 * same answer */
	for (size_t run = 0; run < 18; run++) {
		size_t parts = run / 2 + 1, buffer = run % 2 ? 0 : parts % 2 ? 7 : DPKG_STATUS_BUFFER;
		read_err[0] = '\0';
		int rc = dpkg_status_load_parts(path, wanted, buffer, parts, &read, read_err, sizeof(read_err));
		if (rc != whole_rc || strcmp(read_err, whole_err) != 0)
			fail_msg("%zu parts, buffer %zu: rc %d '%s', whole parse rc %d '%s'", parts, buffer, rc,
				 read_err, whole_rc, whole_err);
		assert_int_equal(read.count, whole.count);
		for (size_t k = 0; k < read.count; k++) {
			assert_string_equal(read.pkgs[k].name, whole.pkgs[k].name);
			assert_string_equal(read.pkgs[k].version, whole.pkgs[k].version);
			assert_int_equal(read.pkgs[k].line, whole.pkgs[k].line);
		}
		assert_true((read.native_arch == NULL) == (whole.native_arch == NULL));
		if (read.native_arch)
			assert_string_equal(read.native_arch, whole.native_arch);
		dpkg_status_free(&read);
	}
	dpkg_status_free(&whole);
	unlink(path);
}

/* A file of n stanzas p0..p(n-1), stanza `twice` repeating stanza `first`'s
 * name (spelt as `as`, with Multi-Arch `ma` for both when not NULL), and
 * stanza `broken` (when not 0) with a field dpkg refuses. */
static void many_stanzas(struct strbuf *sb, int n, int first, int twice, const char *as, const char *ma, int broken)
{
	for (int i = 0; i < n; i++) {
		if (i == twice)
			sb_printf(sb, "Package: %s\n", as);
		else
			sb_printf(sb, "Package: p%d\n", i);
		sb_printf(sb, "Status: install ok installed\nArchitecture: %s\nVersion: 1.%d\n",
			  i % 3 ? "amd64" : "i386", i);
		if (ma && (i == first || i == twice))
			sb_printf(sb, "Multi-Arch: %s\n", i == first ? ma : (strcmp(ma, "same") ? "same" : "foreign"));
		if (i == broken)
			sb_puts(sb, "Depends: libc6 (>> \n");
		sb_printf(sb, "Description: stanza %d\n with a continuation line of some length to fill the file\n\n",
			  i);
	}
}

/* The parts' joints: a package twice (or "same" beside not "same") across
 * parts is the file's first error at the second instance, as the one-piece
 * parse finds it; an error of a part's own after, or before, such a
 * duplicate; the kept stanzas and lines across every part. */
static void test_parts_match_one_piece(void **state)
{
	(void)state;
	const char *some[] = { "p1", "p400", "p1999", NULL };
	struct {
		int first, twice;
		const char *as, *ma;
		int broken;
	} cases[] = {
		{ -1, -1, "", NULL, 0 },         { 10, 1500, "p10", NULL, 0 },      { 10, 1500, "P10", NULL, 0 },
		{ 10, 1500, "p10", "same", 0 },  { 10, 1500, "p10", "foreign", 0 }, { 10, 1500, "p10", NULL, 1700 },
		{ 10, 1500, "p10", NULL, 1200 }, { 1200, 1500, "p1200", NULL, 0 },  { -1, -1, "", NULL, 1999 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		many_stanzas(&sb, 2000, cases[i].first, cases[i].twice, cases[i].as, cases[i].ma, cases[i].broken);
		expect_load_matches_parse(sb.buf, sb.len, i % 2 ? some : NULL);
		sb_release(&sb);
	}
}

/* ^Z (dpkg's MSDOS_EOF_CHAR) and the file's last byte as parse_stanza()
 * of dpkg 1.21.22 reads them (each decided by the real dpkg in
 * tests/vectors/dpkg-status.tsv); the parts, cut at empty lines only, give
 * the one-piece answer when ^Z^Z ends most stanzas and the cuts fall
 * between the few that end at an empty line. */
static void test_msdos_eof_and_last_byte(void **state)
{
	(void)state;
	const char *wanted[] = { "b1", NULL };
	struct dpkg_status st = parse_ok("Package: a1\nVersion: 1\n\032\032Package: b1\nVersion: 2\n", wanted);
	assert_int_equal(st.count, 1);
	assert_string_equal(st.pkgs[0].version, "2");
	assert_int_equal(st.pkgs[0].line, 5); /* ^Z counts as a line, as dpkg's lno does */
	dpkg_status_free(&st);
	st = parse_ok("Package: b1\nVersion: 2\032", wanted); /* ^Z as the last line end: not in the value */
	assert_string_equal(st.pkgs[0].version, "2");
	dpkg_status_free(&st);
	st = parse_ok("Package: b1\nVersion: 2\nX", wanted);
	assert_int_equal(st.count, 1);
	dpkg_status_free(&st);
	st = parse_ok("Package: b1\nVersion: 2\n\nX", wanted);
	dpkg_status_free(&st);
	st = parse_ok("X", wanted);
	assert_int_equal(st.count, 0);
	dpkg_status_free(&st);
	const char last_nul[] = "Package: b1\nVersion: 2\n\0"; /* a last NUL is never parsed either */
	char err[512];
	assert_int_equal(dpkg_status_parse("/x/status", last_nul, sizeof(last_nul) - 1, wanted, &st, err, sizeof(err)),
			 0);
	assert_int_equal(st.count, 1);
	dpkg_status_free(&st);
	expect_load_matches_parse(last_nul, sizeof(last_nul) - 1, NULL);
	/* dpkg tests for the end before it looks at the byte it read */
	expect_error("Package: b1\nDescription: foo\032bar\n", "/x/status:3: end of file after field name 'bar'");
	expect_error("Package: b1\nDescription: foo\032bar\nVersion: 1\n", "/x/status:3: newline in field name 'bar'");
	expect_error("Package: b1\nDescr\032iption: x\n", "MSDOS end of file (^Z) in field name 'Descr'");
	expect_error("Package: b1\nDescription:\032\n", "MSDOS end of file (^Z) in value of field 'Description'");
	expect_error("Package: b1\nVersion: 2\nFoo:\n", "/x/status:3: end of file before value of field 'Foo'");
	expect_error("Package: b1\nVersion: 2\nFoo: \n", "end of file before value of field 'Foo'");
	expect_error("Package: b1\nVersion: 2\nXY", "end of file after field name");
	expect_error("Package: b1\nStatus: install ok installed\032\nVersion: 2\n", "trailing junk");
	static const char *const texts[] = {
		"Package: b1\nVersion: 2\n\032\032Package: c1\nVersion: 2\n\nX",
		"Package: b1\nVersion: 2\nFoo:\n",
		"Package: b1\nVersion: 2\nFoo:\n\n",
		"Package: b1\nDescription: x\032 y\n\n\032Package: c1\nVersion: 1\n ",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		expect_load_matches_parse(texts[i], strlen(texts[i]), NULL);
		expect_load_matches_parse(texts[i], strlen(texts[i]), wanted);
	}
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 3000; i++)
		sb_printf(&sb, "Package: p%d\nVersion: 1.%d\nDescription: d\032 more\n%s", i, i,
			  i % 97 == 0 ? "\n"
			  : i % 2     ? "\032\032"
				      : "\032");
	sb_puts(&sb, "Package: last\nVersion: 1\n:");
	expect_load_matches_parse(sb.buf, sb.len, NULL);
	expect_load_matches_parse(sb.buf, sb.len, wanted);
	sb_release(&sb);
}

static void test_buffered_load_matches_parse(void **state)
{
	(void)state;
	const char *some[] = { "p1", "p4", "libze1", "intel-opencl-icd", NULL };
	expect_load_matches_parse(sample, strlen(sample), some);
	expect_load_matches_parse(sample, strlen(sample), NULL);
	static const char *const malformed[] = {
		"Package: a\nthis line has no colon\n",
		"Package: a\nVersion: 1\n\n leading continuation\n",
		"Package: a\nStatus: install ok installed\nVersion: 1\n\nPackage: a\nStatus: install ok installed\nVersion: 1\n",
		"Package: aa\nStatus: install ok\n",
		"Package: x\n\nVersion: 1\nStatus: install ok installed\n\n",
		"Package: aa\n\nPackage: \n",
		"",
		"\n\n  \n\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(malformed); i++) {
		expect_load_matches_parse(malformed[i], strlen(malformed[i]), NULL);
		expect_load_matches_parse(malformed[i], strlen(malformed[i]), some);
	}
	const char nul_wanted[] = "Package: aa\nVersion: 1\0\n\nPackage: p1\n";
	expect_load_matches_parse(nul_wanted, sizeof(nul_wanted) - 1, NULL);
	const char nul_skipped[] =
		"Package: p1\n\nPackage: other\nDescription: x\n 0123456789abcdef01\0x\n\nPackage: p4\n";
	expect_load_matches_parse(nul_skipped, sizeof(nul_skipped) - 1, some);
	unsigned seed = 777;
	for (int round = 0; round < 60; round++) {
		struct strbuf sb = STRBUF_INIT;
		random_status(&sb, &seed);
		expect_load_matches_parse(sb.buf, sb.len, round % 2 ? some : NULL);
		sb_release(&sb);
	}
}

/* A stanza of a package nobody named is kept when its Provides names a
 * wanted package: wherever Provides stands, in short and long stanzas (the
 * skip reads 16 bytes at a time), with the line it starts at. */
static void test_providers_kept(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "Package: p1\nStatus: install ok installed\nVersion: 1\n\n");
	sb_puts(&sb,
		"Package: other\nStatus: install ok installed\nMulti-Arch: foreign\nVersion: 2\nDescription: long\n");
	for (int i = 0; i < 40; i++)
		sb_puts(&sb, " a description line long enough to cross several sixteen byte blocks\n");
	sb_puts(&sb, "Provides: virt-a (= 3.0), virt-b\n\n");
	sb_puts(&sb, "Provides: virt-b\nPackage: first-provides\nStatus: install ok installed\nVersion: 3\n\n");
	sb_puts(&sb, "Package: unrelated\nStatus: install ok installed\nProvides: virt-c, virt-bb\nVersion: 4\n\n");
	sb_puts(&sb, "Package: right-after\nProvides: virt-b\nStatus: install ok installed\nVersion: 5\n\n");
	const char *wanted[] = { "p1", "virt-b", NULL };
	struct dpkg_status st = parse_ok(sb.buf, wanted);
	assert_int_equal(st.count, 4);
	assert_string_equal(st.pkgs[3].name, "right-after");
	assert_string_equal(st.pkgs[0].name, "p1");
	assert_string_equal(st.pkgs[1].name, "other");
	assert_int_equal(st.pkgs[1].line, 5);
	assert_string_equal(st.pkgs[1].multiarch, "foreign");
	assert_string_equal(st.pkgs[1].provides, "virt-a (= 3.0), virt-b");
	assert_string_equal(st.pkgs[1].version, "2");
	assert_string_equal(st.pkgs[2].name, "first-provides");
	dpkg_status_free(&st);
	expect_load_matches_parse(sb.buf, sb.len, wanted);
	assert_true(dpkg_provides_names("a, b:any (= 1),c", 16, "c"));
	assert_true(dpkg_provides_names("a, b:any (= 1),c", 16, "b"));
	assert_false(dpkg_provides_names("a, b:any (= 1),c", 16, "any"));
	sb_release(&sb);
}

static void test_missing_file(void **state)
{
	(void)state;
	struct dpkg_status st;
	char err[512];
	assert_int_equal(dpkg_status_load("/nonexistent/var/lib/dpkg/status", NULL, &st, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "No such file"));
}

/* The fast paths of the reader (Provides matched against the wanted names
 * in the walk that validates it, the wanted-name filter, the hashed field
 * table, "install ok installed" taken whole) against the plain rules, on
 * every case of the dpkg vectors and every seed of the fuzz corpus: the
 * accept/reject verdict and error text must not depend on what is wanted,
 * and the kept stanzas must be exactly those of the full parse whose name
 * is wanted or whose Provides names a wanted package (dpkg_provides_names,
 * its own walk per name). */
static const char *const diff_wanted[] = { "a1", "B1", "a", "dpkg", "libze1", "virt", "x-y", NULL };

static bool kept_by_rule(const struct dpkg_pkg *p)
{
	for (size_t i = 0; diff_wanted[i]; i++)
		if (strcasecmp(p->name, diff_wanted[i]) == 0 ||
		    dpkg_provides_names(p->provides, strlen(p->provides), diff_wanted[i]))
			return true;
	return false;
}

static void expect_wanted_matches_full(const char *what, const char *text, size_t len)
{
	struct dpkg_status all, some;
	char all_err[512] = "", some_err[512] = "";
	int all_rc = dpkg_status_parse("status", text, len, NULL, &all, all_err, sizeof(all_err));
	int some_rc = dpkg_status_parse("status", text, len, diff_wanted, &some, some_err, sizeof(some_err));
	if (all_rc != some_rc || strcmp(all_err, some_err) != 0)
		fail_msg("%s: verdict depends on the wanted names: %d '%s' against %d '%s'", what, all_rc, all_err,
			 some_rc, some_err);
	if (all_rc != 0)
		return;
	size_t k = 0;
	for (size_t i = 0; i < all.count; i++) {
		if (!kept_by_rule(&all.pkgs[i]))
			continue;
		if (k >= some.count)
			fail_msg("%s: %s (line %zu) not kept", what, all.pkgs[i].name, all.pkgs[i].line);
		assert_string_equal(all.pkgs[i].name, some.pkgs[k].name);
		assert_string_equal(all.pkgs[i].state, some.pkgs[k].state);
		assert_string_equal(all.pkgs[i].provides, some.pkgs[k].provides);
		assert_int_equal(all.pkgs[i].line, some.pkgs[k].line);
		k++;
	}
	if (k != some.count)
		fail_msg("%s: %zu stanzas kept, the rule keeps %zu", what, some.count, k);
	dpkg_status_free(&all);
	dpkg_status_free(&some);
}

/* The text column of tests/vectors/dpkg-status.tsv, after the dpkg stanza
 * the integration test writes first (\n \r \t \\ \z \xHH unescaped). */
static size_t status_vector(const char *field, char *out, size_t cap)
{
	static const char head[] = "Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\n"
				   "Multi-Arch: foreign\nVersion: 1.21.22\n\n";
	size_t n = strlen(head);
	memcpy(out, head, n);
	for (const char *p = field; *p && *p != '\n' && n + 1 < cap; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			p++;
			if (*p == 'x' && p[1] && p[2]) { /* \xHH: one byte */
				char hex[3] = { p[1], p[2], 0 };
				c = (char)strtol(hex, NULL, 16);
				p += 2;
			} else {
				c = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 't' ? '\t' : *p == 'z' ? '\032' : *p;
			}
		}
		out[n++] = c;
	}
	return n;
}

static void test_fast_paths_match_rules(void **state)
{
	(void)state;
	FILE *f = fopen("tests/vectors/dpkg-status.tsv", "r");
	assert_non_null(f);
	char line[8192], text[8192];
	int cases = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		char *col = line;
		for (int i = 0; i < 3 && col; i++)
			col = strchr(col, '\t') ? strchr(col, '\t') + 1 : NULL;
		assert_non_null(col);
		expect_wanted_matches_full(line, text, status_vector(col, text, sizeof(text)));
		cases++;
	}
	fclose(f);
	assert_true(cases >= 60);
	DIR *d = opendir("tests/fuzz/corpus/fuzz_dpkg_status");
	assert_non_null(d);
	int seeds = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof(path), "tests/fuzz/corpus/fuzz_dpkg_status/%s", e->d_name);
		FILE *s = fopen(path, "rb");
		assert_non_null(s);
		size_t n = fread(text, 1, sizeof(text), s);
		fclose(s);
		expect_wanted_matches_full(path, text, n);
		seeds++;
	}
	closedir(d);
	assert_true(seeds >= 10);
	/* Provides in every position and shape, wanted or not */
	static const char *const provides[] = { "virt", "a, virt", "virt (= 1), b", "x:any, virt:amd64 (= 2)",
						"Virt", "virtual", "a (= 1) , b,c", "x-y" };
	for (size_t i = 0; i < sizeof(provides) / sizeof(*provides); i++) {
		snprintf(text, sizeof(text),
			 "Package: p%zu\nStatus: install ok installed\nVersion: 1\nProvides: %s\n\n"
			 "Package: q%zu\nStatus: install ok installed\nVersion: 1\nProvides: %s, a1\n",
			 i, provides[i], i, provides[i]);
		expect_wanted_matches_full(provides[i], text, strlen(text));
	}
}

/* "install ok installed" is taken whole; any other spelling of the same
 * words reads the same, and one more letter is dpkg's trailing junk. */
static void test_status_spellings(void **state)
{
	(void)state;
	static const char *const same[] = { "install ok installed", "Install OK Installed", "install  ok\tinstalled",
					    "install ok installed  " };
	char text[256];
	for (size_t i = 0; i < sizeof(same) / sizeof(*same); i++) {
		snprintf(text, sizeof(text), "Package: a\nStatus: %s\nVersion: 1\n", same[i]);
		struct dpkg_status st = parse_ok(text, NULL);
		assert_int_equal(st.count, 1);
		assert_string_equal(st.pkgs[0].state, "installed");
		dpkg_status_free(&st);
	}
	struct dpkg_status st;
	char err[512];
	const char *junk = "Package: a\nStatus: install ok installedx\nVersion: 1\n";
	assert_int_equal(dpkg_status_parse("status", junk, strlen(junk), NULL, &st, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "trailing junk"));
}

/* Known field names match in any letter case (pkg_parse_field's strcasecmp),
 * letters only: '-' and '_' byte for byte, so a DEL where '_' stands (the
 * two differ by bit 5, as a letter's cases do) names a user field. */
static void test_field_name_case(void **state)
{
	(void)state;
	expect_error("Package: aa\nVersion: 1\nversion: 2\n", "duplicate value for 'Version' field");
	expect_error("Package: aa\nVersion: 1\nVERSION: 2\n", "duplicate value for 'Version' field");
	expect_error("Package: aa\nVersion: 1\nPackage-Revision: 1\npACKAGE-rEVISION: 2\n",
		     "duplicate value for 'Package-Revision' field");
	expect_error("Package: aa\nVersion: 1\nTriggers-Awaited: b\ntriggers-awaited: c\n",
		     "duplicate value for 'Triggers-Awaited' field");
	/* Package_Revision and Package-Revision are two fields, and a DEL in
	 * a name makes it a user field, never a duplicate (real dpkg-query
	 * reads this stanza) */
	struct dpkg_status st = parse_ok("Package: aa\nVersion: 1\nPackage_Revision: 1\nPackage-Revision: 2\n"
					 "Package\x7fRevision: 3\nVersioN\x7f: 4\nsTATUS: install ok installed\n",
					 NULL);
	assert_int_equal(st.count, 1);
	assert_string_equal(st.pkgs[0].state, "installed");
	dpkg_status_free(&st);
	/* an archive field in another case is still refused */
	expect_error("Package: aa\nVersion: 1\nmd5SUM: x\n", "'MD5sum' field not allowed in status file");
}

/* The file cut short after it was mapped (dpkg_status_mapped_hook): the
 * parts that touch a page it no longer has are caught (SIGBUS, not a
 * crash), those that read the zeros a cut page ends in are not trusted
 * (the file's size changed), and the file is read again: the answer is the
 * one for what the file holds now. */
static size_t cut_to;
static const char *cut_path;
static void cut_file(int fd)
{
	(void)fd; /* (gpugate's, opened read-only) */
	assert_int_equal(truncate(cut_path, (off_t)cut_to), 0);
}

static void test_file_cut_short_while_mapped(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	many_stanzas(&sb, 2000, -1, -1, "", NULL, 0);
	const char *wanted[] = { "p1", "p3", "p1999", NULL };
	static const size_t cuts[] = { 8192, 5000, 0 }; /* a page's end, within a page, nothing */
	for (size_t c = 0; c < ARRAY_SIZE(cuts); c++)
		for (size_t parts = 1; parts <= 4; parts += 3) {
			char path[] = "/tmp/gpugate-status-XXXXXX";
			int fd = mkstemp(path);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, sb.buf, sb.len), (ssize_t)sb.len);
			assert_int_equal(close(fd), 0);
			struct dpkg_status cut, whole;
			char err[512] = "", whole_err[512] = "";
			cut_to = cuts[c];
			cut_path = path;
			dpkg_status_mapped_hook = cut_file;
			int rc = dpkg_status_load_parts(path, wanted, 0, parts, &cut, err, sizeof(err));
			dpkg_status_mapped_hook = NULL;
			int whole_rc =
				dpkg_status_parse(path, sb.buf, cuts[c], wanted, &whole, whole_err, sizeof(whole_err));
			if (rc != whole_rc || strcmp(err, whole_err) != 0)
				fail_msg("cut to %zu, %zu parts: rc %d '%s', the cut text's rc %d '%s'", cuts[c], parts,
					 rc, err, whole_rc, whole_err);
			assert_int_equal(cut.count, whole.count);
			for (size_t k = 0; k < cut.count; k++) {
				assert_string_equal(cut.pkgs[k].name, whole.pkgs[k].name);
				assert_int_equal(cut.pkgs[k].line, whole.pkgs[k].line);
			}
			dpkg_status_free(&cut);
			dpkg_status_free(&whole);
			unlink(path);
		}
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_crlf_and_empty),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_nul_bytes_as_dpkg_reads_them),
		cmocka_unit_test(test_skip_matches_full_parse),
		cmocka_unit_test(test_buffered_load_matches_parse),
		cmocka_unit_test(test_parts_match_one_piece),
		cmocka_unit_test(test_msdos_eof_and_last_byte),
		cmocka_unit_test(test_providers_kept),
		cmocka_unit_test(test_fast_paths_match_rules),
		cmocka_unit_test(test_status_spellings),
		cmocka_unit_test(test_field_name_case),
		cmocka_unit_test(test_file_cut_short_while_mapped),
	};
	return cmocka_run_group_tests_name("dpkg_status", tests, NULL, NULL);
}
