#include "deb.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/debversion.h"
#include "lib/safe_io.h"
#include "lib/util.h"

/* An entry's type is named by safe_kind_name, which reads S_IF* values:
 * libarchive's AE_IF* are those values (archive_entry.h defines them as the
 * same octal numbers). */
_Static_assert(AE_IFREG == S_IFREG && AE_IFLNK == S_IFLNK && AE_IFSOCK == S_IFSOCK && AE_IFCHR == S_IFCHR &&
		       AE_IFBLK == S_IFBLK && AE_IFDIR == S_IFDIR && AE_IFIFO == S_IFIFO,
	       "libarchive's file types are POSIX's");

#define MEMBER_LIMIT (64u << 20) /* control.tar is small; refuse a bomb */

static const char *aerr(struct archive *a)
{
	const char *e = archive_error_string(a);
	return e ? e : "unreadable archive";
}

static int read_entry(struct archive *a, struct strbuf *sb)
{
	char buf[65536];
	for (;;) {
		la_ssize_t n = archive_read_data(a, buf, sizeof(buf));
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (sb->len + (size_t)n > MEMBER_LIMIT)
			return -2;
		sb_add(sb, buf, (size_t)n);
	}
}

/* The fields gpugate keeps, and the name dpkg gives each. */
static char **field_slot(struct deb_control *c, const char *name, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
		{ "Package", offsetof(struct deb_control, package) },
		{ "Version", offsetof(struct deb_control, version) },
		{ "Architecture", offsetof(struct deb_control, architecture) },
		{ "Depends", offsetof(struct deb_control, depends) },
		{ "Pre-Depends", offsetof(struct deb_control, pre_depends) },
		{ "Provides", offsetof(struct deb_control, provides) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (strlen(map[i].name) == len && strncasecmp(name, map[i].name, len) == 0)
			return (char **)((char *)c + map[i].off);
	return NULL;
}

/* dpkg's pkg_name_is_illegal() (lib/dpkg/parsehelp.c): an alphanumeric
 * first, then letters, digits and "-+._". */
static bool package_name_ok(const char *name)
{
	if (!isalnum_ascii(name[0]))
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum_ascii(*p) && !strchr("-+._", *p))
			return false;
	return true;
}

static int control_error(char *err, size_t n, size_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int control_error(char *err, size_t n, size_t line, const char *fmt, ...)
{
	int used = line ? snprintf(err, n, "control line %zu: ", line) : snprintf(err, n, "control: ");
	if (used >= 0 && (size_t)used < n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err + used, n - (size_t)used, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int deb_parse_control(const char *text, size_t len, struct deb_control *c, char *err, size_t n)
{
	/* What dpkg-deb refuses in a binary package's control file (its
	 * parser, lib/dpkg/parse.c, as `dpkg-deb -f` shows in
	 * tests/integration/test_deb_control.py), gpugate refuses too: one
	 * stanza, "Name: value" lines and continuations, no field twice
	 * (names compare without case), a final newline. A NUL byte, which
	 * dpkg would cut the text at, is refused. */
	if (memchr(text, '\0', len))
		return control_error(err, n, 0, "holds a NUL byte");
	if (len == 0 || text[len - 1] != '\n')
		return control_error(err, n, 0, "no final newline (dpkg refuses it)");
	struct strbuf seen = STRBUF_INIT; /* "\n" + lowercase names + "\n" */
	sb_puts(&seen, "\n");
	char **current = NULL;
	const char *current_name = NULL;
	size_t current_len = 0;
	bool in_stanza = false, ended = false;
	int rc = 0;
	size_t line_no = 0;
	for (const char *p = text; p < text + len && rc == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t ll = (size_t)(nl - p);
		line_no++;
		if (ll && p[ll - 1] == '\r')
			ll--; /* dpkg reads CRLF lines */
		const char *line = p;
		p = nl + 1;
		if (ll == 0) {
			ended = in_stanza;
			continue;
		}
		if (ended) {
			rc = control_error(err, n, line_no, "a second stanza: dpkg allows one in a control file");
			break;
		}
		if (line[0] == ' ' || line[0] == '\t') {
			size_t i = 0;
			while (i < ll && (line[i] == ' ' || line[i] == '\t'))
				i++;
			if (!current_name)
				rc = control_error(err, n, line_no, "a continuation line before any field");
			else if (i == ll)
				rc = control_error(err, n, line_no, "a blank line in the value of %.*s",
						   (int)current_len, current_name);
			else if (current) {
				char *joined = xasprintf("%s\n%.*s", *current, (int)(ll - i), line + i);
				free(*current);
				*current = joined;
			}
			continue;
		}
		size_t name_len = 0;
		while (name_len < ll && line[name_len] != ':' && line[name_len] != ' ' && line[name_len] != '\t')
			name_len++;
		size_t colon = name_len;
		while (colon < ll && (line[colon] == ' ' || line[colon] == '\t'))
			colon++;
		if (colon == ll || line[colon] != ':') {
			rc = control_error(err, n, line_no, "field name '%.*s' is not followed by a colon",
					   (int)name_len, line);
			break;
		}
		if (name_len < 2) {
			rc = control_error(err, n, line_no, "field name '%.*s' is too short", (int)name_len, line);
			break;
		}
		char *lower = xstrndup(line, name_len);
		for (char *q = lower; *q; q++)
			*q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
		char *key = xasprintf("\n%s\n", lower);
		free(lower);
		bool dup = strstr(seen.buf, key) != NULL;
		sb_puts(&seen, key + 1);
		free(key);
		if (dup) {
			rc = control_error(err, n, line_no, "field %.*s appears twice (dpkg refuses a duplicate field)",
					   (int)name_len, line);
			break;
		}
		in_stanza = true;
		current_name = line;
		current_len = name_len;
		current = field_slot(c, line, name_len);
		if (current) {
			const char *v = line + colon + 1;
			while (v < line + ll && (*v == ' ' || *v == '\t'))
				v++;
			size_t vlen = (size_t)(line + ll - v);
			while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
				vlen--;
			free(*current);
			*current = xstrndup(v, vlen);
		}
	}
	sb_release(&seen);
	if (rc < 0)
		return rc;
	if (!c->package || !*c->package)
		return control_error(err, n, 0, "no Package field");
	if (!c->version || !*c->version)
		return control_error(err, n, 0, "no Version field");
	if (!c->architecture || !*c->architecture)
		return control_error(err, n, 0, "no Architecture field");
	for (char *q = c->package; *q; q++) /* dpkg lowercases the name */
		*q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
	if (!package_name_ok(c->package)) {
		text_sanitize(c->package);
		return control_error(err, n, 0, "'%.100s' is not a valid package name", c->package);
	}
	const char *why = debversion_invalid(c->version);
	if (why) {
		text_sanitize(c->version);
		return control_error(err, n, 0, "Version '%.100s': %s", c->version, why);
	}
	/* one line each in messages and manifests: continuations joined by a space */
	char **multi[] = { &c->depends, &c->pre_depends, &c->provides, &c->architecture };
	for (size_t i = 0; i < ARRAY_SIZE(multi); i++)
		for (char *q = *multi[i]; q && *q; q++)
			if (*q == '\n')
				*q = ' ';
	text_sanitize(c->architecture);
	return 0;
}

/* The member name as tar extracts it: "." and empty components dropped
 * ("./control", ".//control" and "control" are one file). NULL, with err
 * set, for a name dpkg-deb's tar refuses ("..") or one that would land
 * outside the folder if it were not cut ("/etc/x": refused here). */
static char *extracted_name(const char *path, const char *member, const char *name, char *err, size_t n)
{
	if (name[0] == '/') {
		snprintf(err, n, "%s: %s: member '%.200s' is absolute", path, member, name);
		return NULL;
	}
	struct strbuf out = STRBUF_INIT;
	for (const char *p = name; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			snprintf(err, n, "%s: %s: member '%.200s' climbs out with '..' (dpkg-deb refuses it)", path,
				 member, name);
			sb_release(&out);
			return NULL;
		}
		if (len && !(len == 1 && p[0] == '.')) {
			if (out.len)
				sb_add(&out, "/", 1);
			sb_add(&out, p, len);
		}
		p += len;
		while (*p == '/')
			p++;
	}
	return sb_detach(&out);
}

/* Exactly one member named control, a regular file; every member's name
 * checked (dpkg-deb extracts them all). */
static int control_from_tar(const char *path, const char *member, struct strbuf *tar, struct deb_control *out,
			    char *err, size_t n)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	int rc = -1;
	struct strbuf text = STRBUF_INIT;
	char *first_name = NULL;
	if (archive_read_open_memory(a, tar->buf, tar->len) != ARCHIVE_OK) {
		snprintf(err, n, "%s: %s: %s", path, member, aerr(a));
		goto out;
	}
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *raw = archive_entry_pathname(e);
		char *name = extracted_name(path, member, raw ? raw : "", err, n);
		if (!name)
			goto out;
		bool is_control = strcmp(name, "control") == 0;
		free(name);
		if (!is_control)
			continue;
		if (first_name) {
			snprintf(err, n,
				 "%s: %s: two control members ('%.100s' and '%.100s'): dpkg would read the last, "
				 "gpugate refuses to guess",
				 path, member, first_name, raw);
			goto out;
		}
		first_name = xstrdup(raw);
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e)) {
			snprintf(err, n, "%s: %s: control is %s, not a regular file (dpkg-deb would follow it)", path,
				 member,
				 archive_entry_hardlink(e) ? "a hard link" : safe_kind_name(archive_entry_filetype(e)));
			goto out;
		}
		int rr = read_entry(a, &text);
		if (rr < 0) {
			snprintf(err, n, "%s: %s: control: %s", path, member,
				 rr == -2 ? "larger than 64 MiB" : aerr(a));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		snprintf(err, n, "%s: %s: %s", path, member, aerr(a));
		goto out;
	}
	if (!first_name) {
		snprintf(err, n, "%s: %s has no control file", path, member);
		goto out;
	}
	char why[300];
	if (deb_parse_control(text.buf, text.len, out, why, sizeof(why)) < 0) {
		snprintf(err, n, "%s: %s", path, why);
		goto out;
	}
	rc = 0;
out:
	free(first_name);
	sb_release(&text);
	archive_read_free(a);
	return rc;
}

/* dpkg-deb's reading of the outer ar archive (dpkg-deb/extract.c): the first
 * member is debian-binary 2.x; members whose names start with '_' are
 * skipped; the next one must be control.tar, uncompressed or .gz, .xz or
 * .zst (anything else there, data.tar too, is refused); the first
 * control.tar is the one read. */
static int control_from_ar(struct archive *a, const char *path, struct deb_control *out, char *err, size_t n)
{
	struct archive_entry *e;
	int r, index = 0;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (index++ == 0) {
			struct strbuf magic = STRBUF_INIT;
			bool ok = name && strcmp(name, "debian-binary") == 0 && read_entry(a, &magic) == 0 &&
				  magic.len >= 4 && memcmp(magic.buf, "2.", 2) == 0;
			sb_release(&magic);
			if (!ok) {
				snprintf(err, n, "%s: not a Debian package (the first member is not debian-binary 2.x)",
					 path);
				return -1;
			}
			continue;
		}
		if (name && name[0] == '_')
			continue;
		static const char *const controls[] = { "control.tar", "control.tar.gz", "control.tar.xz",
							"control.tar.zst" };
		bool known = false;
		for (size_t i = 0; name && i < ARRAY_SIZE(controls); i++)
			known |= strcmp(name, controls[i]) == 0;
		if (!known) {
			char shown[80];
			snprintf(shown, sizeof(shown), "%s", name ? name : "");
			text_sanitize(shown);
			snprintf(err, n, "%s: member '%s' where control.tar belongs (dpkg-deb refuses it%s)", path,
				 shown, name && str_starts_with(name, "control.tar") ? ": unknown compression" : "");
			return -1;
		}
		struct strbuf tar = STRBUF_INIT;
		int rr = read_entry(a, &tar);
		if (rr < 0) {
			snprintf(err, n, "%s: %s: %s", path, name, rr == -2 ? "larger than 64 MiB" : aerr(a));
			sb_release(&tar);
			return -1;
		}
		int rc = control_from_tar(path, name, &tar, out, err, n);
		sb_release(&tar);
		return rc;
	}
	if (r == ARCHIVE_EOF)
		snprintf(err, n, "%s: no control.tar member", path);
	else
		snprintf(err, n, "%s: %s", path, aerr(a));
	return -1;
}

/* A reader of ar archives, for the .deb's outer layer. */
static struct archive *ar_reader(void)
{
	struct archive *a = archive_read_new();
	archive_read_support_format_ar(a);
	return a;
}

/* The control of the .deb that a was opened on (opened: the open call's
 * answer); frees a, and out on failure. */
static int control_of_opened(struct archive *a, int opened, const char *label, struct deb_control *out, char *err,
			     size_t n)
{
	int rc = -1;
	if (opened != ARCHIVE_OK)
		snprintf(err, n, "%s: %s", label, aerr(a));
	else
		rc = control_from_ar(a, label, out, err, n);
	archive_read_free(a);
	if (rc < 0)
		deb_control_free(out);
	return rc;
}

int deb_read_control(const char *path, struct deb_control *out, char *err, size_t n)
{
	memset(out, 0, sizeof(*out));
	/* a FIFO or /dev/zero in the folder is refused before libarchive reads
	 * a byte (lib/safe_io.h) */
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG, 0, &st, err, n);
	if (fd < 0)
		return -1;
	struct archive *a = ar_reader();
	int rc = control_of_opened(a, archive_read_open_fd(a, fd, 1 << 16), path, out, err, n);
	close(fd);
	return rc;
}

int deb_read_control_memory(const void *data, size_t size, const char *label, struct deb_control *out, char *err,
			    size_t n)
{
	memset(out, 0, sizeof(*out));
	struct archive *a = ar_reader();
	return control_of_opened(a, archive_read_open_memory(a, data, size), label, out, err, n);
}

void deb_control_free(struct deb_control *c)
{
	free(c->package);
	free(c->version);
	free(c->architecture);
	free(c->depends);
	free(c->pre_depends);
	free(c->provides);
	memset(c, 0, sizeof(*c));
}
