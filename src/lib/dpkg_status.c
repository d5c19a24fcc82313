#include "dpkg_status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

struct stanza {
	const char *name, *arch, *version, *status;
	size_t name_len, arch_len, version_len, status_len;
	size_t line;
	bool any;
};

static bool wanted_name(const char *const *wanted, const char *name)
{
	if (!wanted)
		return true;
	for (; *wanted; wanted++)
		if (strcmp(*wanted, name) == 0)
			return true;
	return false;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return xstrndup(s, n);
}

/* Status is "want flag state"; the state is the third word. */
static int status_state(const char *path, const struct stanza *s, const char *name, char **state,
			char *err, size_t size)
{
	if (!s->status) {
		*state = xstrdup("");
		return 0;
	}
	char *st = trimmed(s->status, s->status_len);
	char *words[4] = { NULL, NULL, NULL, NULL };
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(st, " \t", &save); tok && n < 4; tok = strtok_r(NULL, " \t", &save))
		words[n++] = tok;
	if (n != 3) {
		snprintf(err, size, "%s:%zu: Status of %s should have three words (want flag state), has '%.*s'",
			 path, s->line, name, (int)(s->status_len > 80 ? 80 : s->status_len), s->status);
		free(st);
		return -1;
	}
	*state = xstrdup(words[2]);
	free(st);
	return 0;
}

static int finish(const char *path, struct stanza *s, const char *const *wanted,
		  struct dpkg_status *out, char *err, size_t size)
{
	if (!s->any)
		return 0;
	if (!s->name) {
		snprintf(err, size, "%s:%zu: stanza has no Package field", path, s->line);
		return -1;
	}
	char *name = trimmed(s->name, s->name_len);
	if (!*name) {
		snprintf(err, size, "%s:%zu: empty Package field", path, s->line);
		free(name);
		return -1;
	}
	if (strcmp(name, "dpkg") == 0 && s->arch && !out->native_arch)
		out->native_arch = trimmed(s->arch, s->arch_len);
	if (!wanted_name(wanted, name)) {
		free(name);
		return 0;
	}
	char *state;
	if (status_state(path, s, name, &state, err, size) < 0) {
		free(name);
		return -1;
	}
	out->pkgs = xrealloc(out->pkgs, (out->count + 1) * sizeof(*out->pkgs));
	struct dpkg_pkg *p = &out->pkgs[out->count++];
	p->name = name;
	p->arch = s->arch ? trimmed(s->arch, s->arch_len) : xstrdup("");
	p->version = s->version ? trimmed(s->version, s->version_len) : xstrdup("");
	p->state = state;
	p->line = s->line;
	return 0;
}

int dpkg_status_parse(const char *path, const char *content, size_t len, const char *const *wanted,
		      struct dpkg_status *out, char *err, size_t err_size)
{
	static const char *const fields[] = { "Package", "Architecture", "Version", "Status" };
	memset(out, 0, sizeof(*out));
	struct stanza s;
	memset(&s, 0, sizeof(s));
	const char *p = content, *end = content + len;
	size_t line = 0;
	bool in_field = false; /* a continuation line needs a field before it */
	int rc = 0;
	while (rc == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p);
		line++;
		if (n && p[n - 1] == '\r')
			n--; /* CRLF, as a file edited on Windows has */
		bool blank = true;
		for (size_t i = 0; i < n && blank; i++)
			blank = p[i] == ' ' || p[i] == '\t';
		if (memchr(p, '\0', n)) {
			snprintf(err, err_size, "%s:%zu: NUL byte in the status file (corrupt?)", path, line);
			rc = -1;
		} else if (blank) {
			rc = finish(path, &s, wanted, out, err, err_size);
			memset(&s, 0, sizeof(s));
			in_field = false;
		} else if (p[0] == ' ' || p[0] == '\t') {
			if (!in_field) {
				snprintf(err, err_size, "%s:%zu: continuation line outside a field", path, line);
				rc = -1;
			}
		} else {
			const char *colon = memchr(p, ':', n);
			if (!colon || colon == p) {
				snprintf(err, err_size, "%s:%zu: malformed line (expected 'Field: value'): '%.*s'",
					 path, line, (int)(n > 60 ? 60 : n), p);
				rc = -1;
				break;
			}
			if (!s.any) {
				s.any = true;
				s.line = line;
			}
			size_t fl = (size_t)(colon - p);
			const char *v = colon + 1;
			size_t vl = (size_t)(p + n - v);
			const char **values[] = { &s.name, &s.arch, &s.version, &s.status };
			size_t *lens[] = { &s.name_len, &s.arch_len, &s.version_len, &s.status_len };
			for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
				if (fl == strlen(fields[i]) && strncasecmp(p, fields[i], fl) == 0) {
					*values[i] = v;
					*lens[i] = vl;
				}
			}
			in_field = true;
		}
		p = nl ? nl + 1 : end;
	}
	if (rc == 0)
		rc = finish(path, &s, wanted, out, err, err_size);
	if (rc < 0)
		dpkg_status_free(out);
	return rc;
}

int dpkg_status_load(const char *path, const char *const *wanted, struct dpkg_status *out,
		     char *err, size_t err_size)
{
	char *content;
	size_t len;
	int rc = read_file(path, &content, &len);
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		snprintf(err, err_size, "%s: %s", path, strerror(-rc));
		return -2;
	}
	rc = dpkg_status_parse(path, content, len, wanted, out, err, err_size);
	free(content);
	return rc;
}

void dpkg_status_free(struct dpkg_status *st)
{
	for (size_t i = 0; i < st->count; i++) {
		free(st->pkgs[i].name);
		free(st->pkgs[i].arch);
		free(st->pkgs[i].version);
		free(st->pkgs[i].state);
	}
	free(st->pkgs);
	free(st->native_arch);
	memset(st, 0, sizeof(*st));
}

bool dpkg_pkg_installed(const struct dpkg_pkg *p)
{
	return strcmp(p->state, "installed") == 0;
}
