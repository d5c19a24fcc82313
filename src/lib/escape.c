#include "escape.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Characters no target gets raw (see escape.h). Tab and newline are the
 * targets' business: they have a proper escape in each. */
bool escape_unsafe(uint32_t cp)
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

/* The ASCII characters the target has an escape of its own for, as a
 * 128-bit set: one bit test per character of a run instead of a walk of
 * the target's map (the text report passes every summary through here). */
struct ascii_set {
	uint64_t bits[2];
};

static struct ascii_set special_set(enum escape_target t)
{
	struct ascii_set set = { { 0, 0 } };
	for (const struct replacement *r = maps[t]; r->as; r++)
		set.bits[(unsigned char)r->c >> 6] |= (uint64_t)1 << ((unsigned char)r->c & 63);
	return set;
}

static bool in_set(const struct ascii_set *set, unsigned char c)
{
	return c < 0x80 && (set->bits[c >> 6] >> (c & 63) & 1);
}

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

/* Escapes the NUL-terminated text s. */
static void escape_text(struct strbuf *out, const char *s, enum escape_target target)
{
	struct ascii_set special = special_set(target);
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		/* a run of printable ASCII the target leaves alone: one copy */
		const unsigned char *run = p;
		while (*p >= 0x20 && *p < 0x7f && !in_set(&special, *p))
			p++;
		if (p > run) {
			sb_add(out, (const char *)run, (size_t)(p - run));
			continue;
		}
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
		if (escape_unsafe(cp))
			add_visible(out, cp);
		else
			sb_add(out, (const char *)p, len);
		p += len;
	}
}

void escape_add_n(struct strbuf *out, const char *s, size_t n, enum escape_target target)
{
	if (!s)
		return;
	/* decode from a NUL-terminated copy: a sequence cut by n is invalid */
	char *copy = xstrndup(s, n);
	escape_text(out, copy, target);
	free(copy);
}

void escape_add(struct strbuf *out, const char *s, enum escape_target target)
{
	if (s)
		escape_text(out, s, target); /* already ends at its NUL: no copy */
}

bool escape_needed(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	escape_add(&sb, s, ESCAPE_LINE);
	bool changed = strcmp(sb.buf, s ? s : "") != 0;
	sb_release(&sb);
	return changed;
}

char *escape_line(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	sb_puts(&sb, "");
	escape_add(&sb, s, ESCAPE_LINE);
	return sb_detach(&sb);
}

/* Plain YAML 1.2 scalars that read back as a string equal to themselves:
 * a letter or digit first, printable ASCII, none of the sequences that end
 * or comment a plain scalar (7.3.3), and none of YAML 1.1's booleans and
 * nulls (libyaml and PyYAML still read those as such). */
static bool yaml_plain_ok(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n" };
	size_t n = strlen(s);
	if (!n || !isalnum_ascii(s[0]) || s[n - 1] == ' ' || s[n - 1] == ':' || strstr(s, ": ") || strstr(s, " #"))
		return false;
	for (const char *p = s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return false;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcasecmp(s, words[i]) == 0)
			return false;
	return true;
}

void escape_yaml_scalar(struct strbuf *out, const char *s)
{
	if (!s)
		s = "";
	if (yaml_plain_ok(s)) {
		sb_puts(out, s);
		return;
	}
	sb_puts(out, "\"");
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_decode(p, &cp);
		if (n == 0) {
			sb_printf(out, "\\x%02x", (unsigned)*p++);
			continue;
		}
		if (cp == '"' || cp == '\\')
			sb_printf(out, "\\%c", (char)cp);
		else if (cp >= 0x20 && cp < 0x7f)
			sb_add(out, (const char *)p, 1);
		else if (cp < 0x100)
			sb_printf(out, "\\x%02x", (unsigned)cp);
		else if (cp < 0x10000)
			sb_printf(out, "\\u%04x", (unsigned)cp);
		else
			sb_printf(out, "\\U%08x", (unsigned)cp);
		p += n;
	}
	sb_puts(out, "\"");
}

void escape_yaml_comment(struct strbuf *out, const char *s)
{
	escape_add(out, s, ESCAPE_LINE);
}

void escape_json_document(struct strbuf *out, const char *json)
{
	const unsigned char *p = (const unsigned char *)json;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_decode(p, &cp);
		if (n == 0) { /* jansson writes none; kept as it is rather than guessed at */
			sb_add(out, (const char *)p++, 1);
			continue;
		}
		if (n > 1 && escape_unsafe(cp))
			sb_printf(out, "\\u%04x", (unsigned)cp); /* all are in the BMP */
		else if (cp == 0x7f)
			sb_puts(out, "\\u007f");
		else
			sb_add(out, (const char *)p, n);
		p += n;
	}
}
