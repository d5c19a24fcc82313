/* Debian versions exactly as dpkg reads and orders them: the order is
 * verrevcmp() and order() of dpkg's lib/dpkg/version.c, the syntax is
 * parseversion() of lib/dpkg/parsehelp.c (what it rejects, what it only
 * warns about). */
#include "debversion.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* dpkg's c_isdigit()/c_isalpha() (lib/dpkg/c-ctype.c): ASCII only, whatever
 * the locale. */
static bool ascii_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool ascii_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Weight of one byte in a non-digit run (dpkg's order()): '~' sorts before
 * everything, even the end; letters before other characters. dpkg hands
 * order() a plain char, which is signed on amd64 (and i386): a byte >= 0x80
 * arrives negative and weighs c + 256, i.e. the byte's own value 128..255,
 * which sorts after the letters but before '+' (299) and '.' (302). */
static int order(unsigned char byte)
{
	int c = (signed char)byte;
	if (ascii_digit(c))
		return 0;
	if (ascii_alpha(c))
		return c;
	if (c == '~')
		return -1;
	if (c)
		return c + 256;
	return 0;
}

/* Compares [a, a_end) with [b, b_end) by alternating non-digit and digit
 * runs (dpkg's verrevcmp()). */
static int compare_part(const char *a, const char *a_end, const char *b, const char *b_end)
{
#define AT(p, e) ((p) < (e) ? (unsigned char)*(p) : 0)
	while (a < a_end || b < b_end) {
		int first_diff = 0;
		while ((a < a_end && !ascii_digit(AT(a, a_end))) || (b < b_end && !ascii_digit(AT(b, b_end)))) {
			int ac = order(AT(a, a_end));
			int bc = order(AT(b, b_end));
			if (ac != bc)
				return ac - bc;
			a++;
			b++;
		}
		while (AT(a, a_end) == '0')
			a++;
		while (AT(b, b_end) == '0')
			b++;
		while (ascii_digit(AT(a, a_end)) && ascii_digit(AT(b, b_end))) {
			if (!first_diff)
				first_diff = AT(a, a_end) - AT(b, b_end);
			a++;
			b++;
		}
		if (ascii_digit(AT(a, a_end)))
			return 1;
		if (ascii_digit(AT(b, b_end)))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
#undef AT
}

struct parts {
	long epoch;
	const char *up, *up_end, *rev, *rev_end;
};

/* Splits v as parseversion() does: blanks around it trimmed, the epoch up to
 * the first ':' read with strtol (so "+1" and "0000000001" are 1), the
 * revision after the last '-'. */
static void split(const char *v, struct parts *p)
{
	while (blank((unsigned char)*v))
		v++;
	const char *end = v + strlen(v);
	while (end > v && blank((unsigned char)end[-1]))
		end--;
	const char *colon = memchr(v, ':', (size_t)(end - v));
	p->epoch = 0;
	if (colon) {
		p->epoch = strtol(v, NULL, 10);
		v = colon + 1;
	}
	const char *dash = NULL;
	for (const char *q = v; q < end; q++)
		if (*q == '-')
			dash = q;
	p->up = v;
	if (dash) {
		p->up_end = dash;
		p->rev = dash + 1;
	} else {
		p->up_end = end;
		p->rev = end;
	}
	p->rev_end = end;
}

int debversion_compare(const char *a, const char *b)
{
	struct parts pa, pb;
	split(a, &pa);
	split(b, &pb);
	if (pa.epoch != pb.epoch)
		return pa.epoch > pb.epoch ? 1 : -1;
	int r = compare_part(pa.up, pa.up_end, pb.up, pb.up_end);
	if (r)
		return r;
	return compare_part(pa.rev, pa.rev_end, pb.rev, pb.rev_end);
}

/* The checks of refused() below on a word v[0..end) already scanned: its
 * first ':' and last '-' (NULL when none). */
static const char *marked_refused(const char *v, const char *end, const char *colon, const char *last_dash,
				  const char **up, const char **up_end, const char **dash_out)
{
	if (colon) {
		/* strtol's own reading of the epoch (sign, digits), which stops at the colon */
		const char *p = v;
		bool neg = false;
		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		long long epoch = 0;
		const char *digits = p;
		while (p < colon && ascii_digit((unsigned char)*p) && epoch <= (long long)INT_MAX + 1)
			epoch = epoch * 10 + (*p++ - '0');
		while (p < colon && ascii_digit((unsigned char)*p))
			p++;
		if (p == digits)
			return "epoch in version is empty";
		if (p != colon)
			return "epoch in version is not number";
		if (neg && epoch > 0)
			return "epoch in version is negative";
		if (epoch > INT_MAX)
			return "epoch in version is too big";
		if (colon + 1 == end)
			return "nothing after colon in version number";
		v = colon + 1;
	}
	const char *dash = last_dash && last_dash >= v ? last_dash : NULL;
	if (dash && dash + 1 == end)
		return "revision number is empty";
	const char *upper_end = dash ? dash : end;
	if (upper_end == v)
		return "version number is empty";
	*up = v;
	*up_end = upper_end;
	*dash_out = dash;
	return NULL;
}

/* The part of parseversion() (lib/dpkg/parsehelp.c) that refuses a version
 * even in dpkg's own database, on v[0..n); fills the upstream version's
 * bounds and the revision's dash for the warnings that follow. */
static const char *refused(const char *v, size_t n, const char **up, const char **up_end, const char **dash_out,
			   const char **end_out)
{
	const char *lim = v + n;
	while (v < lim && blank((unsigned char)*v))
		v++;
	if (v == lim)
		return "version string is empty";
	/* one pass: the end of the first word, its first ':' and last '-'
	 * (one table lookup per byte: most bytes are none of these) */
	enum { V_BLANK = 1, V_COLON, V_DASH };
	static const unsigned char special[256] = { [' '] = V_BLANK, ['\t'] = V_BLANK, [':'] = V_COLON, ['-'] = V_DASH };
	const char *end = v, *colon = NULL, *last_dash = NULL;
	for (; end < lim; end++) {
		unsigned char k = special[(unsigned char)*end];
		if (!k)
			continue;
		if (k == V_BLANK)
			break;
		if (k == V_DASH)
			last_dash = end;
		else if (!colon)
			colon = end;
	}
	for (const char *p = end; p < lim; p++)
		if (!blank((unsigned char)*p))
			return "version string has embedded spaces";
	*end_out = end;
	return marked_refused(v, end, colon, last_dash, up, up_end, dash_out);
}

const char *debversion_refused(const char *v, size_t n)
{
	const char *up, *up_end, *dash, *end;
	return refused(v, n, &up, &up_end, &dash, &end);
}

const char *debversion_refused_marked(const char *v, size_t n, const char *colon, const char *last_dash)
{
	const char *up, *up_end, *dash;
	if (!n)
		return "version string is empty";
	return marked_refused(v, v + n, colon, last_dash, &up, &up_end, &dash);
}

const char *debversion_check(const char *v, enum debversion_level *level)
{
	const char *up, *up_end, *dash, *end;
	*level = DEBVERSION_ERROR;
	const char *why = refused(v, strlen(v), &up, &up_end, &dash, &end);
	if (why)
		return why;
	v = up;
	/* what follows dpkg only warns about in its own database (the status
	 * file is parsed leniently: pdb_lax_version_parser in lib/dpkg/dpkg-db.h),
	 * and refuses in a package's control file */
	*level = DEBVERSION_WARN;
	if (!ascii_digit((unsigned char)*v))
		return "version number does not start with digit";
	for (const char *p = v; p < up_end; p++)
		if (!ascii_digit((unsigned char)*p) && !ascii_alpha((unsigned char)*p) && !strchr(".-+~:", *p))
			return "invalid character in version number";
	if (dash)
		for (const char *p = dash + 1; p < end; p++)
			if (!ascii_digit((unsigned char)*p) && !ascii_alpha((unsigned char)*p) && !strchr(".+~", *p))
				return "invalid character in revision number";
	*level = DEBVERSION_OK;
	return NULL;
}

const char *debversion_invalid(const char *v)
{
	enum debversion_level level;
	return debversion_check(v, &level);
}
