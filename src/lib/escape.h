/* The one escaping helper for text that came from outside (file names, env
 * values, package fields, driver strings) on its way to a terminal, a
 * report file or a CI system. Whatever the target, nothing that a reader
 * would take as structure passes raw:
 *   - no terminal control: C0 controls, DEL, C1 controls (ESC starts ANSI
 *     sequences; CSI is also U+009B), never raw;
 *   - no forged lines: a newline inside a one-line field (a check's summary,
 *     a JUnit attribute, a GitHub annotation) is written as the target's
 *     escape, never as a line break; U+2028/U+2029 likewise;
 *   - no bidi overrides (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
 *     U+061C: "Trojan Source", CVE-2021-42574) that reorder what is shown;
 *   - XML 1.0 never gets a character its Char production forbids (most C0
 *     controls, U+FFFE, U+FFFF; https://www.w3.org/TR/xml/#charsets);
 *   - invalid UTF-8 never reaches a UTF-8 document.
 * Such a character is written visibly instead: \xNN for a byte, \u{XXXX}
 * for a code point, so that a reader sees that something odd was there. */
#ifndef GPUGATE_ESCAPE_H
#define GPUGATE_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum escape_target {
	ESCAPE_LINE,            /* one terminal/text line: newline and tab shown as \n, \t */
	ESCAPE_XML,             /* XML 1.0 text or attribute value (newline as &#10;) */
	ESCAPE_GITHUB_DATA,     /* a GitHub workflow command's message (%, CR, LF as %25 %0D %0A) */
	ESCAPE_GITHUB_PROPERTY, /* a workflow command property, such as title= (also : and ,) */
	ESCAPE_PROM_LABEL,      /* a Prometheus label value (\\, \", \n) */
	ESCAPE_MARKDOWN_CELL,   /* a cell of a GitHub Markdown table (| and < escaped, newline as <br>) */
};

/* Appends s to out, escaped for target. s may be NULL (nothing appended). */
void escape_add(struct strbuf *out, const char *s, enum escape_target target);
/* The same for the first n bytes of s. */
void escape_add_n(struct strbuf *out, const char *s, size_t n, enum escape_target target);
/* True when escape_add(.., ESCAPE_LINE) would change s. */
bool escape_needed(const char *s);
/* s escaped for ESCAPE_LINE, as a new string (caller frees; "" for NULL):
 * for printf of a name, a path or a message into a line of text or stderr. */
char *escape_line(const char *s);
/* True for a code point no target gets raw (the list at the top). */
bool escape_unsafe(uint32_t cp);

/* A YAML scalar (YAML 1.2) that reads back as exactly s: plain when s is a
 * simple word that no YAML reader takes for something else, else
 * double-quoted, with every character outside printable ASCII written as a
 * \xNN, \uXXXX or \UXXXXXXXX escape (so no line break, comment or key can
 * come out of it). A byte that is not UTF-8 is written \xNN (U+00NN when read
 * back: the value then differs, visibly). The one quoting of YAML output. */
void escape_yaml_scalar(struct strbuf *out, const char *s);
/* A YAML comment's text: s on one line (ESCAPE_LINE), so that it cannot end
 * the comment and start a key. The caller writes the "# ". */
void escape_yaml_comment(struct strbuf *out, const char *s);

/* A JSON document as jansson wrote it (valid UTF-8, controls already
 * escaped), with every unsafe code point (DEL, C1 controls, bidi controls,
 * U+2028/U+2029) turned into its \uXXXX escape: such a character can only be
 * inside a string there, so the document parses to the same value. */
void escape_json_document(struct strbuf *out, const char *json);

#endif
