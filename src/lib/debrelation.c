#include "debrelation.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debversion.h"
#include "util.h"

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

/* Package names: lowercase letters, digits, + - . ; at least two characters,
 * starting with an alphanumeric (deb-control(5)); capitals are read below. */
static bool valid_name_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.';
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
	while (valid_name_char(*p) || isupper((unsigned char)*p))
		upper |= isupper((unsigned char)*p++) != 0;
	if (p == start)
		return fail(err, size, text, p, "expected a package name");
	if (p - start < 2 || !isalnum((unsigned char)*start))
		return fail(err, size, text, start,
			    "invalid package name (two or more of a-z 0-9 + - ., starting alphanumeric)");
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
