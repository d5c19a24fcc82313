#include "debversion.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Weight of one character in a non-digit run: '~' sorts before everything,
 * even the end; letters before other characters. */
static int order(int c)
{
	if (isdigit(c))
		return 0;
	if (isalpha(c))
		return c;
	if (c == '~')
		return -1;
	if (c)
		return c + 256;
	return 0;
}

/* Compares [a, a_end) with [b, b_end) by alternating non-digit and digit runs. */
static int compare_part(const char *a, const char *a_end, const char *b, const char *b_end)
{
#define AT(p, e) ((p) < (e) ? (unsigned char)*(p) : 0)
	while (a < a_end || b < b_end) {
		int first_diff = 0;
		while ((a < a_end && !isdigit(AT(a, a_end))) || (b < b_end && !isdigit(AT(b, b_end)))) {
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
		while (isdigit(AT(a, a_end)) && isdigit(AT(b, b_end))) {
			if (!first_diff)
				first_diff = AT(a, a_end) - AT(b, b_end);
			a++;
			b++;
		}
		if (isdigit(AT(a, a_end)))
			return 1;
		if (isdigit(AT(b, b_end)))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
#undef AT
}

struct parts {
	unsigned long epoch;
	const char *up, *up_end, *rev, *rev_end;
};

static void split(const char *v, struct parts *p)
{
	const char *colon = strchr(v, ':');
	p->epoch = 0;
	if (colon) {
		p->epoch = strtoul(v, NULL, 10);
		v = colon + 1;
	}
	const char *end = v + strlen(v);
	const char *dash = strrchr(v, '-');
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

const char *debversion_invalid(const char *v)
{
	if (!*v)
		return "empty version";
	for (const char *p = v; *p; p++)
		if (isspace((unsigned char)*p))
			return "version contains a space";
	const char *colon = strchr(v, ':');
	if (colon) {
		if (colon == v)
			return "epoch in version is empty";
		for (const char *p = v; p < colon; p++)
			if (!isdigit((unsigned char)*p))
				return "epoch in version is not a number";
		if (colon - v > 9)
			return "epoch in version is too big";
		v = colon + 1;
	}
	const char *dash = strrchr(v, '-');
	const char *up_end = dash ? dash : v + strlen(v);
	if (up_end == v)
		return "version has no upstream part";
	if (!isdigit((unsigned char)*v))
		return "version number does not start with digit";
	for (const char *p = v; p < up_end; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".-+~:", *p))
			return "invalid character in version number";
	if (dash) {
		if (!dash[1])
			return "revision number is empty";
		for (const char *p = dash + 1; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr(".+~", *p))
				return "invalid character in revision number";
	}
	return NULL;
}
