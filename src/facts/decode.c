#include "facts/decode.h"

#include <stdio.h>

int facts_details(const json_t *details, const char *check, bool *present, char *err, size_t errsz)
{
	*present = false;
	if (!details)
		return 0;
	if (!json_is_object(details)) {
		snprintf(err, errsz, "%s: its details are not an object", check);
		return -1;
	}
	*present = json_object_size(details) > 0;
	return 0;
}

static int wrong(const char *check, const char *key, const char *what, char *err, size_t errsz)
{
	snprintf(err, errsz, "%s: \"%s\" is not %s", check, key, what);
	return -1;
}

int facts_str(const json_t *o, const char *check, const char *key, const char **out, char *err, size_t errsz)
{
	const json_t *v = json_object_get(o, key);
	*out = json_string_value(v);
	return v && !json_is_string(v) ? wrong(check, key, "a string", err, errsz) : 0;
}

int facts_str_or_null(const json_t *o, const char *check, const char *key, const char **out, char *err, size_t errsz)
{
	const json_t *v = json_object_get(o, key);
	*out = json_string_value(v);
	return v && !json_is_string(v) && !json_is_null(v) ? wrong(check, key, "a string or null", err, errsz) : 0;
}

int facts_bool(const json_t *o, const char *check, const char *key, bool *out, char *err, size_t errsz)
{
	const json_t *v = json_object_get(o, key);
	*out = json_is_true(v);
	return v && !json_is_boolean(v) ? wrong(check, key, "true or false", err, errsz) : 0;
}

int facts_count(const json_t *o, const char *check, const char *key, uint64_t *out, char *err, size_t errsz)
{
	const json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return wrong(check, key, "an integer from 0", err, errsz);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int facts_int(const json_t *o, const char *check, const char *key, long long *out, char *err, size_t errsz)
{
	const json_t *v = json_object_get(o, key);
	*out = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
	return v && !json_is_integer(v) ? wrong(check, key, "an integer", err, errsz) : 0;
}

int facts_list(const json_t *o, const char *check, const char *key, json_t **out, char *err, size_t errsz)
{
	json_t *v = json_object_get(o, key);
	*out = json_is_array(v) ? v : NULL;
	return v && !json_is_array(v) ? wrong(check, key, "a list", err, errsz) : 0;
}
