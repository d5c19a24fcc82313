#include "dpkg_status.h"

#include "safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct stanza {
	const char *name, *arch, *version, *status, *multiarch, *provides;
	size_t name_len, arch_len, version_len, status_len, multiarch_len, provides_len;
	size_t line;       /* where the stanza starts */
	const char *start; /* its first line */
	bool any;
};

/* Package names in a Provides value ("a (= 1), b:any, c"): each item's name
 * is its first word, up to a blank, ':' or '(' (dpkg's f_dependency() in
 * lib/dpkg/fields.c). */
bool dpkg_provides_names(const char *v, size_t n, const char *name)
{
	size_t want = strlen(name);
	const char *end = v + n;
	while (v < end) {
		while (v < end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r' || *v == ','))
			v++;
		const char *w = v;
		while (v < end && *v != ' ' && *v != '\t' && *v != '\n' && *v != '\r' && *v != ':' && *v != '(' &&
		       *v != ',')
			v++;
		if ((size_t)(v - w) == want && want && memcmp(w, name, want) == 0)
			return true;
		while (v < end && *v != ',')
			v++;
	}
	return false;
}

/* Does a Provides value name a wanted package? */
static bool provides_wanted(const char *const *wanted, const char *v, size_t n)
{
	for (; wanted && *wanted; wanted++)
		if (dpkg_provides_names(v, n, *wanted))
			return true;
	return false;
}

/* Is the package named by the value of a Package field wanted? "dpkg" always
 * is: its Architecture is the native one. */
static bool stanza_wanted(const char *const *wanted, const char *v, size_t n)
{
	while (n && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 4 && memcmp(v, "dpkg", 4) == 0)
		return true;
	for (; *wanted; wanted++)
		if (strlen(*wanted) == n && memcmp(*wanted, v, n) == 0)
			return true;
	return false;
}

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

/* Line number of offset, counted only when one is reported. */
static size_t line_of(const char *content, const char *at)
{
	size_t line = 1;
	for (const char *p = content; p < at; p++)
		line += *p == '\n';
	return line;
}

static bool is_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t')
			return false;
	return true;
}

/* Status is "want flag state"; the state is the third word. */
static int status_state(const char *path, const struct stanza *s, const char *name, char **state, char *err,
			size_t size)
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
		size_t line_no = s->line;
		snprintf(err, size, "%s:%zu: Status of %s should have three words (want flag state), has '%.*s'", path,
			 line_no, name, (int)(s->status_len > 80 ? 80 : s->status_len), s->status);
		free(st);
		return -1;
	}
	*state = xstrdup(words[2]);
	free(st);
	return 0;
}

static int finish(const char *path, struct stanza *s, const char *const *wanted, struct dpkg_status *out, char *err,
		  size_t size)
{
	if (!s->any)
		return 0;
	if (!s->name) {
		snprintf(err, size, "%s:%zu: stanza has no Package field", path, s->line);
		return -1;
	}
	char *name = trimmed(s->name, s->name_len);
	bool provider = s->provides && provides_wanted(wanted, s->provides, s->provides_len);
	if (!*name) {
		snprintf(err, size, "%s:%zu: empty Package field", path, s->line);
		free(name);
		return -1;
	}
	if (strcmp(name, "dpkg") == 0 && s->arch && !out->native_arch)
		out->native_arch = trimmed(s->arch, s->arch_len);
	if (!wanted_name(wanted, name) && !provider) {
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
	p->multiarch = s->multiarch ? trimmed(s->multiarch, s->multiarch_len) : xstrdup("");
	p->provides = s->provides ? trimmed(s->provides, s->provides_len) : xstrdup("");
	p->line = s->line;
	return 0;
}

/* Whether the line at p (up to its newline or end) ends a stanza: empty or
 * only blanks, one CR before the newline allowed. The same rule as the
 * parse loop's "n == 0 || blank" after it drops a trailing CR. */
static bool blank_line(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '\r')
		p++;
	return p == end || *p == '\n';
}

/* Set bits, without the POPCNT instruction (not in the x86-64 baseline that
 * Debian builds for) or libgcc's table loop (a sixth of the parse). */
static inline unsigned popcount32(uint32_t x)
{
	x -= (x >> 1) & 0x55555555u;
	x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
	x = (x + (x >> 4)) & 0x0f0f0f0fu;
	return (x * 0x01010101u) >> 24;
}

/* The start of the first line at or after p that ends the stanza (or end),
 * adding the newlines passed to *line; or, with *nul set, the first NUL byte
 * on the way (the file is looked at once, so the NUL check rides along). Stanzas of packages nobody asked for
 * are most of a status file (~20,000 lines, mostly descriptions): this looks
 * at 16 bytes at a time and stops only where a newline is followed by what
 * could start a blank line (newline, CR, or a blank then a blank, CR or
 * newline), instead of one memchr call per line. */
static const char *skip_stanza_scan(const char *p, const char *end, size_t *line, bool *nul, const char **provides);

/* skip_stanza_scan, and *provides set to the start of the skipped text's
 * first "Provides:" line (NULL when none): a package nobody named may still
 * provide a wanted name. Found on the way, from the bytes after each
 * newline the scan already looks at. */
static const char *skip_stanza(const char *p, const char *end, size_t *line, bool *nul, const char **provides)
{
	*provides = end - p >= 9 && memcmp(p, "Provides:", 9) == 0 ? p : NULL;
	const char *stop = skip_stanza_scan(p, end, line, nul, provides);
	if (*provides && *provides >= stop)
		*provides = NULL; /* the next stanza's */
	return stop;
}

static void note_provides(const char *at, const char *end, const char **provides)
{
	if (!*provides && end - at >= 9 && memcmp(at, "Provides:", 9) == 0)
		*provides = at;
}

static const char *skip_stanza_scan(const char *p, const char *end, size_t *line, bool *nul, const char **provides)
{
	if (blank_line(p, end))
		return p;
	size_t lines = 0;
	const char *q = p;
#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
	const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), zero = _mm_setzero_si128();
	const __m128i big_p = _mm_set1_epi8('P');
	while (end - q >= 18) { /* the loads below read q[0..17] */
		__m128i b0 = _mm_loadu_si128((const __m128i *)(const void *)q);
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(b0, zero)))
			break; /* a NUL: the byte loop below finds which comes first */
		unsigned nls = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b0, nl));
		if (nls) {
			__m128i b1 = _mm_loadu_si128((const __m128i *)(const void *)(q + 1));
			__m128i b2 = _mm_loadu_si128((const __m128i *)(const void *)(q + 2));
			__m128i ends = _mm_or_si128(_mm_cmpeq_epi8(b1, nl), _mm_cmpeq_epi8(b1, cr));
			__m128i blank1 = _mm_or_si128(_mm_cmpeq_epi8(b1, sp), _mm_cmpeq_epi8(b1, tab));
			__m128i blank2 = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b2, sp), _mm_cmpeq_epi8(b2, tab)),
						      _mm_or_si128(_mm_cmpeq_epi8(b2, nl), _mm_cmpeq_epi8(b2, cr)));
			if (!*provides) {
				unsigned ps = nls & (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b1, big_p));
				for (; ps && !*provides; ps &= ps - 1)
					note_provides(q + __builtin_ctz(ps) + 1, end, provides);
			}
			unsigned cand =
				nls & (unsigned)_mm_movemask_epi8(_mm_or_si128(ends, _mm_and_si128(blank1, blank2)));
			for (; cand; cand &= cand - 1) {
				unsigned bit = (unsigned)__builtin_ctz(cand);
				if (blank_line(q + bit + 1, end)) {
					*line += lines + popcount32(nls & ((2u << bit) - 1));
					return q + bit + 1;
				}
			}
			lines += popcount32(nls);
		}
		q += 16;
	}
#endif
	for (; q < end; q++) {
		if (*q == '\0') {
			*nul = true;
			*line += lines;
			return q;
		}
		if (*q != '\n')
			continue;
		lines++;
		note_provides(q + 1, end, provides);
		if (blank_line(q + 1, end)) {
			*line += lines;
			return q + 1;
		}
	}
	*line += lines;
	return end;
}

/* What a parse carries from one region of the file to the next. */
struct parser {
	const char *path;
	const char *const *wanted;
	struct dpkg_status *out;
	size_t line; /* lines before the region */
	char *err;
	size_t err_size;
};

/* The parse of one region: whole stanzas (it ends after a blank line) or the
 * rest of the file. Line numbers continue from ps->line. */
static int parse_region(struct parser *ps, const char *content, size_t len)
{
#define FIELD(name)                    \
	{                              \
		name, sizeof(name) - 1 \
	}
	static const struct {
		const char *name;
		size_t len;
	} fields[] = { FIELD("Package"), FIELD("Architecture"), FIELD("Version"),
		       FIELD("Status"),  FIELD("Multi-Arch"),   FIELD("Provides") };
#undef FIELD
	const char *path = ps->path;
	const char *const *wanted = ps->wanted;
	struct dpkg_status *out = ps->out;
	char *err = ps->err;
	size_t err_size = ps->err_size;
	struct stanza s;
	memset(&s, 0, sizeof(s));
	const char *p = content, *end = content + len;
	bool in_field = false; /* a continuation line needs a field before it */
	bool skipping = false; /* inside a stanza of a package nobody asked for */
	bool keep = false;     /* this stanza is read whole: it provides a wanted name */
	int rc = 0;
	size_t line = ps->line;
	while (rc == 0 && p < end) {
		if (skipping) {
			bool nul = false;
			const char *from = s.start;
			size_t from_line = s.line;
			const char *prov;
			p = skip_stanza(p, end, &line, &nul, &prov); /* to the blank line that ends it */
			/* A package nobody named may still provide a wanted name:
			 * rare enough (a few stanzas in a hundred) to read such a
			 * stanza again, whole. */
			if (prov && !nul) {
				const char *v = prov + 9;
				const char *vend = v;
				while (vend < p &&
				       (*vend != '\n' || (vend + 1 < p && (vend[1] == ' ' || vend[1] == '\t'))))
					vend++;
				if (provides_wanted(wanted, v, (size_t)(vend - v))) {
					p = from;
					line = from_line - 1;
					memset(&s, 0, sizeof(s));
					skipping = false;
					keep = true;
					continue;
				}
			}
			if (nul) {
				snprintf(err, err_size, "%s:%zu: NUL byte in the status file (corrupt?)", path,
					 ps->line + line_of(content, p));
				rc = -1;
				break;
			}
			if (p == end)
				break;
		}
		line++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if (memchr(p, '\0', (size_t)(eol - p))) {
			snprintf(err, err_size, "%s:%zu: NUL byte in the status file (corrupt?)", path, line);
			rc = -1;
			break;
		}
		size_t n = (size_t)(eol - p);
		if (n && p[n - 1] == '\r')
			n--; /* CRLF, as a file edited on Windows has */
		if (n == 0 || ((p[0] == ' ' || p[0] == '\t') && is_blank(p, n))) {
			if (!skipping)
				rc = finish(path, &s, wanted, out, err, err_size);
			memset(&s, 0, sizeof(s));
			in_field = skipping = keep = false;
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
				s.start = p;
			}
			size_t fl = (size_t)(colon - p);
			const char *v = colon + 1;
			size_t vl = (size_t)(p + n - v);
			const char **values[] = { &s.name, &s.arch, &s.version, &s.status, &s.multiarch, &s.provides };
			size_t *lens[] = { &s.name_len,   &s.arch_len,      &s.version_len,
					   &s.status_len, &s.multiarch_len, &s.provides_len };
			for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
				if (fl == fields[i].len && strncasecmp(p, fields[i].name, fl) == 0) {
					*values[i] = v;
					*lens[i] = vl;
				}
			}
			if (s.name == v && wanted && !keep && !stanza_wanted(wanted, v, vl) &&
			    !(s.provides && provides_wanted(wanted, s.provides, s.provides_len)))
				skipping = true;
			in_field = true;
		}
		p = nl ? nl + 1 : end;
	}
	if (rc == 0 && !skipping)
		rc = finish(path, &s, wanted, out, err, err_size);
	ps->line = line;
	return rc;
}

int dpkg_status_parse(const char *path, const char *content, size_t len, const char *const *wanted,
		      struct dpkg_status *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	struct parser ps = { path, wanted, out, 0, err, err_size };
	int rc = parse_region(&ps, content, len);
	if (rc < 0)
		dpkg_status_free(out);
	return rc;
}

/* Where the whole stanzas in buf[0..len) end: just after its last blank
 * line (the parser's rule, blank_line()), or 0 when it has none. */
static size_t stanzas_end(const char *buf, size_t len)
{
	const char *end = buf + len;
	for (const char *nl = memrchr(buf, '\n', len); nl;) {
		const char *prev = nl > buf ? memrchr(buf, '\n', (size_t)(nl - buf)) : NULL;
		if (blank_line(prev ? prev + 1 : buf, end))
			return (size_t)(nl + 1 - buf);
		nl = prev;
	}
	return 0;
}

int dpkg_status_load_buffered(const char *path, const char *const *wanted, size_t buffer_size, struct dpkg_status *out,
			      char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	/* non-blocking, a regular file, a size cap (lib/safe_io.h): a FIFO or
	 * /dev/zero planted as the status file is an error at once */
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG, SAFE_MAX_STATUS, &st, err, err_size);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? -2 : -3;
	/* Read through one small buffer, whole stanzas at a time, instead of
	 * mapping the file: the parse then reads from cache-hot memory, and
	 * the first touch of each page of a mapping (~190 for a real status
	 * file) cost more than the parse itself. A stanza longer than the
	 * buffer doubles it. */
	struct parser ps = { path, wanted, out, 0, err, err_size };
	size_t cap = buffer_size ? buffer_size : 1, have = 0;
	char *buf = xmalloc(cap);
	bool eof = false;
	int rc = 0;
	while (rc == 0) {
		while (!eof && have < cap) {
			ssize_t n = read(fd, buf + have, cap - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				snprintf(err, err_size, "%s: %s", path, strerror(errno));
				rc = -1;
				break;
			}
			eof = n == 0;
			have += (size_t)n;
		}
		if (rc < 0)
			break;
		size_t cut = eof ? have : stanzas_end(buf, have);
		if (cut == 0 && !eof) {
			if (cap >= DPKG_STATUS_MAX_STANZA) { /* memory stays bounded */
				snprintf(err, err_size, "%s: a stanza longer than %d MiB: not a dpkg status file", path,
					 DPKG_STATUS_MAX_STANZA >> 20);
				rc = -1;
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
			continue;
		}
		rc = parse_region(&ps, buf, cut);
		if (eof)
			break;
		memmove(buf, buf + cut, have - cut);
		have -= cut;
	}
	free(buf);
	close(fd);
	if (rc < 0)
		dpkg_status_free(out);
	return rc;
}

int dpkg_status_load(const char *path, const char *const *wanted, struct dpkg_status *out, char *err, size_t err_size)
{
	return dpkg_status_load_buffered(path, wanted, DPKG_STATUS_BUFFER, out, err, err_size);
}

void dpkg_status_free(struct dpkg_status *st)
{
	for (size_t i = 0; i < st->count; i++) {
		free(st->pkgs[i].name);
		free(st->pkgs[i].arch);
		free(st->pkgs[i].version);
		free(st->pkgs[i].state);
		free(st->pkgs[i].multiarch);
		free(st->pkgs[i].provides);
	}
	free(st->pkgs);
	free(st->native_arch);
	memset(st, 0, sizeof(*st));
}

bool dpkg_pkg_installed(const struct dpkg_pkg *p)
{
	return strcmp(p->state, "installed") == 0 || strcmp(p->state, "triggers-pending") == 0 ||
	       strcmp(p->state, "triggers-awaited") == 0;
}
