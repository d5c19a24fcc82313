#include "facts/fields.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../result.h"
#include "facts/decode.h"

/* the member a field describes, in the struct at base */
static void *member(const void *base, const struct fact_field *f)
{
	return (char *)base + f->offset;
}

static const char *text_of(const void *base, const struct fact_field *f)
{
	const char *s;
	memcpy(&s, member(base, f), sizeof(s));
	return s;
}

static json_t *json_of(const void *base, const struct fact_field *f)
{
	json_t *j;
	memcpy(&j, member(base, f), sizeof(j));
	return j;
}

/* FACT_INT: the member is a long or a long long; memcpy, as the member's
 * type is only known by its size */
static long long int_of(const void *base, const struct fact_field *f)
{
	if (f->size == sizeof(long long)) {
		long long v;
		memcpy(&v, member(base, f), sizeof(v));
		return v;
	}
	long v;
	memcpy(&v, member(base, f), sizeof(v));
	return v;
}

static void set_int(void *base, const struct fact_field *f, long long v)
{
	if (f->size == sizeof(long long)) {
		memcpy(member(base, f), &v, sizeof(v));
	} else {
		long l = (long)v;
		memcpy(member(base, f), &l, sizeof(l));
	}
}

/* A field's key is the group's #define, ASCII: set without jansson's UTF-8
 * pass over it (eight GPUs' nine keys, every run). */
static void set_field(json_t *o, const struct fact_field *f, json_t *v)
{
	json_object_set_new_nocheck(o, f->key, v);
}

static void encode_field(json_t *o, const struct fact_field *f, const void *src)
{
	const void *m = member(src, f);
	const char *s;
	json_t *j;
	switch (f->kind) {
	case FACT_TEXT:
	case FACT_NAME:
		s = text_of(src, f);
		if ((!s && (f->flags & (FACT_OMIT_NULL | FACT_OMIT_EMPTY))) ||
		    (s && !*s && (f->flags & FACT_OMIT_EMPTY)))
			return;
		if (!s && f->fallback)
			s = f->fallback;
		set_field(o, f, f->kind == FACT_NAME ? json_string(s) : json_text(s));
		return;
	case FACT_TEXT_OR_NULL:
		set_field(o, f, json_text_or_null(text_of(src, f)));
		return;
	case FACT_BOOL:
		set_field(o, f, json_boolean(*(const bool *)m));
		return;
	case FACT_COUNT:
		set_field(o, f, json_integer((json_int_t) * (const uint64_t *)m));
		return;
	case FACT_INT:
		if (int_of(src, f) < 0 && (f->flags & FACT_OMIT_NEGATIVE))
			return;
		set_field(o, f, json_integer((json_int_t)int_of(src, f)));
		return;
	case FACT_REAL:
		set_field(o, f, json_real(*(const double *)m));
		return;
	case FACT_LIST:
		j = json_of(src, f);
		set_field(o, f, j ? j : json_array());
		return;
	case FACT_OBJECT:
		if ((j = json_of(src, f)))
			set_field(o, f, json_incref(j));
		return;
	case FACT_CUSTOM:
		f->encode(o, f->key, m);
		return;
	case FACT_ANY:
	case FACT_ITEMS:
		return; /* decode only (fields.h) */
	}
}

void facts_encode(json_t *o, const struct fact_table *t, const void *src)
{
	for (size_t i = 0; i < t->n_fields; i++)
		if (!(t->fields[i].flags & FACT_PROBE))
			encode_field(o, &t->fields[i], src);
}

json_t *facts_encode_new(const struct fact_table *t, const void *src)
{
	json_t *o = json_object();
	facts_encode(o, t, src);
	return o;
}

/* A FACT_PROBE member: another type reads as not reported (fields.h). */
static bool probe_has_type(const struct fact_field *f, const json_t *v)
{
	switch (f->kind) {
	case FACT_TEXT:
	case FACT_NAME:
		return json_is_string(v);
	case FACT_BOOL:
		return json_is_boolean(v);
	case FACT_INT:
		return json_is_integer(v);
	case FACT_REAL:
		return json_is_number(v);
	case FACT_ANY:
		return true;
	default:
		return false; /* no other kind is a probe member */
	}
}

static int decode_items(const json_t *list, const struct fact_field *f, void *dst, const char *where, char *err,
			size_t errsz);

static int decode_field(const json_t *o, const struct fact_field *f, void *dst, const char *where, char *err,
			size_t errsz)
{
	void *m = member(dst, f);
	const json_t *v = json_object_get(o, f->key);
	if ((f->flags & FACT_PROBE) && v && !probe_has_type(f, v))
		v = NULL, o = NULL; /* read as if the child had not written it */
	if (f->has)
		*(bool *)((char *)dst + f->has - 1) = v != NULL;
	long long n;
	bool b;
	json_t *j;
	switch (f->kind) {
	case FACT_TEXT:
	case FACT_NAME:
		return facts_str(o, where, f->key, (const char **)m, err, errsz);
	case FACT_TEXT_OR_NULL:
		return facts_str_or_null(o, where, f->key, (const char **)m, err, errsz);
	case FACT_BOOL:
		if (!v) {
			*(bool *)m = f->absent != 0;
			return 0;
		}
		if (facts_bool(o, where, f->key, &b, err, errsz) < 0)
			return -1;
		*(bool *)m = b;
		return 0;
	case FACT_COUNT:
		return facts_count(o, where, f->key, (uint64_t *)m, err, errsz);
	case FACT_INT:
		if (!v) {
			set_int(dst, f, f->absent);
			return 0;
		}
		if (facts_int(o, where, f->key, &n, err, errsz) < 0)
			return -1;
		set_int(dst, f, n);
		return 0;
	case FACT_REAL:
		if (v && !json_is_number(v)) {
			snprintf(err, errsz, "%s: \"%s\" is not a number", where, f->key);
			return -1;
		}
		*(double *)m = json_number_value(v);
		return 0;
	case FACT_LIST:
		if (facts_list(o, where, f->key, &j, err, errsz) < 0)
			return -1;
		memcpy(m, &j, sizeof(j));
		return 0;
	case FACT_OBJECT:
		if (v && !json_is_object(v)) {
			snprintf(err, errsz, "%s: \"%s\" is not an object", where, f->key);
			return -1;
		}
		memcpy(m, &v, sizeof(v));
		return 0;
	case FACT_ANY:
		memcpy(m, &v, sizeof(v));
		return 0;
	case FACT_ITEMS:
		if (facts_list(o, where, f->key, &j, err, errsz) < 0)
			return -1;
		return decode_items(j, f, dst, where, err, errsz);
	case FACT_CUSTOM:
		return f->decode(o, where, f->key, m, err, errsz);
	}
	return 0;
}

static int decode_fields(const json_t *o, const struct fact_table *t, void *dst, const char *where, char *err,
			 size_t errsz)
{
	for (size_t i = 0; i < t->n_fields; i++)
		if (decode_field(o, &t->fields[i], dst, where, err, errsz) < 0)
			return -1;
	return 0;
}

/* The items of list into a new array, as f->items describes one; an item's
 * errors name it by its position ("relation 2"). An item the table's hook
 * drops leaves no slot. */
static int decode_items(const json_t *list, const struct fact_field *f, void *dst, const char *where, char *err,
			size_t errsz)
{
	const struct fact_table *t = f->items;
	size_t n = json_array_size(list), kept = 0;
	char *items = xcalloc(n ? n : 1, t->size);
	memcpy(member(dst, f), &items, sizeof(items));
	for (size_t i = 0; i < n; i++) {
		const json_t *item = json_array_get(list, i);
		void *slot = items + kept * t->size;
		/* "check: relation 2", nested "check: relation 2, installed package 1" (a check id has no space) */
		char at[256];
		snprintf(at, sizeof(at), "%s%s%s %zu", where, strchr(where, ' ') ? ", " : ": ", t->item, i + 1);
		if (!json_is_object(item)) {
			snprintf(err, errsz, "%s is not an object", at);
			return -1;
		}
		if (decode_fields(item, t, slot, at, err, errsz) < 0) {
			*(size_t *)((char *)dst + f->count) = kept + 1; /* so that the release reaches its arrays */
			return -1;
		}
		if (t->after && t->after(item, slot, i) == 1)
			facts_release(t, slot);
		else
			kept++;
	}
	*(size_t *)((char *)dst + f->count) = kept;
	return 0;
}

int facts_decode(const json_t *details, const struct fact_table *t, void *dst, const char *check, bool *present,
		 char *err, size_t errsz)
{
	bool there;
	if (facts_details(details, check, &there, err, errsz) < 0)
		goto fail;
	if (present)
		*present = there;
	/* nothing there: every field reads as absent */
	if (decode_fields(there ? details : NULL, t, dst, check, err, errsz) == 0)
		return 0;
fail:
	facts_release(t, dst);
	if (present)
		*present = false;
	return -1;
}

void facts_release(const struct fact_table *t, void *dst)
{
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct fact_field *f = &t->fields[i];
		void *m = member(dst, f);
		if (f->kind == FACT_ITEMS) {
			char *items;
			memcpy(&items, m, sizeof(items));
			size_t n = *(size_t *)((char *)dst + f->count);
			for (size_t k = 0; items && k < n; k++)
				facts_release(f->items, items + k * f->items->size);
			free(items);
			*(size_t *)((char *)dst + f->count) = 0;
		}
		memset(m, 0, f->size);
		if (f->has)
			*(bool *)((char *)dst + f->has - 1) = false;
	}
}
