#include "affinity.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Reads a decimal index at *p (no sign, at most AFFINITY_MAX_INDEX); 0 or -1. */
static int parse_index(const char **p, const char *end, unsigned *out)
{
	const char *s = *p;
	unsigned v = 0;
	if (s >= end || !isdigit((unsigned char)*s))
		return -1;
	while (s < end && isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > AFFINITY_MAX_INDEX)
			return -1;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

/* One entry, already trimmed: "N" or "N.M". */
static int parse_item(const char *s, const char *end, struct affinity_item *item)
{
	unsigned dev, sub;
	if (parse_index(&s, end, &dev) < 0)
		return -1;
	item->device = dev;
	item->sub = -1;
	if (s == end)
		return 0;
	if (*s != '.')
		return -1;
	s++;
	if (parse_index(&s, end, &sub) < 0 || s != end)
		return -1;
	item->sub = (int)sub;
	return 0;
}

int affinity_parse(const char *mask, struct affinity *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	if (!mask) {
		out->all = true;
		return 0;
	}
	const char *p = mask;
	while (is_blank(*p))
		p++;
	if (!*p)
		return 0; /* set but empty: the driver shows no device at all */
	size_t pos = 1;
	for (;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *b = p, *e = end;
		while (b < e && is_blank(*b))
			b++;
		while (e > b && is_blank(e[-1]))
			e--;
		if (b == e) {
			snprintf(err, errsz, "entry %zu is empty (a stray comma in '%s')", pos, mask);
			return -1;
		}
		if (out->count == AFFINITY_MAX_ITEMS) {
			snprintf(err, errsz, "more than %d entries", AFFINITY_MAX_ITEMS);
			return -1;
		}
		if (parse_item(b, e, &out->items[out->count]) < 0) {
			int n = (int)(e - b) > 64 ? 64 : (int)(e - b);
			snprintf(err, errsz, "entry %zu '%.*s' is not a device index N or a sub-device N.M "
				 "(decimal, at most %d)", pos, n, b, AFFINITY_MAX_INDEX);
			return -1;
		}
		out->count++;
		if (!comma)
			return 0;
		p = comma + 1;
		pos++;
	}
}

bool affinity_visible(const struct affinity *a, unsigned device, int sub)
{
	if (a->all)
		return true;
	for (size_t i = 0; i < a->count; i++) {
		const struct affinity_item *it = &a->items[i];
		if (it->device != device)
			continue;
		if (sub < 0 || it->sub < 0 || it->sub == sub)
			return true;
	}
	return false;
}

void affinity_format(const struct affinity *a, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	if (a->all) {
		snprintf(buf, size, "(unset)");
		return;
	}
	size_t used = 0;
	for (size_t i = 0; i < a->count && used < size; i++) {
		int n = a->items[i].sub < 0
			? snprintf(buf + used, size - used, "%s%u", i ? "," : "", a->items[i].device)
			: snprintf(buf + used, size - used, "%s%u.%d", i ? "," : "", a->items[i].device, a->items[i].sub);
		if (n < 0)
			return;
		used += (size_t)n;
	}
}

static const char *const hierarchy_names[] = { "FLAT", "COMPOSITE", "COMBINED" };

int hierarchy_parse(const char *value, enum hierarchy *out, char *err, size_t errsz)
{
	*out = HIERARCHY_FLAT;
	if (!value)
		return 0;
	for (size_t i = 0; i < sizeof(hierarchy_names) / sizeof(hierarchy_names[0]); i++) {
		if (strcmp(value, hierarchy_names[i]) == 0) {
			*out = (enum hierarchy)i;
			return 0;
		}
	}
	snprintf(err, errsz, "'%.64s' is not FLAT, COMPOSITE or COMBINED (upper case, as the driver compares it)", value);
	return -1;
}

const char *hierarchy_name(enum hierarchy h)
{
	return (unsigned)h < 3 ? hierarchy_names[h] : "?";
}
