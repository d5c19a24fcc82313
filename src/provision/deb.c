#include "deb.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"

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

void deb_parse_control(const char *text, struct deb_control *c)
{
	const char *p = text;
	char **current = NULL;
	while (*p) {
		size_t len = strcspn(p, "\n");
		if (len == 0)
			break; /* the stanza ends */
		if ((*p == ' ' || *p == '\t') && current && *current) {
			char *joined = xasprintf("%s %.*s", *current, (int)len - 1, p + 1);
			free(*current);
			*current = joined;
		} else {
			const char *colon = memchr(p, ':', len);
			current = NULL;
			if (colon) {
				size_t nlen = (size_t)(colon - p);
				static const struct { const char *name; size_t off; } map[] = {
					{ "Package", offsetof(struct deb_control, package) },
					{ "Version", offsetof(struct deb_control, version) },
					{ "Architecture", offsetof(struct deb_control, architecture) },
					{ "Depends", offsetof(struct deb_control, depends) },
					{ "Pre-Depends", offsetof(struct deb_control, pre_depends) },
				};
				for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
					if (strlen(map[i].name) == nlen && strncasecmp(p, map[i].name, nlen) == 0) {
						current = (char **)((char *)c + map[i].off);
						const char *v = colon + 1;
						while (*v == ' ' || *v == '\t')
							v++;
						size_t vlen = (size_t)(p + len - v);
						while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\r'))
							vlen--;
						free(*current);
						*current = xstrndup(v, vlen);
					}
				}
			}
		}
		p += len;
		if (*p == '\n')
			p++;
	}
}

static int control_from_tar(const char *path, const char *member, struct strbuf *tar,
			    struct deb_control *out, char *err, size_t n)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	int rc = -1;
	if (archive_read_open_memory(a, tar->buf, tar->len) != ARCHIVE_OK) {
		snprintf(err, n, "%s: %s: %s", path, member, aerr(a));
		goto out;
	}
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (!name || (strcmp(name, "./control") != 0 && strcmp(name, "control") != 0))
			continue;
		struct strbuf text = STRBUF_INIT;
		if (read_entry(a, &text) < 0) {
			snprintf(err, n, "%s: %s: control: %s", path, member, aerr(a));
			sb_release(&text);
			goto out;
		}
		sb_add(&text, "", 0);
		text_sanitize(text.buf);
		deb_parse_control(text.buf, out);
		sb_release(&text);
		if (!out->package || !out->version || !out->architecture) {
			snprintf(err, n, "%s: control lacks %s", path,
				 !out->package ? "Package" : !out->version ? "Version" : "Architecture");
			goto out;
		}
		rc = 0;
		goto out;
	}
	if (r == ARCHIVE_EOF)
		snprintf(err, n, "%s: %s has no control file", path, member);
	else
		snprintf(err, n, "%s: %s: %s", path, member, aerr(a));
out:
	archive_read_free(a);
	return rc;
}

/* The outer ar archive, opened by the caller on a file or a buffer. */
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
				snprintf(err, n, "%s: not a Debian package (the first member is not debian-binary 2.x)", path);
				return -1;
			}
			continue;
		}
		if (!name || !str_starts_with(name, "control.tar"))
			continue;
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
	struct archive *a = ar_reader();
	return control_of_opened(a, archive_read_open_filename(a, path, 1 << 16), path, out, err, n);
}

int deb_read_control_memory(const void *data, size_t size, const char *label, struct deb_control *out,
			    char *err, size_t n)
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
	memset(c, 0, sizeof(*c));
}
