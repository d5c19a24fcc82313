#include "debrelation.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debversion.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

const char *rel_op_text(enum rel_op op)
{
	static const char *const text[] = { "", "<<", "<=", "=", ">=", ">>" };
	return text[op];
}

bool rel_op_holds(enum rel_op op, const char *installed, const char *required)
{
	if (op == REL_ANY)
		return true;
	int c = debversion_compare(installed, required);
	switch (op) {
	case REL_LT:
		return c < 0;
	case REL_LE:
		return c <= 0;
	case REL_EQ:
		return c == 0;
	case REL_GE:
		return c >= 0;
	case REL_GT:
		return c > 0;
	default:
		return false;
	}
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Character classes, one table lookup per byte in the loops below:
 * C_SPACE dpkg's c_isspace() (lib/dpkg/c-ctype.h); C_ALNUM letters and
 * digits; C_NAME a package name's characters after the first
 * (pkg_name_is_illegal(), lib/dpkg/parsehelp.c: "-+._", '_' deprecated but
 * accepted; capitals are looked up lowercased: pkg_hash_find_set); C_ARCH an
 * architecture name's (dpkg_arch_name_is_illegal(), lib/dpkg/arch.c: '-'). */
enum {
	C_SPACE = 1,
	C_ALNUM = 2,
	C_NAME = 4,
	C_ARCH = 8,
	C_PAREN = 16, /* '(' and ')': end a version */
	C_VMARK = 32  /* ':' and '-': noted in a version for debversion_refused_marked */
};
/* clang-format off */
static const unsigned char char_class[256] = {
	['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1, ['('] = 16, [')'] = 16, ['+'] = 4, ['-'] = 44, [':'] = 32,
	['.'] = 4, ['0'] = 14, ['1'] = 14, ['2'] = 14, ['3'] = 14, ['4'] = 14, ['5'] = 14, ['6'] = 14,
	['7'] = 14, ['8'] = 14, ['9'] = 14, ['A'] = 14, ['B'] = 14, ['C'] = 14, ['D'] = 14, ['E'] = 14,
	['F'] = 14, ['G'] = 14, ['H'] = 14, ['I'] = 14, ['J'] = 14, ['K'] = 14, ['L'] = 14, ['M'] = 14,
	['N'] = 14, ['O'] = 14, ['P'] = 14, ['Q'] = 14, ['R'] = 14, ['S'] = 14, ['T'] = 14, ['U'] = 14,
	['V'] = 14, ['W'] = 14, ['X'] = 14, ['Y'] = 14, ['Z'] = 14, ['_'] = 4, ['a'] = 14, ['b'] = 14,
	['c'] = 14, ['d'] = 14, ['e'] = 14, ['f'] = 14, ['g'] = 14, ['h'] = 14, ['i'] = 14, ['j'] = 14,
	['k'] = 14, ['l'] = 14, ['m'] = 14, ['n'] = 14, ['o'] = 14, ['p'] = 14, ['q'] = 14, ['r'] = 14,
	['s'] = 14, ['t'] = 14, ['u'] = 14, ['v'] = 14, ['w'] = 14, ['x'] = 14, ['y'] = 14, ['z'] = 14,
};
/* clang-format on */

static bool deb_space(char c)
{
	return char_class[(unsigned char)c] & C_SPACE;
}

static bool deb_alnum(char c)
{
	return char_class[(unsigned char)c] & C_ALNUM;
}

static bool valid_name_char(char c)
{
	return char_class[(unsigned char)c] & C_NAME;
}

/* The end of the run of package name characters (C_NAME) at p: 16 bytes at
 * a time while 16 remain (SSE2: letters by folding bit 5 into 'a'..'z',
 * digits, "+-._"; bytes >= 0x80 compare negative and match none), then
 * one at a time. */
static const char *name_run_end(const char *p, const char *end)
{
#if defined(__SSE2__)
	const __m128i fold = _mm_set1_epi8(0x20), a = _mm_set1_epi8('a' - 1), z = _mm_set1_epi8('z' + 1);
	const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1), plus = _mm_set1_epi8('+');
	const __m128i dash = _mm_set1_epi8('-'), dot = _mm_set1_epi8('.'), under = _mm_set1_epi8('_');
	while (end - p >= 16) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i l = _mm_or_si128(b, fold);
		__m128i ok = _mm_and_si128(_mm_cmpgt_epi8(l, a), _mm_cmplt_epi8(l, z));
		ok = _mm_or_si128(ok, _mm_and_si128(_mm_cmpgt_epi8(b, d0), _mm_cmplt_epi8(b, d9)));
		ok = _mm_or_si128(ok, _mm_or_si128(_mm_cmpeq_epi8(b, plus), _mm_cmpeq_epi8(b, dash)));
		ok = _mm_or_si128(ok, _mm_or_si128(_mm_cmpeq_epi8(b, dot), _mm_cmpeq_epi8(b, under)));
		unsigned stop = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
		if (stop)
			return p + __builtin_ctz(stop);
		p += 16;
	}
#endif
	while (p < end && valid_name_char(*p))
		p++;
	return p;
}

const char *deb_name_illegal(const char *name, size_t len)
{
	if (!len)
		return "may not be empty string";
	if (!deb_alnum(name[0]))
		return "must start with an alphanumeric character";
	for (size_t i = 1; i < len; i++)
		if (!valid_name_char(name[i]))
			return "character not allowed (only letters, digits and characters '-+._')";
	return NULL;
}

static int fail(char *err, size_t size, const char *text, const char *at, const char *what)
{
	snprintf(err, size, "%s at column %zu of '%s'", what, (size_t)(at - text) + 1, text);
	return -1;
}

static int parse_alt(const char *text, const char **pp, struct rel_alt *alt, char *err, size_t size)
{
	const char *p = skip_space(*pp);
	const char *start = p;
	/* dpkg takes capitals in a relation and looks the name up lowercased
	 * (lib/dpkg/pkg-hash.c pkg_hash_find_set): a warning here, not an error */
	bool upper = false;
	while (valid_name_char(*p))
		upper |= isupper((unsigned char)*p++) != 0;
	if (p == start)
		return fail(err, size, text, p, "expected a package name");
	if (deb_name_illegal(start, (size_t)(p - start)))
		return fail(err, size, text, start,
			    "invalid package name (letters, digits and + - . _, starting alphanumeric: dpkg's "
			    "pkg_name_is_illegal)");
	alt->name = xstrndup(start, (size_t)(p - start));
	for (char *c = alt->name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (*p == ':') {
		const char *a = ++p;
		while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-')
			p++;
		if (p == a)
			return fail(err, size, text, p, "expected an architecture after ':'");
		alt->arch = xstrndup(a, (size_t)(p - a));
	}
	p = skip_space(p);
	if (*p == '(') {
		/* the operators as dpkg's f_dependency() (lib/dpkg/fields.c) reads them */
		p = skip_space(p + 1);
		if ((p[0] == '<' || p[0] == '>') && p[1] == '=') {
			alt->op = p[0] == '<' ? REL_LE : REL_GE;
			p += 2;
		} else if ((p[0] == '<' && p[1] == '<') || (p[0] == '>' && p[1] == '>')) {
			alt->op = p[0] == '<' ? REL_LT : REL_GT;
			p += 2;
		} else if ((p[0] == '<' || p[0] == '>') && (p[1] == '<' || p[1] == '>')) {
			return fail(err, size, text, p, "bad version relationship (use << <= = >= >>)");
		} else if (p[0] == '<' || p[0] == '>') {
			alt->op = p[0] == '<' ? REL_LE : REL_GE;
			alt->warning = xasprintf("'%c' is obsolete: dpkg reads it as '%c=' (write '%c=' or '%c%c')",
						 p[0], p[0], p[0], p[0], p[0]);
			p++;
		} else if (p[0] == '=') {
			alt->op = REL_EQ;
			p++;
		} else {
			alt->op = REL_EQ;
			alt->warning = xstrdup("no operator: dpkg reads it as an exact match (write '=')");
		}
		p = skip_space(p);
		const char *v = p;
		while (*p && *p != ')' && *p != '(' && *p != ' ' && *p != '\t')
			p++;
		if (p == v)
			return fail(err, size, text, p, "expected a version");
		alt->version = xstrndup(v, (size_t)(p - v));
		enum debversion_level level;
		const char *bad = debversion_check(alt->version, &level);
		if (bad && level == DEBVERSION_ERROR)
			return fail(err, size, text, v, bad);
		if (bad && !alt->warning)
			alt->warning = xasprintf("version '%s': %s (dpkg accepts it with a warning in its database)",
						 alt->version, bad);
		p = skip_space(p);
		if (*p != ')')
			return fail(err, size, text, p, "expected ')'");
		p = skip_space(p + 1);
	}
	if (upper) {
		char *w = xasprintf("package names are lowercase (deb-control(5)): dpkg looks '%.*s' up as '%s'",
				    (int)strlen(alt->name), start, alt->name);
		if (alt->warning) {
			char *both = xasprintf("%s; %s", w, alt->warning);
			free(w);
			free(alt->warning);
			w = both;
		}
		alt->warning = w;
	}
	*pp = p;
	return 0;
}

int relation_parse(const char *text, struct relation *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	const char *p = text;
	for (;;) {
		out->alts = xrealloc(out->alts, (out->count + 1) * sizeof(*out->alts));
		struct rel_alt *alt = &out->alts[out->count++];
		memset(alt, 0, sizeof(*alt));
		if (parse_alt(text, &p, alt, err, err_size) < 0) {
			relation_free(out);
			return -1;
		}
		if (*p == '|') {
			p++;
			continue;
		}
		if (*p) {
			fail(err, err_size, text, p,
			     *p == ',' ? "one relation per list item (',' joins relations in dpkg; use a new item)"
				       : "unexpected text");
			relation_free(out);
			return -1;
		}
		return 0;
	}
}

void relation_free(struct relation *rel)
{
	for (size_t i = 0; i < rel->count; i++) {
		free(rel->alts[i].name);
		free(rel->alts[i].arch);
		free(rel->alts[i].version);
		free(rel->alts[i].warning);
	}
	free(rel->alts);
	rel->alts = NULL;
	rel->count = 0;
}

/* dpkg_arch_name_is_illegal() (lib/dpkg/arch.c): letters, digits and '-',
 * starting with a letter or digit. */
static bool arch_name_legal(const char *a, size_t n)
{
	if (!n || !deb_alnum(a[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(char_class[(unsigned char)a[i]] & C_ARCH))
			return false;
	return true;
}

static int field_error(char *err, size_t size, const char *field, const char *fmt, const char *a, size_t an)
{
	char what[160];
	snprintf(what, sizeof(what), fmt, (int)(an > 60 ? 60 : an), a);
	snprintf(err, size, "'%s' field, %s", field, what);
	return -1;
}

/* The walk follows f_dependency() (lib/dpkg/fields.c, dpkg 1.21) step by
 * step; its warnings (obsolete '<', no operator, a Provides version other
 * than '=') are not errors in the status file, which dpkg reads laxly. */
int relfield_walk(const char *field, const char *value, size_t len, enum relfield kind,
		  bool (*fn)(const struct relfield_item *item, void *data), void *data, char *err, size_t err_size)
{
	const char *p = value, *end = value + len;
#define AT(q) ((q) < end ? *(q) : '\0')
	if (!len)
		return 0; /* empty fields are ignored */
	for (;;) {
		for (;;) {
			struct relfield_item it = { 0 };
			it.name = p;
			/* the name's characters checked as they are passed (pkg_name_is_illegal) */
			bool legal = p < end && deb_alnum(*p);
			p = name_run_end(p, end);
			while (p < end && !deb_space(*p) && *p != ':' && *p != '(' && *p != ',' && *p != '|') {
				legal = false;
				p++;
			}
			it.name_len = (size_t)(p - it.name);
			if (!it.name_len)
				return field_error(err, err_size, field,
						   "missing package name, or garbage where package name expected%.*s",
						   "", 0);
			if (!legal) {
				char why[200];
				snprintf(why, sizeof(why), "invalid package name '%%.*s': %s",
					 deb_name_illegal(it.name, it.name_len));
				return field_error(err, err_size, field, why, it.name, it.name_len);
			}
			if (AT(p) == ':') {
				it.arch = ++p;
				while (p < end && !deb_space(*p) && *p != '(' && *p != ',' && *p != '|')
					p++;
				it.arch_len = (size_t)(p - it.arch);
				if (!it.arch_len)
					return field_error(err, err_size, field,
							   "missing architecture name, or garbage where architecture "
							   "name expected%.*s",
							   "", 0);
				if (!arch_name_legal(it.arch, it.arch_len))
					return field_error(err, err_size, field, "invalid architecture name '%.*s'",
							   it.arch, it.arch_len);
			}
			while (deb_space(AT(p)))
				p++;
			if (AT(p) == '(') {
				p++;
				while (deb_space(AT(p)))
					p++;
				char c1 = AT(p);
				if (c1 == '<' || c1 == '>') {
					p++;
					char c2 = AT(p);
					if (c2 == '=') {
						it.op = c1 == '<' ? REL_LE : REL_GE;
						p++;
					} else if (c2 == c1) {
						it.op = c1 == '<' ? REL_LT : REL_GT;
						p++;
					} else if (c2 == '<' || c2 == '>') {
						return field_error(err, err_size, field,
								   "bad version relationship in reference to '%.*s'",
								   it.name, it.name_len);
					} else {
						it.op = c1 == '<' ? REL_LE : REL_GE; /* obsolete: a warning */
					}
				} else {
					it.op = REL_EQ; /* '=', or none: an implicit exact match (a warning) */
					if (c1 == '=')
						p++;
				}
				while (deb_space(AT(p)))
					p++;
				it.version = p;
				/* its first ':' and last '-' noted on the way: the
				 * version check does not read it again */
				const char *colon = NULL, *last_dash = NULL;
				for (; p < end; p++) {
					unsigned char k = char_class[(unsigned char)*p];
					if (!(k & (C_SPACE | C_PAREN | C_VMARK)))
						continue;
					if (k & (C_SPACE | C_PAREN))
						break;
					if (*p == '-')
						last_dash = p;
					else if (!colon)
						colon = p;
				}
				it.version_len = (size_t)(p - it.version);
				while (deb_space(AT(p)))
					p++;
				if (AT(p) == '\0')
					return field_error(err, err_size, field,
							   "reference to '%.*s': version unterminated", it.name,
							   it.name_len);
				if (AT(p) != ')')
					return field_error(err, err_size, field,
							   "reference to '%.*s': version contains another character "
							   "instead of ')'",
							   it.name, it.name_len);
				/* parse_db_version() in the status file's lax mode: only errors count */
				const char *why =
					debversion_refused_marked(it.version, it.version_len, colon, last_dash);
				if (why) {
					char what[200];
					snprintf(what, sizeof(what), "reference to '%%.*s': version: %s", why);
					return field_error(err, err_size, field, what, it.name, it.name_len);
				}
				p++;
				while (deb_space(AT(p)))
					p++;
			}
			if (fn && !fn(&it, data))
				return 1;
			if (AT(p) == '\0' || AT(p) == ',')
				break;
			if (AT(p) != '|')
				return field_error(err, err_size, field,
						   "syntax error after reference to package '%.*s'", it.name,
						   it.name_len);
			if (kind != RELFIELD_DEPENDS)
				return field_error(err, err_size, field, "alternatives ('|') not allowed%.*s", "", 0);
			p++;
			while (deb_space(AT(p)))
				p++;
		}
		if (AT(p) == '\0')
			return 0;
		p++;
		while (deb_space(AT(p)))
			p++;
	}
#undef AT
}
