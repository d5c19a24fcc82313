/* "did you mean X?": the known name nearest to a misspelt one, by edit
 * distance (Levenshtein: insertions, deletions, substitutions), for unknown
 * check ids (--only/--skip) and unknown spec keys alike. The caller offers
 * each known name in turn; the first of the nearest wins. */
#ifndef GPUGATE_NEAREST_H
#define GPUGATE_NEAREST_H

#include <stddef.h>

struct nearest {
	const char *word; /* the unknown name */
	const char *best; /* the nearest name offered so far, or NULL */
	size_t distance;  /* its edit distance to word */
};

void nearest_init(struct nearest *n, const char *word);
void nearest_offer(struct nearest *n, const char *candidate);
/* The nearest name when it is close enough to be a likely misspelling (at
 * most a third of the longer name's length, and at least 1 edit allowed),
 * else NULL. */
const char *nearest_result(const struct nearest *n);
/* Edit distance between a and b; names longer than 255 bytes count as far. */
size_t edit_distance(const char *a, const char *b);

#endif
