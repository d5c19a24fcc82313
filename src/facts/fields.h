/* The typed facts' one encoder and one decoder: each group (src/facts/GROUP.c)
 * writes each of its structs as one table of fields, {details key, kind,
 * where the member is, when the encoder leaves it out, what an absent key
 * reads as}, and facts_encode / facts_decode walk the table. A key is named
 * once (the group's #define K_...), its type once (the field's kind), so the
 * encoding and the decoding cannot drift apart.
 *
 * Decoding: a missing key reads as its field's .absent (0, false, NULL by
 * default); a key of the wrong type is an error naming the check and the
 * key (src/facts/decode.c reads one member), so a hostile or damaged report
 * is refused rather than half read. A FACT_PROBE field is a member of the
 * probe child's own object (src/backend/protocol.c), copied into the details
 * as the child wrote it: the schema leaves its type open, the encoder leaves
 * it be, and the decoder reads another type as not reported, as
 * src/backend/probe_result.c does. */
#ifndef GPUGATE_FACTS_FIELDS_H
#define GPUGATE_FACTS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum fact_kind {
	FACT_TEXT,         /* const char *: text from outside, written sanitized (json_text; NULL: "") */
	FACT_NAME,         /* const char *: a name written as it is (json_string): gpugate's or the probe's */
	FACT_TEXT_OR_NULL, /* const char *: json_text, or null for NULL; reads null as NULL */
	FACT_BOOL,         /* bool */
	FACT_COUNT,        /* uint64_t: an integer from 0 */
	FACT_INT,          /* long or long long (by the member's size): any integer */
	FACT_REAL,         /* double: any number, written as a real */
	FACT_LIST,         /* json_t *: a list; the encoder takes it (NULL: []), the decoder borrows it */
	FACT_OBJECT,       /* json_t *: an object; the encoder shares it, the decoder borrows it */
	FACT_ANY,          /* json_t *: any value, borrowed (decode only: a FACT_PROBE member) */
	FACT_ITEMS,        /* an array of structs and its count, each item by .items (decode only:
			    * the checks build such a list item by item and hand it over whole) */
	FACT_CUSTOM,       /* the field's own .encode and .decode: a rule no kind above has */
};

/* when the encoder leaves a field out */
enum {
	FACT_OMIT_NULL = 1 << 0,     /* a NULL string or object */
	FACT_OMIT_EMPTY = 1 << 1,    /* a NULL or "" string */
	FACT_OMIT_NEGATIVE = 1 << 2, /* an integer below 0 (-1: not reported) */
	FACT_PROBE = 1 << 3,         /* the probe child's member: not encoded, read leniently (above) */
};

struct fact_table;

struct fact_field {
	const char *key;
	enum fact_kind kind;
	size_t offset; /* of the member in the struct */
	size_t size;   /* of the member (FACT_INT: long or long long) */
	unsigned flags;
	long long absent;     /* FACT_INT, FACT_BOOL: what a missing key reads as */
	const char *fallback; /* FACT_TEXT: what a NULL string is written as (else "") */
	size_t has;           /* 1 + the offset of a bool set when the key was there with its type; 0: none */
	/* FACT_ITEMS */
	const struct fact_table *items;
	size_t count; /* offset of the size_t count */
	/* FACT_CUSTOM: encode sets the key in o; decode reads it from o (check and key in err) */
	void (*encode)(json_t *o, const char *key, const void *member);
	int (*decode)(const json_t *o, const char *check, const char *key, void *member, char *err, size_t errsz);
};

/* One struct's fields; for the items of a list, what one item is called in
 * an error ("relation 2") and, where a rule spans fields, a hook run after
 * each item is read: 0 keeps the item, 1 drops it. */
struct fact_table {
	const char *item;
	size_t size; /* of the struct */
	const struct fact_field *fields;
	size_t n_fields;
	int (*after)(const json_t *item, void *dst, size_t position);
};

#define FACT_MEMBER(type, member)   .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define FACT_HAS(type, member)      .has = offsetof(type, member) + 1
#define FACT_COUNT_OF(type, member) .count = offsetof(type, member)
#define FACT_TABLE_AFTER(name, type, item_name, fields_array, after)                   \
	static const struct fact_table name = { item_name, sizeof(type), fields_array, \
						sizeof(fields_array) / sizeof((fields_array)[0]), after }
#define FACT_TABLE(name, type, item_name, fields_array) FACT_TABLE_AFTER(name, type, item_name, fields_array, NULL)

/* Sets each encodable field of src in o, in the table's order. */
void facts_encode(json_t *o, const struct fact_table *t, const void *src);
/* The same into a new object (an item of a list). */
json_t *facts_encode_new(const struct fact_table *t, const void *src);

/* Reads details into the members of dst that the table names (a missing
 * key: its .absent; other members are left as they are, so several checks'
 * tables may fill one struct); present (when not NULL) says whether details
 * held anything (NULL or {}: no, and nothing is read). check names the check
 * in errors. Strings and borrowed values point into details, which must
 * outlive dst; FACT_ITEMS arrays are allocated (never NULL; facts_release
 * frees them). 0, or -1 with the reason in err, the table's members zeroed
 * and *present false. */
int facts_decode(const json_t *details, const struct fact_table *t, void *dst, const char *check, bool *present,
		 char *err, size_t errsz);
/* Frees the FACT_ITEMS arrays facts_decode allocated in dst and zeroes the
 * table's members. */
void facts_release(const struct fact_table *t, void *dst);

#endif
