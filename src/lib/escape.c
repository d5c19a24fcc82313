#include "escape.h"

#include <stdlib.h>
#include <string.h>

/* Characters no target gets raw (see escape.h). Tab and newline are the
 * targets' business: they have a proper escape in each. */
static bool unsafe(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
		return true;
	if (cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return true; /* bidi controls */
	if (cp == 0x2028 || cp == 0x2029)
		return true; /* line and paragraph separators */
	return cp == 0xFFFE || cp == 0xFFFF;
}

static void add_visible(struct strbuf *out, uint32_t cp)
{
	if (cp < 0x80)
		sb_printf(out, "\\x%02x", (unsigned)cp);
	else
		sb_printf(out, "\\u{%04x}", (unsigned)cp);
}

/* Each target's own escapes for ASCII characters. */
struct replacement {
	char c;
	const char *as;
};

static const struct replacement line_map[] = { { '\n', "\\n" }, { '\t', "\\t" }, { '\r', "\\r" }, { 0, NULL } };
static const struct replacement xml_map[] = {
	{ '&', "&amp;" },  { '<', "&lt;" },  { '>', "&gt;" },   { '"', "&quot;" }, { '\'', "&apos;" },
	{ '\n', "&#10;" }, { '\t', "&#9;" }, { '\r', "&#13;" }, { 0, NULL },
};
/* actions/toolkit packages/core/src/command.ts: escapeData, escapeProperty */
static const struct replacement github_data_map[] = {
	{ '%', "%25" }, { '\r', "%0D" }, { '\n', "%0A" }, { '\t', " " }, { 0, NULL },
};
static const struct replacement github_property_map[] = {
	{ ':', "%3A" }, { ',', "%2C" }, { '%', "%25" }, { '\r', "%0D" }, { '\n', "%0A" }, { '\t', " " }, { 0, NULL },
};
/* https://prometheus.io/docs/instrumenting/exposition_formats/ */
static const struct replacement prom_map[] = {
	{ '\\', "\\\\" }, { '"', "\\\"" }, { '\n', "\\n" }, { '\t', " " }, { 0, NULL },
};
static const struct replacement markdown_map[] = {
	{ '|', "\\|" },   { '<', "&lt;" }, { '>', "&gt;" }, { '&', "&amp;" },
	{ '\n', "<br>" }, { '\t', " " },   { 0, NULL },
};

static const struct replacement *const maps[] = {
	[ESCAPE_LINE] = line_map,
	[ESCAPE_XML] = xml_map,
	[ESCAPE_GITHUB_DATA] = github_data_map,
	[ESCAPE_GITHUB_PROPERTY] = github_property_map,
	[ESCAPE_PROM_LABEL] = prom_map,
	[ESCAPE_MARKDOWN_CELL] = markdown_map,
};

/* The target's own escape for an ASCII character; false when it has none. */
static bool add_special(struct strbuf *out, char c, enum escape_target t)
{
	for (const struct replacement *r = maps[t]; r->as; r++) {
		if (r->c == c) {
			sb_puts(out, r->as);
			return true;
		}
	}
	return false;
}

void escape_add_n(struct strbuf *out, const char *s, size_t n, enum escape_target target)
{
	if (!s)
		return;
	/* decode from a NUL-terminated copy: a sequence cut by n is invalid */
	char *copy = xstrndup(s, n);
	const unsigned char *p = (const unsigned char *)copy;
	while (*p) {
		uint32_t cp;
		size_t len = utf8_decode(p, &cp);
		if (len == 0) {
			sb_printf(out, "\\x%02x", (unsigned)*p);
			p++;
			continue;
		}
		if (len == 1 && add_special(out, (char)*p, target)) {
			p++;
			continue;
		}
		if (unsafe(cp))
			add_visible(out, cp);
		else
			sb_add(out, (const char *)p, len);
		p += len;
	}
	free(copy);
}

void escape_add(struct strbuf *out, const char *s, enum escape_target target)
{
	if (s)
		escape_add_n(out, s, strlen(s), target);
}

bool escape_needed(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	escape_add(&sb, s, ESCAPE_LINE);
	bool changed = strcmp(sb.buf, s ? s : "") != 0;
	sb_release(&sb);
	return changed;
}
