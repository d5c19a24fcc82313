/* The dpkg status file, read as dpkg 1.21 reads it (lib/dpkg/parse.c
 * parse_stanza, pkg_parse_field, pkg_parse_verify, parse_find_set_slot;
 * lib/dpkg/fields.c; lib/dpkg/pkg-namevalue.c): every stanza of the file is
 * checked against the rules that make dpkg refuse the database, whether or
 * not its package was asked for; what dpkg only warns about is accepted. */
#include "dpkg_status.h"

#include "debrelation.h"
#include "debversion.h"
#include "mapped_file.h"
#include "parallel.h"
#include "safe_io.h"
#include "sanitizer.h"
#include "timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* dpkg's fieldinfos[] (lib/dpkg/parse.c), in its order. */
enum field_id {
	F_PACKAGE,
	F_ESSENTIAL,
	F_PROTECTED,
	F_STATUS,
	F_PRIORITY,
	F_SECTION,
	F_INSTALLED_SIZE,
	F_ORIGIN,
	F_MAINTAINER,
	F_BUGS,
	F_ARCHITECTURE,
	F_MULTI_ARCH,
	F_SOURCE,
	F_VERSION,
	F_CONFIG_VERSION,
	F_REPLACES,
	F_PROVIDES,
	F_DEPENDS,
	F_PRE_DEPENDS,
	F_RECOMMENDS,
	F_SUGGESTS,
	F_BREAKS,
	F_CONFLICTS,
	F_ENHANCES,
	F_CONFFILES,
	F_FILENAME,
	F_SIZE,
	F_MD5SUM,
	F_MSDOS_FILENAME,
	F_DESCRIPTION,
	F_TRIGGERS_PENDING,
	F_TRIGGERS_AWAITED,
	F_RECOMMENDED, /* the obsolete names, read as their modern fields */
	F_OPTIONAL,
	F_CLASS,
	F_REVISION,
	F_PACKAGE_REVISION,
	F_PACKAGE_REVISION_,
	F_COUNT
};

/* Each name padded with NULs to 16 bytes: compared 8 bytes at a time. */
static const struct {
	char name[17];
	size_t len;
} field_names[F_COUNT] = {
#define N(s)                     \
	{                        \
		s, sizeof(s) - 1 \
	}
	N("Package"),
	N("Essential"),
	N("Protected"),
	N("Status"),
	N("Priority"),
	N("Section"),
	N("Installed-Size"),
	N("Origin"),
	N("Maintainer"),
	N("Bugs"),
	N("Architecture"),
	N("Multi-Arch"),
	N("Source"),
	N("Version"),
	N("Config-Version"),
	N("Replaces"),
	N("Provides"),
	N("Depends"),
	N("Pre-Depends"),
	N("Recommends"),
	N("Suggests"),
	N("Breaks"),
	N("Conflicts"),
	N("Enhances"),
	N("Conffiles"),
	N("Filename"),
	N("Size"),
	N("MD5sum"),
	N("MSDOS-Filename"),
	N("Description"),
	N("Triggers-Pending"),
	N("Triggers-Awaited"),
	N("Recommended"),
	N("Optional"),
	N("Class"),
	N("Revision"),
	N("Package-Revision"),
	N("Package_Revision"),
#undef N
};

/* The values of pkg-namevalue.c: Status's three words, Multi-Arch, the
 * booleans and Priority. dpkg matches each name as a prefix, in any letter
 * case (namevalue_find_by_name: strncasecmp over the name's length). */
static const char *const want_words[] = { "unknown", "install", "hold", "deinstall", "purge", NULL };
static const char *const eflag_words[] = { "ok", "reinstreq", NULL };
enum pkg_stat {
	ST_NOTINSTALLED,
	ST_CONFIGFILES,
	ST_HALFINSTALLED,
	ST_UNPACKED,
	ST_HALFCONFIGURED,
	ST_TRIGGERSAWAITED,
	ST_TRIGGERSPENDING,
	ST_INSTALLED
};
static const char *const status_words[] = { "not-installed",    "config-files",    "half-installed",
					    "unpacked",         "half-configured", "triggers-awaited",
					    "triggers-pending", "installed",       NULL };
static const char *const multiarch_words[] = { "no", "same", "allowed", "foreign", NULL };
enum { MA_NO, MA_SAME, MA_ALLOWED, MA_FOREIGN };
static const char *const boolean_words[] = { "no", "yes", NULL };
static const char *const priority_words[] = {
	"required", "important", "standard", "optional", "extra", "unknown", NULL
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* Equal in any ASCII letter case (strncasecmp's rule), inline: the names
 * are short and there are ten thousand of them in a status file. */
static bool case_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i] && lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

/* dpkg's c_isspace() (lib/dpkg/c-ctype.c), one table lookup. */
static const bool space_char[256] = { [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1 };
static bool c_space(char c)
{
	return space_char[(unsigned char)c];
}

struct field_value {
	const char *v;
	size_t len;
	size_t line;
};

struct user_field {
	const char *name;
	size_t c_len; /* its length as a C string: up to a NUL byte in it, if any */
};

/* One stanza as pkg_parse_field() leaves it: the known fields' values
 * (NULL when absent) and the names of the others. */
struct stanza {
	struct field_value f[F_COUNT];
	uint64_t present;  /* bit i: f[i] was read in this stanza (the others hold an earlier stanza's: field()) */
	int state;         /* Status's third word (enum pkg_stat), once check_field read it */
	int multiarch;     /* Multi-Arch's value (MA_*), or -1 */
	bool provides_hit; /* its Provides names a wanted package (found by the validating walk) */
	size_t line;
	struct user_field *user;
	size_t user_n, user_cap;
};

/* The instances of one package name seen so far (parse_find_set_slot):
 * those not "not-installed", split by Multi-Arch: same or not. */
struct name_slot {
	uint32_t hash;
	uint32_t name_at; /* offset into the parser's names arena; 0 = empty slot */
	uint32_t single, multi;
};

/* A part of the file parsed on its own (dpkg_status_load_parts) keeps, for
 * each slot, where the name's first counted instance stands and its first
 * one not Multi-Arch: same (their lines in the part and their names as
 * written, offsets into the arena): the instances of the parts before it
 * decide whether one of those is the file's first duplicate. Apart from
 * the slots, so that the one-piece parse's table stays small. */
struct first_seen {
	uint32_t first_line, first_at, single_line, single_at;
	bool first_single;
};
/* (32 bits hold any line or offset of a file dpkg_status reads: at most
 * SAFE_MAX_STATUS bytes, whose names arena holds each name at most twice) */
_Static_assert(2 * SAFE_MAX_STATUS < UINT32_MAX, "a status file's offsets fit in 32 bits");

/* The known names, each as two 8-byte words with its letters lowered and
 * a mask with bit 5 set where a letter stands: a name from the file (masked
 * to its length) is that field when its words OR'd with the mask equal the
 * lowered ones. A letter then matches in either case (b | 0x20 is the
 * lowered letter only for that letter's two cases) and '-' or '_' byte for
 * byte: strcasecmp's rule, which pkg_parse_field uses. The candidates are
 * picked by length and first letter (at most two known names share both),
 * so nothing is hashed and most names take one compare. Built once a load
 * (known_keys_build) and read by each part's parser (only read: the cache
 * lines are shared, not passed between the threads; a copy in each part's
 * parser made the parts' array ~2.6 KB a part larger, cleared and faulted
 * in by the thread that starts them). */
struct known_key {
	uint64_t lowered[2], letters[2];
};

struct known_keys {
	struct known_key key[F_COUNT];
	signed char by_start[17][32][2]; /* [length][first byte | 0x20, low 5 bits]: ids, -1 for none */
	uint64_t len_mask[17][2];
};

/* A parser's memory: bumped from a block its caller gives (for the parts
 * of a file, one allocation for all of them, made before their threads
 * start), then from blocks of its own when that runs out; all of it comes
 * zeroed and goes at once (parser_free). A part's thread then calls malloc
 * only where its share outgrows the estimate (scratch_size): glibc gives a
 * thread that does a malloc arena of its own (a 64 MiB reservation and
 * its page faults), or, with one arena (M_ARENA_MAX, runner.c), a lock the
 * other threads wait on. */
struct scratch {
	char *at, *end;
	char *given; /* the caller's block (the caller frees it) */
	size_t given_size;
	void *own; /* the blocks malloc'ed here, chained through their first word (their size the second) */
};

#define SCRATCH_ALIGN     16
#define SCRATCH_OWN_BLOCK (64u << 10)

/* Under AddressSanitizer the bytes between and after the pieces handed out
 * are poisoned, so that a read past one is caught as one past a malloc'ed
 * block is. */
#if BUILD_ASAN
#include <sanitizer/asan_interface.h>
#define SCRATCH_REDZONE 32
#else
#define ASAN_POISON_MEMORY_REGION(p, n)   ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define SCRATCH_REDZONE                   0
#endif

static void scratch_init(struct scratch *m, char *block, size_t size)
{
	*m = (struct scratch){ .at = block, .end = block + size, .given = block, .given_size = size };
	ASAN_POISON_MEMORY_REGION(block, size); /* until handed out */
}

static void *scratch_alloc(struct scratch *m, size_t n)
{
	size_t want = (n + SCRATCH_REDZONE + SCRATCH_ALIGN - 1) & ~(size_t)(SCRATCH_ALIGN - 1);
	if ((size_t)(m->end - m->at) < want) {
		size_t size = want + SCRATCH_ALIGN > SCRATCH_OWN_BLOCK ? want + SCRATCH_ALIGN : SCRATCH_OWN_BLOCK;
		tl_mark("scratch grows");
		char *block = xcalloc(1, size);
		*(void **)(void *)block = m->own;
		((size_t *)(void *)block)[1] = size;
		m->own = block;
		m->at = block + SCRATCH_ALIGN;
		m->end = block + size;
		ASAN_POISON_MEMORY_REGION(m->at, size - SCRATCH_ALIGN);
	}
	void *p = m->at;
	m->at += want;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	return p;
}

/* A larger copy of old's first used bytes (old's place is not reused: the
 * parser's memory only grows, to at most twice what it holds). */
static void *scratch_grow(struct scratch *m, const void *old, size_t used, size_t size)
{
	void *p = scratch_alloc(m, size);
	if (used)
		memcpy(p, old, used);
	return p;
}

static char *scratch_strndup(struct scratch *m, const char *v, size_t n)
{
	char *c = scratch_alloc(m, n + 1);
	memcpy(c, v, n); /* the NUL is there: zeroed */
	return c;
}

/* Writes a zero to each page of p[0..n) (zeroed memory, maybe never
 * touched): a table that is read before it is written (a probe of the name
 * table) would otherwise take two page faults a page, the first read
 * mapping the shared zero page and the first write replacing it. */
static void touch_pages(void *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = 0;
}

/* Frees the blocks malloc'ed here; the caller's block is left whole to the
 * caller. */
static void scratch_free(struct scratch *m)
{
	for (void *b = m->own; b;) {
		void *next = *(void **)b;
		ASAN_UNPOISON_MEMORY_REGION(b, ((size_t *)b)[1]);
		free(b);
		b = next;
	}
	ASAN_UNPOISON_MEMORY_REGION(m->given, m->given_size);
	*m = (struct scratch){ 0 };
}

/* The package names a parser has seen, each followed by a NUL; offset 0 is
 * an empty name (an empty slot's). Its first size for a name table of
 * slots: 32 bytes a name at the most it holds before it grows (a real
 * name averages ~15 bytes), so that it seldom grows (each time a copy). */
#define NAMES_FIRST(slots) ((slots) / 2 * 32)
struct names {
	char *buf;
	size_t len, cap;
};

/* What a parse carries from one region of the file to the next. */
struct parser {
	const char *path;
	const char *const *wanted;
	size_t *wanted_len;    /* strlen of each wanted name, measured once */
	uint64_t wanted_lens;  /* bit n: a wanted name is n bytes long (n < 64); bit 63 also for longer ones */
	struct scratch mem;    /* everything below that is not fixed in size */
	struct dpkg_pkg *kept; /* the stanzas kept (strings in mem: dpkg_status_copy moves them out) */
	size_t kept_n, kept_cap;
	char *native_arch; /* in mem */
	size_t line;       /* lines before the region */
	size_t err_line;   /* the error's line (in the part), 0 for none */
	char err[768];     /* the error without "FILE:LINE: ", which the caller adds */
	bool track_first;  /* keep each name's first instances (parts of a file) */
	struct stanza s;
	struct name_slot *slots;
	struct first_seen *firsts; /* beside slots, when track_first */
	size_t slots_cap, slots_used;
	size_t slots_first; /* the table's first size (slots_for) */
	struct names names;
	const char *region_end;         /* the end of the bytes parse_region may read */
	const struct known_keys *known; /* (the caller's, read by every part) */
	bool has_nul;                   /* the region holds a NUL byte (add_field) */
};

static int perr(struct parser *ps, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct parser *ps, size_t line, const char *fmt, ...)
{
	ps->err_line = line;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->err, sizeof(ps->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* parse_nv() of lib/dpkg/fields.c: the index of the word at *s, *s moved
 * past it and the blanks after it; -1 when none matches, -2 when last is set
 * and text follows (dpkg's "has trailing junk"). */
static int name_value(const char **s, const char *end, const char *const *words, bool last)
{
	char first = *s < end ? lower(**s) : '\0';
	for (int i = 0; words[i]; i++) {
		if (words[i][0] != first)
			continue;
		size_t n = strlen(words[i]);
		if ((size_t)(end - *s) >= n && case_eq(*s, words[i], n)) {
			const char *e = *s + n;
			while (e < end && c_space(*e))
				e++;
			if (last && e < end)
				return -2;
			*s = e;
			return i;
		}
	}
	return -1;
}

/* f_version / f_configversion through parse_db_version() in the status
 * file's lax mode: only what parseversion() refuses is an error. */
static int check_version(struct parser *ps, enum field_id id)
{
	const struct field_value *fv = &ps->s.f[id];
	const char *why = debversion_refused(fv->v, fv->len);
	if (!why)
		return 0;
	return perr(ps, fv->line, "'%s' field value '%.*s': %s (dpkg refuses it: lib/dpkg/fields.c f_version)",
		    field_names[id].name, (int)(fv->len > 60 ? 60 : fv->len), fv->v, why);
}

/* f_conffiles() and conffvalue_lastword() (lib/dpkg/fields.c): each line a
 * space, a path, a space and a hash, optionally followed by "obsolete"
 * and "remove-on-upgrade". */
static int check_conffiles(struct parser *ps, const struct field_value *fv)
{
	const char *p = fv->v, *end = fv->v + fv->len;
	while (p < end) {
		char c = *p++;
		if (c == '\n')
			continue;
		if (c != ' ')
			return perr(
				ps, fv->line,
				"value for 'Conffiles' field has line starting with non-space '%c' (lib/dpkg/fields.c "
				"f_conffiles)",
				c);
		const char *line_end = memchr(p, '\n', (size_t)(end - p));
		if (!line_end)
			line_end = end;
		const char *from = line_end;
		for (int word = 0; word < 3; word++) {
			if (from <= p + 1)
				goto malformed;
			const char *sp = from - 1;
			while (sp > p && *sp != ' ')
				sp--;
			if (*sp != ' ' || sp <= p + 1 || sp >= line_end - 1)
				goto malformed;
			const char *w = sp + 1;
			size_t wl = (size_t)(from - w);
			from = sp;
			bool flag = (word == 0 && wl == 17 && memcmp(w, "remove-on-upgrade", 17) == 0) ||
				    (word < 2 && wl == 8 && memcmp(w, "obsolete", 8) == 0);
			if (!flag)
				break;
		}
		while (p < from && (*p == '/' || (*p == '.' && p + 1 < from && p[1] == '/')))
			p += *p == '/' ? 1 : 2;
		if (from <= p)
			return perr(
				ps, fv->line,
				"root or empty directory listed as a conffile in 'Conffiles' field (lib/dpkg/fields.c)");
		p = line_end;
		continue;
	malformed:
		return perr(ps, fv->line, "value for 'Conffiles' field has malformed line '%.*s' (lib/dpkg/fields.c)",
			    (int)(line_end - p > 80 ? 80 : line_end - p), p);
	}
	return 0;
}

/* f_trigpend / f_trigaw (lib/dpkg/fields.c): white-space separated words, no
 * duplicates; pending ones are trigger names (trig_name_is_illegal), awaited
 * ones package names. Returns the number of words, or -1. */
static int check_triggers(struct parser *ps, enum field_id id)
{
	const struct field_value *fv = &ps->s.f[id];
	const char *p = fv->v, *end = fv->v + fv->len;
	int words = 0;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
			p++;
		if (p == end)
			break;
		const char *w = p;
		while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		size_t n = (size_t)(p - w);
		if (id == F_TRIGGERS_PENDING) {
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)w[i] <= ' ' || (unsigned char)w[i] >= 0177)
					return perr(
						ps, fv->line,
						"illegal pending trigger name '%.*s': trigger name contains invalid "
						"character (lib/dpkg/trigname.c)",
						(int)n, w);
		} else {
			const char *colon = memchr(w, ':', n);
			size_t nl = colon ? (size_t)(colon - w) : n;
			const char *bad = deb_name_illegal(w, nl);
			if (bad)
				return perr(
					ps, fv->line,
					"illegal package name in awaited trigger '%.*s': %s (lib/dpkg/fields.c f_trigaw)",
					(int)n, w, bad);
		}
		/* a duplicate is an error: compare with the words before */
		for (const char *q = fv->v; q < w;) {
			while (q < w && (*q == ' ' || *q == '\t' || *q == '\n'))
				q++;
			const char *o = q;
			while (q < w && *q != ' ' && *q != '\t' && *q != '\n')
				q++;
			if ((size_t)(q - o) == n && n &&
			    (id == F_TRIGGERS_PENDING ? memcmp(o, w, n) : strncasecmp(o, w, n)) == 0)
				return perr(ps, fv->line, "duplicate %s '%.*s' (lib/dpkg/fields.c)",
					    id == F_TRIGGERS_PENDING ? "pending trigger" : "awaited trigger package",
					    (int)n, w);
		}
		words++;
	}
	return words;
}

static enum relfield relfield_of(enum field_id id)
{
	switch (id) {
	case F_PROVIDES:
		return RELFIELD_PROVIDES;
	case F_REPLACES:
	case F_BREAKS:
	case F_CONFLICTS:
		return RELFIELD_NO_ALTS;
	default:
		return RELFIELD_DEPENDS;
	}
}

/* Whether name[0..n) is a wanted package (in any letter case, as
 * pkg_hash_find_set() looks names up); wanted is not NULL. */
static bool name_wanted(const struct parser *ps, const char *name, size_t n)
{
	/* most names have a length no wanted one has: one test */
	if (!(ps->wanted_lens >> (n < 63 ? n : 63) & 1))
		return false;
	for (size_t i = 0; ps->wanted[i]; i++)
		if (ps->wanted_len[i] == n && lower(ps->wanted[i][0]) == lower(name[0]) &&
		    strncasecmp(ps->wanted[i], name, n) == 0)
			return true;
	return false;
}

/* relfield_walk's callback over Provides: notes a wanted name, and never
 * stops the walk (the rest of the field is still validated). */
static bool provided_wanted(const struct relfield_item *it, void *data)
{
	struct parser *ps = data;
	if (!ps->s.provides_hit && it->name_len && name_wanted(ps, it->name, it->name_len))
		ps->s.provides_hit = true;
	return true;
}

/* The checks of one field's own parser (fields.c), as pkg_parse_field()
 * calls it when the field is read. */
static int check_field(struct parser *ps, enum field_id id)
{
	const struct field_value *fv = &ps->s.f[id];
	const char *v = fv->v, *end = fv->v + fv->len;
	char why[512];
	switch (id) {
	case F_PACKAGE: {
		const char *bad = deb_name_illegal(v, fv->len);
		if (bad)
			return perr(ps, fv->line,
				    "invalid package name in 'Package' field: %s (lib/dpkg/fields.c f_name)", bad);
		return 0;
	}
	case F_ESSENTIAL:
	case F_PROTECTED:
		if (fv->len && name_value(&v, end, boolean_words, true) < 0)
			return perr(ps, fv->line,
				    "boolean (yes/no) '%s' field: invalid value '%.*s' (lib/dpkg/fields.c)",
				    field_names[id].name, (int)(fv->len > 50 ? 50 : fv->len), fv->v);
		return 0;
	case F_MULTI_ARCH:
		/* the words as dpkg writes them, taken without the search (none
		 * of the list's words is another's prefix: an exact one is that
		 * word, with nothing after it) */
		if (fv->len == 4 && memcmp(v, "same", 4) == 0) {
			ps->s.multiarch = MA_SAME;
			return 0;
		}
		if (fv->len == 7 && memcmp(v, "foreign", 7) == 0) {
			ps->s.multiarch = MA_FOREIGN;
			return 0;
		}
		if (fv->len && (ps->s.multiarch = name_value(&v, end, multiarch_words, true)) < 0)
			return perr(ps, fv->line,
				    "quadstate (foreign/allowed/same/no) 'Multi-Arch' field: invalid value '%.*s' "
				    "(lib/dpkg/fields.c f_multiarch)",
				    (int)(fv->len > 50 ? 50 : fv->len), fv->v);
		return 0;
	case F_PRIORITY:
	case F_CLASS:
		/* an unknown word is kept as another priority; a known one
		 * followed by more text is "trailing junk" ("optional", most
		 * packages' and no other word's prefix, without the search) */
		if (fv->len == 8 && memcmp(v, "optional", 8) == 0)
			return 0;
		if (fv->len && name_value(&v, end, priority_words, true) == -2)
			return perr(ps, fv->line,
				    "word in '%s' field: has trailing junk (lib/dpkg/fields.c f_priority)",
				    field_names[id].name);
		return 0;
	case F_STATUS: {
		/* nearly every stanza says exactly this: the word lists below
		 * read it as install, ok, installed (no other word starts with
		 * 'i' in any of them), so it is taken without the search */
		if (fv->len == 20 && memcmp(v, "install ok installed", 20) == 0) {
			ps->s.state = ST_INSTALLED;
			return 0;
		}
		static const char *const which[] = { "first (want)", "second (error)", "third (status)" };
		const char *const *lists[] = { want_words, eflag_words, status_words };
		for (int w = 0; w < 3; w++) {
			if (v == end)
				return perr(
					ps, fv->line,
					"%s word in 'Status' field: is missing a value (lib/dpkg/fields.c f_status)",
					which[w]);
			int r = name_value(&v, end, lists[w], w == 2);
			if (r < 0)
				return perr(ps, fv->line,
					    "%s word in 'Status' field: %s '%.*s' (lib/dpkg/fields.c f_status)",
					    which[w], r == -2 ? "has trailing junk" : "has invalid value",
					    (int)(fv->len > 50 ? 50 : fv->len), fv->v);
			if (w == 2)
				ps->s.state = r;
		}
		return 0;
	}
	case F_VERSION:
	case F_CONFIG_VERSION:
		return check_version(ps, id);
	case F_CONFFILES:
		return check_conffiles(ps, fv);
	case F_FILENAME:
	case F_SIZE:
	case F_MD5SUM:
	case F_MSDOS_FILENAME:
		return perr(
			ps, fv->line,
			fv->len ? "archive details '%s' field not allowed in status file (lib/dpkg/fields.c f_archives)"
				: "empty archive details '%s' field (lib/dpkg/fields.c f_archives)",
			field_names[id].name);
	case F_TRIGGERS_PENDING:
	case F_TRIGGERS_AWAITED:
		return check_triggers(ps, id) < 0 ? -1 : 0;
	case F_REPLACES:
	case F_PROVIDES:
	case F_DEPENDS:
	case F_PRE_DEPENDS:
	case F_RECOMMENDS:
	case F_SUGGESTS:
	case F_BREAKS:
	case F_CONFLICTS:
	case F_ENHANCES:
	case F_RECOMMENDED:
	case F_OPTIONAL: {
		/* Provides is matched against the wanted names in the same walk
		 * that validates it: one pass, not one more per wanted name */
		bool want = id == F_PROVIDES && ps->wanted;
		if (relfield_walk(field_names[id].name, fv->v, fv->len, relfield_of(id), want ? provided_wanted : NULL,
				  want ? ps : NULL, why, sizeof(why)) < 0)
			return perr(ps, fv->line, "%s (lib/dpkg/fields.c f_dependency)", why);
		return 0;
	}
	default:
		return 0; /* text fields, and Architecture (a bad name is a warning) */
	}
}

static void known_keys_build(struct known_keys *k)
{
	memset(k->by_start, -1, sizeof(k->by_start));
	for (size_t len = 0; len <= 16; len++) {
		unsigned char ones[16] = { 0 };
		memset(ones, 0xff, len);
		memcpy(k->len_mask[len], ones, 16);
	}
	for (int id = 0; id < F_COUNT; id++) {
		size_t len = field_names[id].len;
		unsigned char low[16] = { 0 }, letters[16] = { 0 };
		for (size_t i = 0; i < len; i++) {
			char c = field_names[id].name[i];
			bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
			low[i] = (unsigned char)lower(c);
			letters[i] = letter ? 0x20 : 0;
		}
		memcpy(k->key[id].lowered, low, 16);
		memcpy(k->key[id].letters, letters, 16);
		signed char *slot = k->by_start[len][(field_names[id].name[0] | 0x20) & 31];
		slot[slot[0] >= 0] = (signed char)id; /* two at most share a length and first letter */
	}
}

/* A field name's index in fieldinfos[] (any letter case, as pkg_parse_field
 * compares), or -1; end is the end of the bytes that may be read. */
static int known_field(const struct known_keys *k, const char *name, size_t len, const char *end)
{
	if (len > 16)
		return -1;
	uint64_t w[2] = { 0, 0 };
	if (end - name >= 16)
		memcpy(w, name, 16); /* one load; the bytes past the name are masked off */
	else
		memcpy(w, name, len);
	w[0] &= k->len_mask[len][0];
	w[1] &= k->len_mask[len][1];
	const signed char *ids = k->by_start[len][(name[0] | 0x20) & 31];
	for (int i = 0; i < 2 && ids[i] >= 0; i++) {
		const struct known_key *key = &k->key[ids[i]];
		if ((w[0] | key->letters[0]) == key->lowered[0] && (w[1] | key->letters[1]) == key->lowered[1])
			return ids[i];
	}
	return -1;
}

/* pkg_parse_field(): a known field twice, or another field twice (in any
 * letter case), or another field of one character, is an error. */
static int add_field(struct parser *ps, const char *name, size_t name_len, const char *v, size_t vlen, size_t line)
{
	struct stanza *s = &ps->s;
	/* (a NUL in a name makes it no known field's: strncasecmp stops there
	 * in the name, not in the known one, and tells them apart) */
	int id = known_field(ps->known, name, name_len, ps->region_end);
	if (id >= 0) {
		if (__builtin_expect(ps->has_nul, 0)) /* the field's parser reads a C string */
			vlen = strnlen(v, vlen);
		if (s->present >> id & 1)
			return perr(ps, line, "duplicate value for '%s' field (lib/dpkg/parse.c pkg_parse_field)",
				    field_names[id].name);
		s->f[id] = (struct field_value){ v, vlen, line };
		s->present |= (uint64_t)1 << id;
		return check_field(ps, (enum field_id)id);
	}
	if (name_len < 2)
		return perr(ps, line, "user-defined field name '%.*s' too short (lib/dpkg/parse.c pkg_parse_field)",
			    (int)name_len, name);
	/* the earlier name was saved as a C string (nfstrnsave), whose strlen
	 * must be this one's length, then strncasecmp over this one's: a NUL
	 * ends either (dpkg reads "Xa<NUL>b: 1" then "Xa: 2" as the same field
	 * twice) */
	for (size_t i = 0; i < s->user_n; i++)
		if (s->user[i].c_len == name_len && strncasecmp(s->user[i].name, name, name_len) == 0)
			return perr(ps, line,
				    "duplicate value for user-defined field '%.*s' (lib/dpkg/parse.c pkg_parse_field)",
				    (int)name_len, name);
	if (s->user_n == s->user_cap) {
		size_t cap = s->user_cap ? 2 * s->user_cap : 16;
		s->user = scratch_grow(&ps->mem, s->user, s->user_n * sizeof(*s->user), cap * sizeof(*s->user));
		s->user_cap = cap;
	}
	s->user[s->user_n++] =
		(struct user_field){ name, __builtin_expect(ps->has_nul, 0) ? strnlen(name, name_len) : name_len };
	return 0;
}

static uint64_t name_hash(const char *s, size_t n)
{
	/* 8 bytes at a time, letter case folded by setting bit 5 of every
	 * byte (names equal in any case hash alike; other bytes that fold
	 * together only collide, and the slot compares the names) */
	uint64_t h = 1469598103934665603u;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ (w | 0x2020202020202020u)) * 0x9E3779B97F4A7C15u;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ ((unsigned char)s[i] | 0x20u)) * 1099511628211u;
	return h ^ (h >> 32);
}

/* The name table's first size for bytes of a status file: a real one's
 * stanzas average ~900 bytes (the bench's: 921,952 for 1,004 packages), but
 * a part of the file may hold mostly short ones (a run of libraries: ~700
 * bytes each), and a table that grows in a part's thread costs a malloc'ed
 * copy there (a lock, or an arena of its own) and its pages cleared: a name
 * per 512 bytes, the table at most half full. A slot and its first_seen
 * take 36 bytes: a part of a 1 MB file in 4 gets 1,024 slots, 36 KiB. */
static size_t slots_for(size_t bytes, bool part)
{
	/* (the one-piece parse grows its table on the caller's own thread:
	 * a name per 1 KiB first there, which fits a real file) */
	size_t want = 2 * (bytes / (part ? 512 : 1024) + 1), cap = 64;
	while (cap < want && cap < ((size_t)1 << 20))
		cap *= 2;
	return cap;
}

/* The table moved into one of cap slots (a power of two, larger than the
 * names it holds). */
static void slots_resize(struct parser *ps, size_t cap)
{
	struct name_slot *n = scratch_alloc(&ps->mem, cap * sizeof(*n));
	struct first_seen *f = ps->track_first ? scratch_alloc(&ps->mem, cap * sizeof(*f)) : NULL;
	touch_pages(n, cap * sizeof(*n));
	for (size_t i = 0; i < ps->slots_cap; i++) {
		if (!ps->slots[i].name_at)
			continue;
		size_t k = ps->slots[i].hash & (cap - 1);
		while (n[k].name_at)
			k = (k + 1) & (cap - 1);
		n[k] = ps->slots[i];
		if (f)
			f[k] = ps->firsts[i];
	}
	ps->slots = n;
	ps->firsts = f;
	ps->slots_cap = cap;
}

static void slots_grow(struct parser *ps)
{
	slots_resize(ps, ps->slots_cap ? ps->slots_cap * 2 : ps->slots_first);
}

/* name[0..n) and a NUL added to the names; returns its offset (never 0:
 * the names start with an empty one). */
static size_t name_add(struct parser *ps, const char *name, size_t n)
{
	struct names *nm = &ps->names;
	if (nm->len + n + 2 > nm->cap) { /* (2: the NUL, and the empty name before the first) */
		size_t cap = nm->cap ? 2 * nm->cap : NAMES_FIRST(ps->slots_first);
		while (cap < nm->len + n + 2)
			cap *= 2;
		nm->buf = scratch_grow(&ps->mem, nm->buf, nm->len, cap);
		nm->cap = cap;
	}
	if (!nm->len)
		nm->len = 1; /* offset 0: the empty name (the memory comes zeroed) */
	size_t at = nm->len;
	memcpy(nm->buf + at, name, n);
	nm->buf[at + n] = '\0';
	nm->len += n + 1;
	return at;
}

/* The slot of a package name (any letter case: pkg_hash_find_set()). */
/* The slot of name[0..n), hashed h, in ps's table (which has one): its
 * own, or the empty one where it would go. */
static struct name_slot *slot_probe(const struct parser *ps, const char *name, size_t n, uint32_t h)
{
	for (size_t k = h & (ps->slots_cap - 1);; k = (k + 1) & (ps->slots_cap - 1)) {
		struct name_slot *sl = &ps->slots[k];
		if (!sl->name_at)
			return sl;
		const char *other = ps->names.buf + sl->name_at;
		if (sl->hash == h && strncasecmp(other, name, n) == 0 && other[n] == '\0')
			return sl;
	}
}

static struct name_slot *name_slot(struct parser *ps, const char *name, size_t n)
{
	if (2 * (ps->slots_used + 1) > ps->slots_cap)
		slots_grow(ps);
	uint32_t h = (uint32_t)name_hash(name, n);
	struct name_slot *sl = slot_probe(ps, name, n, h);
	if (!sl->name_at) {
		sl->hash = h;
		sl->name_at = (uint32_t)name_add(ps, name, n);
		ps->slots_used++;
	}
	return sl;
}

static char *lowered(struct scratch *m, const char *s, size_t n)
{
	char *c = scratch_strndup(m, s, n);
	for (char *p = c; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 32);
	return c;
}

static char *value_or_empty(struct scratch *m, const struct field_value *fv)
{
	return fv->v ? scratch_strndup(m, fv->v, fv->len) : scratch_strndup(m, "", 0);
}

/* parse_find_set_slot()'s two errors: a second instance that is not
 * Multi-Arch: same (multiple), or one beside instances that are (mixed). */
static int duplicate_error(struct parser *ps, size_t line, const char *name, size_t len, bool multiple)
{
	if (multiple)
		return perr(ps, line,
			    "package %.*s: multiple non-coinstallable package instances present (the same package "
			    "twice; lib/dpkg/parse.c parse_find_set_slot)",
			    (int)len, name);
	return perr(ps, line,
		    "package %.*s: mixed non-coinstallable and coinstallable package instances present "
		    "(lib/dpkg/parse.c parse_find_set_slot)",
		    (int)len, name);
}

/* The offset in the names arena of name as written (the slot's own
 * spelling when it is the same). */
static size_t spelling_at(struct parser *ps, const struct name_slot *sl, const char *name, size_t n)
{
	if (memcmp(ps->names.buf + sl->name_at, name, n) == 0)
		return sl->name_at;
	return name_add(ps, name, n);
}

static void note_first(struct parser *ps, const struct name_slot *sl, const char *name, size_t n, bool single,
		       size_t line)
{
	struct first_seen *f = &ps->firsts[sl - ps->slots];
	if (!sl->single && !sl->multi) {
		f->first_line = (uint32_t)line;
		f->first_single = single;
		f->first_at = (uint32_t)spelling_at(ps, sl, name, n);
	}
	if (single && !sl->single) {
		f->single_line = (uint32_t)line;
		f->single_at = (uint32_t)spelling_at(ps, sl, name, n);
	}
}

/* The stanza's field id: its value, or one with v NULL when the stanza has
 * none (the entry may hold an earlier stanza's value: only the present
 * bits are cleared between stanzas). */
static const struct field_value *field(const struct stanza *s, enum field_id id)
{
	static const struct field_value none = { NULL, 0, 0 };
	return s->present >> id & 1 ? &s->f[id] : &none;
}

/* pkg_parse_verify() and parse_find_set_slot() (lib/dpkg/parse.c) for the
 * stanza just read, then keep it when its package or a Provides is wanted. */
static int finish_stanza(struct parser *ps)
{
	struct stanza *s = &ps->s;
	const struct field_value *pkg = field(s, F_PACKAGE);
	if (!pkg->v)
		return perr(ps, s->line, "missing 'Package' field (lib/dpkg/parse.c pkg_parse_verify)");
	enum pkg_stat state = (enum pkg_stat)s->state;
	int ma = s->multiarch;
	const struct field_value *arch = field(s, F_ARCHITECTURE);
	if (state != ST_NOTINSTALLED && state != ST_HALFINSTALLED) {
		if (!field(s, F_VERSION)->v)
			return perr(ps, s->line,
				    "package %.*s: missing 'Version' field (lib/dpkg/parse.c pkg_parse_verify)",
				    (int)pkg->len, pkg->v);
		if (!field(s, F_VERSION)->len)
			return perr(ps, s->line,
				    "package %.*s: empty value for 'Version' field (lib/dpkg/parse.c pkg_parse_verify)",
				    (int)pkg->len, pkg->v);
	}
	if (ma == MA_SAME && (!arch->v || !arch->len))
		return perr(ps, s->line,
			    "package %.*s has 'Multi-Arch: same' field but is missing architecture (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v);
	if (ma == MA_SAME && arch->len == 3 && strncasecmp(arch->v, "all", 3) == 0)
		return perr(ps, s->line,
			    "package %.*s has 'Multi-Arch: same' field but is architecture 'all' (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v);
	if (field(s, F_CONFIG_VERSION)->v &&
	    (state == ST_INSTALLED || state == ST_NOTINSTALLED || state == ST_TRIGGERSPENDING))
		return perr(
			ps, field(s, F_CONFIG_VERSION)->line,
			"package %.*s: 'Config-Version' field present for package with inappropriate 'Status' field "
			"(%s; lib/dpkg/parse.c pkg_parse_verify)",
			(int)pkg->len, pkg->v, status_words[state]);
	int awaited = field(s, F_TRIGGERS_AWAITED)->v ? check_triggers(ps, F_TRIGGERS_AWAITED) : 0;
	int pending = field(s, F_TRIGGERS_PENDING)->v ? check_triggers(ps, F_TRIGGERS_PENDING) : 0;
	if (awaited && (state <= ST_CONFIGFILES || state >= ST_TRIGGERSPENDING))
		return perr(ps, s->line, "package %.*s has status %s but triggers are awaited (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v, status_words[state]);
	if (!awaited && state == ST_TRIGGERSAWAITED)
		return perr(ps, s->line, "package %.*s has status %s but no triggers awaited (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v, status_words[state]);
	if (pending && state != ST_TRIGGERSPENDING && state != ST_TRIGGERSAWAITED)
		return perr(ps, s->line, "package %.*s has status %s but triggers are pending (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v, status_words[state]);
	if (!pending && state == ST_TRIGGERSPENDING)
		return perr(ps, s->line, "package %.*s has status %s but no triggers pending (lib/dpkg/parse.c)",
			    (int)pkg->len, pkg->v, status_words[state]);
	/* parse_find_set_slot(): one instance of a name unless every one is
	 * Multi-Arch: same (not-installed ones are only selections) */
	struct name_slot *sl = name_slot(ps, pkg->v, pkg->len);
	if (state != ST_NOTINSTALLED) {
		if (ps->track_first)
			note_first(ps, sl, pkg->v, pkg->len, ma != MA_SAME, s->line);
		if (ma == MA_SAME)
			sl->multi++;
		else
			sl->single++;
	}
	if (sl->single > 1 || (sl->single && sl->multi))
		return duplicate_error(ps, s->line, pkg->v, pkg->len, sl->single > 1);

	if (pkg->len == 4 && strncasecmp(pkg->v, "dpkg", 4) == 0 && arch->v && !ps->native_arch)
		ps->native_arch = scratch_strndup(&ps->mem, arch->v, arch->len);
	const struct field_value *prov = field(s, F_PROVIDES);
	if (ps->wanted && !name_wanted(ps, pkg->v, pkg->len) && !s->provides_hit)
		return 0;
	struct scratch *m = &ps->mem;
	if (ps->kept_n == ps->kept_cap) {
		size_t cap = ps->kept_cap ? 2 * ps->kept_cap : 8;
		ps->kept = scratch_grow(m, ps->kept, ps->kept_n * sizeof(*ps->kept), cap * sizeof(*ps->kept));
		ps->kept_cap = cap;
	}
	struct dpkg_pkg *p = &ps->kept[ps->kept_n++];
	const char *ma_word = ma >= 0 ? multiarch_words[ma] : "";
	p->name = lowered(m, pkg->v, pkg->len);
	p->arch = value_or_empty(m, arch);
	p->version = value_or_empty(m, field(s, F_VERSION));
	p->state = scratch_strndup(m, status_words[state], strlen(status_words[state]));
	p->multiarch = scratch_strndup(m, ma_word, strlen(ma_word));
	p->provides = value_or_empty(m, prov);
	p->line = s->line;
	return 0;
}

static void stanza_reset(struct stanza *s)
{
	s->present = 0; /* the values stay, unread (field()) */
	s->user_n = 0;
	s->line = 0;
	s->state = ST_NOTINSTALLED; /* pkgset_blank(): no Status is not-installed */
	s->multiarch = -1;
	s->provides_hit = false;
}

/* The bytes after a newline that continue a field value: white space
 * other than a newline (parse_stanza's rule). */
static const bool continues_value[256] = { [' '] = 1, ['\t'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1 };

/* MSDOS_EOF_CHAR (lib/dpkg/parsedump.h, dpkg 1.21.22): parse_stanza() reads
 * it as a line end wherever it reads a newline as one (between stanzas, at
 * the end of a value line), as an error in a field name and as the first
 * byte of a value, and a line that starts with it ends the stanza (it is not
 * white space: c_isspace). */
#define MSDOS_EOF '\032'

/* The line ends of parse_stanza: a newline or ^Z. */
static bool line_end(char c)
{
	return c == '\n' || c == MSDOS_EOF;
}

/* The line end that ends the field value running from p: the first one
 * followed by another newline, by a character that is not white space
 * (^Z included), or by the end; when eof_tests (end is the file's end, or
 * an empty line's end, where this agrees) also one followed by the last
 * byte, whatever it is: parse_stanza()
 * (lib/dpkg/parse.c, 1.21.22) reads that byte, finds itself at the end of
 * the file (parse_at_eof) and stops the value, the stanza and the parse
 * there, leaving the byte unread. NULL when the file ends first (no final
 * newline). The line ends passed, that one included, are added to *lines
 * (dpkg counts ^Z as a line too).
 * A status file is mostly description lines: this finds the line ends of 64
 * bytes at a time (SSE2: b | 0x10 == 0x1a holds for '\n' (0x0a) and ^Z
 * (0x1a) alone, one compare as for the newline only) and looks only at the
 * byte after each, instead of one memchr call per line. */
static const char *value_end(const char *p, const char *end, bool eof_tests, size_t *lines)
{
	size_t n = 0;
#if defined(__SSE2__)
	const __m128i bit4 = _mm_set1_epi8(0x10), eol = _mm_set1_epi8(MSDOS_EOF);
	/* the block is p[0..64); the two bytes after it exist, so no line end
	 * in it is the file's last or next to last byte (the tail's cases) */
	while (end - p >= 66) {
#define EOL_MASK(k)                                                                                        \
	((uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(                                             \
		 _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * (k))), bit4), eol)) \
	 << (16 * (k)))
		uint64_t eols = EOL_MASK(0) | EOL_MASK(1) | EOL_MASK(2) | EOL_MASK(3);
#undef EOL_MASK
		for (; eols; eols &= eols - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(eols);
			n++;
			if (!continues_value[(unsigned char)p[bit + 1]]) {
				*lines += n;
				return p + bit;
			}
		}
		p += 64;
	}
#endif
	for (; p < end; p++) {
		if (!line_end(*p))
			continue;
		n++;
		if (p + 1 == end || (eof_tests && p + 2 == end) || !continues_value[(unsigned char)p[1]]) {
			*lines += n;
			return p;
		}
	}
	*lines += n;
	return NULL;
}

/* The end of the field name at p: the first white space or ':'
 * (parse_stanza), found 16 bytes at a time. */
static const char *name_end(const char *p, const char *end);

/* The first bytes of a field name that parse_stanza refuses: none (the name
 * is empty: a byte that ends a name) or '-'. */
static const unsigned char bad_name_start[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [':'] = 1, [MSDOS_EOF] = 1, ['-'] = 1
};

/* Bytes that end a field name: white space, ':' and ^Z (parse_stanza). */
static const unsigned char ends_name[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [':'] = 1, [MSDOS_EOF] = 1
};

static const char *name_end(const char *p, const char *end)
{
#if defined(__SSE2__)
	const __m128i colon = _mm_set1_epi8(':'), sp = _mm_set1_epi8(' ');
	while (end - p >= 16) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* ':' or a byte <= ' ' (unsigned min): each byte that ends a name,
		 * and the other control bytes (rare in a name), tested one by one */
		__m128i hit = _mm_or_si128(_mm_cmpeq_epi8(b, colon), _mm_cmpeq_epi8(_mm_min_epu8(b, sp), b));
		for (unsigned m = (unsigned)_mm_movemask_epi8(hit); m; m &= m - 1)
			if (ends_name[(unsigned char)p[__builtin_ctz(m)]])
				return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < end && !ends_name[(unsigned char)*p])
		p++;
	return p;
}

/* Where the whole stanzas in buf[0..len) end: just after the last empty
 * line (two newlines in a row: dpkg's only stanza separator), or 0. */
static size_t stanzas_end(const char *buf, size_t len)
{
	for (const char *nl = len ? memrchr(buf, '\n', len) : NULL; nl && nl > buf;
	     nl = memrchr(buf, '\n', (size_t)(nl - buf)))
		if (nl[-1] == '\n')
			return (size_t)(nl + 1 - buf);
	return 0;
}

/* parse_stanza() (lib/dpkg/parse.c) over one region: whole stanzas (it
 * ends after an empty line) or the rest of the file. A field name runs up to
 * white space or ':', blanks may stand before the ':', the value runs over
 * the lines that start with white space (a line of white space only is
 * part of it: dpkg warns), and the stanza ends at an empty line. */
static int parse_region(struct parser *ps, const char *content, size_t len)
{
	const char *p = content, *end = content + len;
	ps->region_end = end;
	size_t line = ps->line + 1; /* the line p is on */
	/* A NUL byte is no end for parse_stanza() (1.21.22): it is a byte of a
	 * field name or value like another; pkg_parse_field() then hands a
	 * known field's value to its parser as a C string, read up to the
	 * NUL, and compares a user-defined field's name with strncasecmp
	 * (add_field). Whether the region holds one at all, once. */
	ps->has_nul = len && memchr(content, '\0', len) != NULL;
	/* dpkg stops where it has read the file's last byte (parse_at_eof after
	 * parse_getc), before it looks at that byte: each place below that
	 * tests "at the last byte" is one such test in parse_stanza() (1.21.22).
	 * A region that is not the file's end ends after an empty line (between
	 * stanzas), where those tests meet only newlines and agree. */
	const bool eof_tests = true;
	const char *stop = len ? end - 1 : end; /* where dpkg is at the end: at the last byte */
	int rc = 0;
	while (rc == 0) {
		while (p < end && line_end(*p)) { /* skip the empty lines (and ^Z) between stanzas */
			p++;
			line++;
		}
		if (p == end)
			break;
		if (p == stop)
			break; /* one byte after the last line end: read, at the end, so unparsed */
		stanza_reset(&ps->s);
		ps->s.line = line;
		for (;;) { /* one field */
			const char *name = p;
			p = name_end(p, end);
			size_t name_len = (size_t)(p - name);
			if (bad_name_start[(unsigned char)name[0]]) { /* name < stop: name[0] is in the region */
				rc = !name_len ? perr(ps, line, "empty field name (lib/dpkg/parse.c parse_stanza)")
					       : perr(ps, line,
						      "field name '%.*s' cannot start with hyphen (lib/dpkg/parse.c)",
						      (int)name_len, name);
				break;
			}
			/* (the common path, "Name:", tests once for each rare case
			 * below: blanks before the colon, the end of the region or of
			 * the file) */
			if (__builtin_expect(p >= stop || *p != ':', 0)) {
				while (p < end && continues_value[(unsigned char)*p]) /* blanks, not the newline */
					p++;
				if (p >= stop || *p != ':') {
					const char *what = p >= stop    ? "end of file after field name '%.*s'"
							   : *p == '\n' ? "newline in field name '%.*s'"
							   : *p == MSDOS_EOF
								   ? "MSDOS end of file (^Z) in field name '%.*s'"
								   : "field name '%.*s' must be followed by colon";
					char why[160];
					snprintf(why, sizeof(why), what, (int)(name_len > 60 ? 60 : name_len), name);
					rc = perr(ps, line, "%s (lib/dpkg/parse.c parse_stanza)", why);
					break;
				}
			}
			p++;
			p += *p == ' '; /* the usual one blank at once (p <= stop: readable) */
			while (p < end && continues_value[(unsigned char)*p]) /* blanks, not the newline */
				p++;
			/* the value's first byte, a newline too, is read before the
			 * test for the end: "Foo:\n" as the file's last line is refused */
			if (p >= stop || *p == MSDOS_EOF) {
				if (p >= stop)
					rc = perr(ps, line,
						  "end of file before value of field '%.*s' (missing final newline; "
						  "lib/dpkg/parse.c)",
						  (int)name_len, name);
				else
					rc = perr(ps, line,
						  "MSDOS end of file (^Z) in value of field '%.*s' (missing newline?; "
						  "lib/dpkg/parse.c parse_stanza)",
						  (int)name_len, name);
				break;
			}
			const char *value = p;
			size_t field_line = line;
			/* the value's lines: up to a newline followed by a newline,
			 * by a character that is not white space, or by the end */
			size_t before = line;
			const char *nl = value_end(p, end, eof_tests, &line);
			if (!nl) {
				rc = perr(ps, before,
					  "end of file during value of field '%.*s' (missing final newline; "
					  "lib/dpkg/parse.c)",
					  (int)name_len, name);
				break;
			}
			p = nl + 1;
			/* dpkg's value runs to the byte after the line end, less
			 * trailing white space: a ^Z there stays in it, a line end that
			 * is the file's last byte does not */
			const char *vend = nl;
			if (__builtin_expect(*nl != '\n', 0) && p < end)
				vend = p;
			while (vend > value && c_space(vend[-1]))
				vend--;
			rc = add_field(ps, name, name_len, value, (size_t)(vend - value), field_line);
			if (rc)
				break;
			if (p >= stop || (*p | 0x10) == MSDOS_EOF) /* the end, or a newline or ^Z */
				break;                             /* the stanza's end (or the file's) */
		}
		if (rc == 0)
			rc = finish_stanza(ps);
	}
	ps->line = line - 1;
	return rc;
}

/* The memory a parser of bytes of a status file starts with: its read
 * buffer (buffer_size, none for a parse of memory), its name table at its
 * first size (with first instances when track_first), names at 32 bytes
 * each, and room for a stanza's user fields and a few kept stanzas. What
 * outgrows it comes from malloc (scratch_alloc). */
static size_t scratch_size(size_t bytes, size_t buffer_size, bool track_first, const char *const *wanted)
{
	size_t slots = slots_for(bytes, track_first), n = 0;
	while (wanted && wanted[n])
		n++;
	size_t slot = sizeof(struct name_slot) + (track_first ? sizeof(struct first_seen) : 0);
	size_t sum = buffer_size + slots * slot + NAMES_FIRST(slots) + 16 * sizeof(struct user_field) +
		     8 * (sizeof(struct dpkg_pkg) + 128) + (n + 1) * sizeof(size_t) + 128;
	/* each piece is rounded up to SCRATCH_ALIGN, after its red zone under
	 * ASan (twelve pieces at most before any grows): then whole pages */
	sum += 12 * (SCRATCH_ALIGN + SCRATCH_REDZONE);
	return (sum + 4095) & ~(size_t)4095;
}

/* mem[0..mem_size) is the parser's to start with (zeroed; the caller frees
 * it after parser_free). */
static void parser_init(struct parser *ps, const char *path, const char *const *wanted, size_t bytes, bool track_first,
			const struct known_keys *known, char *mem, size_t mem_size)
{
	*ps = (struct parser){
		.path = path, .wanted = wanted, .track_first = track_first, .slots_first = slots_for(bytes, track_first)
	};
	scratch_init(&ps->mem, mem, mem_size);
	ps->known = known;
	size_t n = 0;
	while (wanted && wanted[n])
		n++;
	ps->wanted_len = scratch_alloc(&ps->mem, (n + 1) * sizeof(*ps->wanted_len));
	for (size_t i = 0; i < n; i++) {
		ps->wanted_len[i] = strlen(wanted[i]);
		ps->wanted_lens |= (uint64_t)1 << (ps->wanted_len[i] < 63 ? ps->wanted_len[i] : 63);
	}
}

static void parser_free(struct parser *ps)
{
	scratch_free(&ps->mem);
}

/* Appends ps's kept stanzas (and the dpkg stanza's architecture, when out
 * has none yet) to out, copied out of ps's memory, their lines counted
 * first more. */
static void kept_out(const struct parser *ps, size_t first, struct dpkg_status *out)
{
	if (ps->kept_n)
		out->pkgs = xrealloc(out->pkgs, (out->count + ps->kept_n) * sizeof(*out->pkgs));
	for (size_t k = 0; k < ps->kept_n; k++) {
		const struct dpkg_pkg *from = &ps->kept[k];
		out->pkgs[out->count++] = (struct dpkg_pkg){ .name = xstrdup(from->name),
							     .arch = xstrdup(from->arch),
							     .version = xstrdup(from->version),
							     .state = xstrdup(from->state),
							     .multiarch = xstrdup(from->multiarch),
							     .provides = xstrdup(from->provides),
							     .line = from->line + first };
	}
	if (!out->native_arch && ps->native_arch)
		out->native_arch = xstrdup(ps->native_arch);
}

/* The parse's error as the caller sees it: "FILE:LINE: problem", the line
 * counted from the start of the file (first is the lines before the part
 * the parser read). */
/* ps's error as the caller gets it: "PATH:LINE: why", lines counted from
 * first; a read error has no line and is said whole. */
static void error_out(const struct parser *ps, size_t first, char *err, size_t err_size)
{
	if (ps->err_line)
		snprintf(err, err_size, "%s:%zu: %s", ps->path, first + ps->err_line, ps->err);
	else
		snprintf(err, err_size, "%s", ps->err);
}

int dpkg_status_parse(const char *path, const char *content, size_t len, const char *const *wanted,
		      struct dpkg_status *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	struct parser ps;
	size_t mem_size = scratch_size(len, 0, false, wanted);
	char *mem = xcalloc(1, mem_size);
	struct known_keys known;
	known_keys_build(&known);
	parser_init(&ps, path, wanted, len, false, &known, mem, mem_size);
	int rc = parse_region(&ps, content, len);
	if (rc < 0)
		error_out(&ps, 0, err, err_size);
	else
		kept_out(&ps, 0, out);
	parser_free(&ps);
	free(mem);
	return rc;
}

/* Parses the bytes [from, to) of the open file (to the end of the file when
 * last), through one small buffer, whole stanzas at a time: where the file
 * is not parsed mapped (dpkg_status_load_parts: it cannot be, it changed
 * under the map, or the caller asks for a buffer). (An earlier measure
 * found a map's page faults dearer than this copy when one thread touched
 * them all; the parts now fault their own pages in, fault-around mapping
 * 16 at a time.) A stanza longer than the buffer doubles it.
 * from and to are stanza boundaries (file_cut). Returns 0, or -1 with the
 * error in ps (err_line 0 and ps->err whole when it has no line); *short_read
 * is set when the file ended before to (it changed while read). */
static int parse_range(struct parser *ps, int fd, off_t from, off_t to, bool last, size_t buffer_size, bool *short_read)
{
	size_t cap = buffer_size ? buffer_size : 1, have = 0;
	char *buf = scratch_alloc(&ps->mem, cap);
	off_t at = from;
	bool eof = !last && at >= to;
	int rc = 0;
	while (rc == 0) {
		while (!eof && have < cap) {
			size_t want = cap - have;
			if (!last && (off_t)want > to - at)
				want = (size_t)(to - at);
			ssize_t n = pread(fd, buf + have, want, at);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				snprintf(ps->err, sizeof(ps->err), "%s: %s", ps->path, strerror(errno));
				rc = -1;
				break;
			}
			at += n;
			have += (size_t)n;
			if (n == 0 && !last)
				*short_read = true;
			eof = n == 0 || (!last && at >= to);
		}
		if (rc < 0)
			break;
		size_t cut = eof ? have : stanzas_end(buf, have);
		if (cut == 0 && !eof) {
			if (cap >= DPKG_STATUS_MAX_STANZA) { /* memory stays bounded */
				snprintf(ps->err, sizeof(ps->err),
					 "%s: a stanza longer than %d MiB: not a dpkg status file", ps->path,
					 DPKG_STATUS_MAX_STANZA >> 20);
				rc = -1;
				break;
			}
			buf = scratch_grow(&ps->mem, buf, have, 2 * cap);
			cap *= 2;
			continue;
		}
		rc = parse_region(ps, buf, cut);
		if (eof)
			break;
		memmove(buf, buf + cut, have - cut);
		have -= cut;
	}
	return rc;
}

/* The error a parser stopped at, as the caller sees it. */
/* Where the part that starts near x begins: just after the first empty line
 * (two newlines: the bytes at c-2 and c-1) with c >= x, the same place
 * parse_range's buffer is cut at; the file's end when none. dpkg's
 * parse_stanza() (lib/dpkg/parse.c, 1.21.22) ends a stanza where the
 * newline that ends a field's value is followed by another newline, and
 * skips the newlines before the next stanza: every empty line ends a stanza
 * (or follows the error that stops the parse), so a part that starts there
 * reads as the whole file's parse reads it from there. A ^Z at a line start
 * ends a stanza too, but no cut is made there: the cuts need only be stanza
 * ends, not every one, and after an empty line dpkg is between stanzas
 * whatever ^Z came before (a value's line end followed by a newline ends
 * the stanza; ^Z between stanzas is skipped as a newline is). */
static off_t file_cut(int fd, off_t x, off_t size)
{
	char buf[4096];
	off_t at = x >= 2 ? x - 2 : 0;
	while (at < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 2)
			break;
		for (ssize_t i = 0; i + 1 < n; i++)
			if (buf[i] == '\n' && buf[i + 1] == '\n' && at + i + 2 >= x)
				return at + i + 2;
		at += n - 1; /* the last byte again: a pair may straddle */
	}
	return size;
}

/* One part of the file, parsed on its own thread: the index-th of parts
 * shares of the size bytes fstat gave, from just after the first empty
 * line in it (the start of the file for the first) to where the next one
 * starts (the end of the file for the last). Each thread finds its own
 * part's ends (file_cut), so that the thread that starts the others does
 * not read the file first. */
struct part {
	struct parser ps;
	size_t index, parts;
	off_t size;
	off_t from, to; /* what it read: to is the end of the file when last */
	bool last, empty, short_read;
	const char *map; /* the file mapped (its size bytes), or NULL: read through a buffer of buffer_size */
	int fd, rc;
	size_t buffer_size;
	atomic_ushort *claim; /* the parts' shared buckets of name hashes (claim_names) */
	size_t claim_mask;
	uint32_t *maybe; /* its slots whose names another part may have too */
	size_t maybe_n, maybe_cap;
};

struct parts {
	struct part *part;
};

/* file_cut in the mapped file. */
static off_t map_cut(const char *map, off_t x, off_t size)
{
	const char *p = map + (x >= 2 ? x - 2 : 0), *end = map + size;
	while ((p = memchr(p, '\n', (size_t)(end - p))) && p + 1 < end) {
		if (p[1] == '\n' && p + 2 - map >= x)
			return p + 2 - map;
		p++;
	}
	return size;
}

static off_t part_cut(const struct part *p, off_t x)
{
	return p->map ? map_cut(p->map, x, p->size) : file_cut(p->fd, x, p->size);
}

/* The most parts when threads must be started for them (no worker
 * waits): this thread starts each (~35 us of its own time a thread on the
 * 16-vCPU host, before it parses its own part) and each new thread's CPU
 * must wake (~100-150 us there). A 1 MB file's 7 parts then started six
 * threads (~0.2 ms of this thread's time, measured there) for parts of
 * under ~0.15 ms of parsing each (the one-piece parse takes ~1 ms on the
 * build VM, less there): past 4 parts, a part's thread costs about what
 * it saves. */
#define DPKG_STATUS_THREAD_PARTS 4

/* Finds the part's ends and parses it: returns 0 (the outcome in p). */
static int read_part(void *arg)
{
	struct part *p = arg;
	off_t share = p->size / (off_t)p->parts;
	p->from = p->index ? part_cut(p, share * (off_t)p->index) : 0;
	if (p->index && p->from >= p->size) {
		p->empty = true; /* no empty line after its share's start: the part before reads to the end */
		return 0;
	}
	p->last = p->index + 1 == p->parts;
	p->to = p->last ? p->size : part_cut(p, share * (off_t)(p->index + 1));
	/* a part with no empty line after its end is the last one, read to
	 * the end of the file (which may have grown since fstat) */
	p->last = p->last || p->to >= p->size;
	if (p->map)
		p->rc = parse_region(&p->ps, p->map + p->from, (size_t)(p->to - p->from));
	else
		p->rc = parse_range(&p->ps, p->fd, p->from, p->to, p->last, p->buffer_size, &p->short_read);
	return 0;
}

/* After its parse, on its own thread: each name of the part claims its
 * hash's bucket for the part; a bucket another part claimed first may hold
 * the same name, which the join then looks up in every part (the only
 * names that can be a duplicate across parts; a bucket shared by two
 * names is only looked at for nothing). */
static void claim_names(struct part *p)
{
	struct parser *ps = &p->ps;
	unsigned short me = (unsigned short)(p->index + 1);
	for (size_t k = 0; k < ps->slots_cap; k++) {
		if (!ps->slots[k].name_at)
			continue;
		unsigned short was = 0;
		if (atomic_compare_exchange_strong(&p->claim[ps->slots[k].hash & p->claim_mask], &was, me) || was == me)
			continue;
		if (p->maybe_n == p->maybe_cap) {
			size_t cap = p->maybe_cap ? 2 * p->maybe_cap : 32;
			p->maybe = scratch_grow(&ps->mem, p->maybe, p->maybe_n * sizeof(*p->maybe),
						cap * sizeof(*p->maybe));
			p->maybe_cap = cap;
		}
		p->maybe[p->maybe_n++] = (uint32_t)k;
	}
}

static void parse_part(struct part *p)
{
	/* in the map, a page the file no longer has (cut short under it) is
	 * a short read: the file is read again */
	if (!p->map)
		read_part(p);
	else if (mapped_file_guard(p->map, p->map + p->size, read_part, p) != 0)
		p->short_read = true;
	if (p->parts > 1 && !p->empty && !p->short_read)
		claim_names(p);
}

/* Whether the parts read the file whole, each from where the one before
 * it ended, to the end of the file: the threads found the ends on their
 * own, and agree unless the file changed under them (dpkg replaces its
 * status file by a rename, never in place). */
static bool parts_whole(const struct part *part, size_t n)
{
	off_t at = 0;
	bool ended = false;
	for (size_t i = 0; i < n; i++) {
		const struct part *p = &part[i];
		if (p->short_read || p->empty != ended || (!p->empty && p->from != at))
			return false;
		at = p->to;
		ended = ended || p->last;
	}
	return ended;
}

static void parse_parts(void *arg, size_t begin, size_t end)
{
	struct parts *all = arg;
	for (size_t i = begin; i < end; i++) {
		tl_mark("part begin");
		parse_part(&all->part[i]);
		tl_mark("part end");
	}
}

/* The first duplicate instance in a part given the parts before it
 * (parse_find_set_slot's rule across parts): its line in the part, 0 for
 * none, the name as written there and which of dpkg's two errors. */
struct part_dup {
	size_t line;
	const char *name;
	bool multiple;
};

/* Name (hashed h) looked up in every part in file order, its instances
 * counted as the one-piece parse counts them: an instance of a name the
 * earlier parts hold as not Multi-Arch: same is one too many, whatever it
 * is; after only "same" ones, the first that is not. Notes in dup[j] the
 * first such instance of part j when it comes before what dup[j] holds. */
static void join_name(const struct part *part, size_t n, const char *name, uint32_t h, struct part_dup *dup)
{
	size_t len = strlen(name);
	uint32_t single = 0, multi = 0; /* the parts' before j */
	for (size_t j = 0; j < n; j++) {
		const struct parser *ps = &part[j].ps;
		if (!ps->slots_cap)
			continue;
		const struct name_slot *sl = slot_probe(ps, name, len, h);
		if (!sl->name_at)
			continue;
		if ((sl->single || sl->multi) && (single || (multi && sl->single))) {
			const struct first_seen *f = &ps->firsts[sl - ps->slots];
			size_t line = single ? f->first_line : f->single_line;
			if (!dup[j].line || line < dup[j].line)
				dup[j] = (struct part_dup){ line, ps->names.buf + (single ? f->first_at : f->single_at),
							    single ? f->first_single : false };
		}
		single += sl->single;
		multi += sl->multi;
	}
}

/* Joins the parts in file order into out, as the one-piece parse would
 * have left it: lines counted from the file's start, the first error in
 * file order (a duplicate across parts included), the kept stanzas in
 * order, the first dpkg stanza's architecture. Only the names the parts
 * found in a bucket another part claimed are looked up (claim_names): the
 * thread that joins does not walk every name. */
static int parts_join(struct part *part, size_t n, struct dpkg_status *out, char *err, size_t err_size)
{
	struct part_dup *dup = n > 1 ? xcalloc(n, sizeof(*dup)) : NULL;
	for (size_t i = 0; i < n; i++)
		for (size_t m = 0; m < part[i].maybe_n; m++) {
			const struct name_slot *sl = &part[i].ps.slots[part[i].maybe[m]];
			join_name(part, n, part[i].ps.names.buf + sl->name_at, sl->hash, dup);
		}
	size_t first = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct part *p = &part[i];
		size_t line = dup ? dup[i].line : 0;
		if (line && (p->rc == 0 || !p->ps.err_line || line <= p->ps.err_line)) {
			/* (told by the first part's parser: it has no error of its
			 * own when a later part is joined) */
			duplicate_error(&part[0].ps, line, dup[i].name, strlen(dup[i].name), dup[i].multiple);
			error_out(&part[0].ps, first, err, err_size);
			rc = -1;
		} else if (p->rc < 0) {
			error_out(&p->ps, first, err, err_size);
			rc = -1;
		}
		if (rc)
			break;
		kept_out(&p->ps, first, out);
		first += p->ps.line;
	}
	free(dup);
	return rc;
}

static int load_parts(const char *path, int fd, const char *map, off_t size, const char *const *wanted,
		      size_t buffer_size, size_t parts, struct dpkg_status *out, char *err, size_t err_size)
{
	if (map)
		buffer_size = 0; /* parsed where it lies */
	struct part *part = xcalloc(parts, sizeof(*part));
	/* every part's memory in one allocation, made here before the threads
	 * start, each part's share whole pages (two threads meet on a page
	 * only at a share's last bytes, seldom used), sized for its share of
	 * the file (a part is a stanza longer or shorter: the name table's
	 * first size has room to spare, and what outgrows the share comes from
	 * malloc) */
	size_t share = (size_t)size / parts + 1;
	size_t mem_size = scratch_size(share, buffer_size, parts > 1, wanted);
	/* and the buckets the parts claim their names' hashes in: 8 a
	 * kilobyte of the file, few shared by two names */
	size_t buckets = parts > 1 ? slots_for((size_t)size * 4, false) : 0;
	char *mem = xcalloc(1, parts * mem_size + buckets * sizeof(atomic_ushort));
	atomic_ushort *claim = (atomic_ushort *)(void *)(mem + parts * mem_size);
	struct known_keys known;
	known_keys_build(&known);
	for (size_t i = 0; i < parts; i++) {
		struct part *p = &part[i];
		*p = (struct part){ .index = i,
				    .parts = parts,
				    .size = size,
				    .map = map,
				    .fd = fd,
				    .buffer_size = buffer_size,
				    .claim = claim,
				    .claim_mask = buckets - 1 };
		parser_init(&p->ps, path, wanted, share, parts > 1, &known, mem + i * mem_size, mem_size);
	}
	struct parts all = { part };
	tl_mark("parts ready to start");
	if (parts > 1)
		parallel_for(parts, 1, parts, parse_parts, &all);
	else
		parse_parts(&all, 0, 1);
	tl_mark("parts joined");
	/* a file cut short under the map reads as zeros up to its last page's
	 * end: only its size says it changed */
	struct stat now;
	bool changed = !parts_whole(part, parts) || (map && (fstat(fd, &now) != 0 || now.st_size != size));
	int rc = changed ? -4 : parts_join(part, parts, out, err, err_size);
	tl_mark("parts_join done");
	for (size_t i = 0; i < parts; i++)
		parser_free(&part[i].ps);
	free(mem);
	free(part);
	return rc;
}

void (*dpkg_status_mapped_hook)(int fd);

int dpkg_status_load_parts(const char *path, const char *const *wanted, size_t buffer_size, size_t parts,
			   struct dpkg_status *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	/* non-blocking, a regular file, a size cap (lib/safe_io.h): a FIFO or
	 * /dev/zero planted as the status file is an error at once */
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG, SAFE_MAX_STATUS, &st, err, err_size);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? -2 : -3;
	tl_mark("status file open");
	if (!parts) { /* a part per DPKG_STATUS_PART bytes, one per CPU that is free */
		parts = (size_t)st.st_size / DPKG_STATUS_PART;
		/* with workers waiting (parallel_prestart), one part each and
		 * this thread's: no thread to start, whose CPU's wake would cost
		 * more than its part; else the CPUs idle now, and at most
		 * DPKG_STATUS_THREAD_PARTS */
		unsigned workers = parts > 1 ? parallel_workers() : 0;
		size_t idle = workers ? workers : parts > 1 ? idle_cpus() : 0;
		if (!workers && idle + 1 > DPKG_STATUS_THREAD_PARTS)
			idle = DPKG_STATUS_THREAD_PARTS - 1;
		if (parts > idle + 1) /* this thread's own CPU, and the idle ones */
			parts = idle + 1;
		if (parts > 1) { /* what a container's CPU quota pays for */
			unsigned cpus = usable_cpus();
			parts = parts < cpus ? parts : cpus;
		}
	}
#ifdef GPUGATE_TIMELINE /* the part count forced, to compare counts on the host */
	if (getenv("GPUGATE_TL_PARTS"))
		parts = (size_t)atoi(getenv("GPUGATE_TL_PARTS"));
#endif
	if ((off_t)parts > st.st_size)
		parts = (size_t)st.st_size;
	if (parts > 4096) /* (a part's number is kept in 16 bits: claim_names) */
		parts = 4096;
	if (!parts)
		parts = 1;
	tl_mark("part count chosen");
	/* buffer_size 0: the file parsed where it lies in the page cache,
	 * mapped, without the copy of every byte that read(2) makes and
	 * without a read buffer's pages (a part's thread finds its part
	 * there, and faults its pages in itself); a file too large for a
	 * stanza to be bounded by the file (DPKG_STATUS_MAX_STANZA, the read
	 * buffer's rule) is read */
	const char *map = NULL;
	bool mapped = !buffer_size && st.st_size > 0 && st.st_size <= DPKG_STATUS_MAX_STANZA;
#ifdef GPUGATE_TIMELINE /* the buffered read, to compare on the host */
	mapped = mapped && !getenv("GPUGATE_TL_NOMMAP");
#endif
	if (mapped) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		map = m == MAP_FAILED ? NULL : m;
		tl_mark("mapped");
		if (map && dpkg_status_mapped_hook)
			dpkg_status_mapped_hook(fd);
	}
	if (!buffer_size)
		buffer_size = DPKG_STATUS_BUFFER; /* where there is no map, or the file is read again */
	int rc = load_parts(path, fd, map, st.st_size, wanted, buffer_size, parts, out, err, err_size);
	if (rc == -4) /* the file changed under the parts: read it again in one */
		rc = load_parts(path, fd, NULL, st.st_size, wanted, buffer_size, 1, out, err, err_size);
	if (map)
		munmap((void *)map, (size_t)st.st_size);
	close(fd);
	if (rc < 0)
		dpkg_status_free(out);
	tl_mark("status file loaded");
	return rc;
}

int dpkg_status_load_buffered(const char *path, const char *const *wanted, size_t buffer_size, struct dpkg_status *out,
			      char *err, size_t err_size)
{
	return dpkg_status_load_parts(path, wanted, buffer_size, 1, out, err, err_size);
}

int dpkg_status_load(const char *path, const char *const *wanted, struct dpkg_status *out, char *err, size_t err_size)
{
	return dpkg_status_load_parts(path, wanted, 0, 0, out, err, err_size);
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

struct name_search {
	const char *name;
	size_t len;
	bool found;
};

static bool match_name(const struct relfield_item *it, void *data)
{
	struct name_search *ns = data;
	if (it->name_len == ns->len && strncasecmp(it->name, ns->name, ns->len) == 0)
		ns->found = true;
	return !ns->found;
}

/* The names of a Provides value, as f_dependency() reads them. */
bool dpkg_provides_names(const char *v, size_t n, const char *name)
{
	struct name_search ns = { name, strlen(name), false };
	char err[8];
	relfield_walk("Provides", v, n, RELFIELD_PROVIDES, match_name, &ns, err, sizeof(err));
	return ns.found;
}
