#include "escape.h"

#include <stdlib.h>
#include <string.h>

size_t escape_utf8_decode(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1F; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0F; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07; min = 0x10000; }
	else return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80) /* also stops at the NUL */
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

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

/* The target's own escape for an ASCII character; false when it has none. */
static bool add_special(struct strbuf *out, char c, enum escape_target t)
{
	switch (t) {
	case ESCAPE_LINE:
		if (c == '\n') { sb_puts(out, "\\n"); return true; }
		if (c == '\t') { sb_puts(out, "\\t"); return true; }
		if (c == '\r') { sb_puts(out, "\\r"); return true; }
		return false;
	case ESCAPE_XML:
		switch (c) {
		case '&': sb_puts(out, "&amp;"); return true;
		case '<': sb_puts(out, "&lt;"); return true;
		case '>': sb_puts(out, "&gt;"); return true;
		case '"': sb_puts(out, "&quot;"); return true;
		case '\'': sb_puts(out, "&apos;"); return true;
		case '\n': sb_puts(out, "&#10;"); return true;
		case '\t': sb_puts(out, "&#9;"); return true;
		case '\r': sb_puts(out, "&#13;"); return true;
		}
		return false;
	case ESCAPE_GITHUB_PROPERTY:
		if (c == ':') { sb_puts(out, "%3A"); return true; }
		if (c == ',') { sb_puts(out, "%2C"); return true; }
		/* the data escapes apply too */
		__attribute__((fallthrough));
	case ESCAPE_GITHUB_DATA:
		/* actions/toolkit packages/core/src/command.ts escapeData/escapeProperty */
		if (c == '%') { sb_puts(out, "%25"); return true; }
		if (c == '\r') { sb_puts(out, "%0D"); return true; }
		if (c == '\n') { sb_puts(out, "%0A"); return true; }
		if (c == '\t') { sb_puts(out, " "); return true; }
		return false;
	case ESCAPE_PROM_LABEL:
		/* https://prometheus.io/docs/instrumenting/exposition_formats/ */
		if (c == '\\') { sb_puts(out, "\\\\"); return true; }
		if (c == '"') { sb_puts(out, "\\\""); return true; }
		if (c == '\n') { sb_puts(out, "\\n"); return true; }
		if (c == '\t') { sb_puts(out, " "); return true; }
		return false;
	case ESCAPE_MARKDOWN_CELL:
		if (c == '|') { sb_puts(out, "\\|"); return true; }
		if (c == '<') { sb_puts(out, "&lt;"); return true; }
		if (c == '>') { sb_puts(out, "&gt;"); return true; }
		if (c == '&') { sb_puts(out, "&amp;"); return true; }
		if (c == '\n') { sb_puts(out, "<br>"); return true; }
		if (c == '\t') { sb_puts(out, " "); return true; }
		return false;
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
		size_t len = escape_utf8_decode(p, &cp);
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
	bool changed = strcmp(sb.buf ? sb.buf : "", s ? s : "") != 0;
	sb_release(&sb);
	return changed;
}
