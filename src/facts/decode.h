/* Reading one member of a check's details, for the facts decoders
 * (src/facts/): a missing member reads as NULL, false or 0, a member of
 * the wrong type is an error naming the check and the key, so a hostile or
 * damaged report is refused rather than half read. Each returns 0, or -1
 * with the reason in err. */
#ifndef GPUGATE_FACTS_DECODE_H
#define GPUGATE_FACTS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Whether details holds anything to decode: NULL or {} is no; -1 (with
 * err) when it is there and not an object. */
int facts_details(const json_t *details, const char *check, bool *present, char *err, size_t errsz);
int facts_str(const json_t *o, const char *check, const char *key, const char **out, char *err, size_t errsz);
/* a string or null (null and missing read as NULL) */
int facts_str_or_null(const json_t *o, const char *check, const char *key, const char **out, char *err, size_t errsz);
int facts_bool(const json_t *o, const char *check, const char *key, bool *out, char *err, size_t errsz);
/* a count or a byte size: an integer from 0 */
int facts_count(const json_t *o, const char *check, const char *key, uint64_t *out, char *err, size_t errsz);
/* any integer */
int facts_int(const json_t *o, const char *check, const char *key, long long *out, char *err, size_t errsz);
/* a list (borrowed) */
int facts_list(const json_t *o, const char *check, const char *key, json_t **out, char *err, size_t errsz);

#endif
