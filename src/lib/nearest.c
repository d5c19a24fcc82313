/* The nearest known name to a misspelt one (nearest.h). */
#include "nearest.h"

#include <string.h>

#define MAX_NAME 255 /* ids and spec key paths are short; longer is "far" */

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAX_NAME || lb > MAX_NAME)
		return (size_t)-1;
	/* one row of the Wagner-Fischer table at a time */
	size_t row[MAX_NAME + 1];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

void nearest_init(struct nearest *n, const char *word)
{
	n->word = word;
	n->best = NULL;
	n->distance = (size_t)-1;
}

void nearest_offer(struct nearest *n, const char *candidate)
{
	size_t d = edit_distance(n->word, candidate);
	if (d < n->distance) {
		n->best = candidate;
		n->distance = d;
	}
}

const char *nearest_result(const struct nearest *n)
{
	if (!n->best)
		return NULL;
	size_t la = strlen(n->word), lb = strlen(n->best);
	size_t longer = la > lb ? la : lb;
	size_t allowed = longer / 3 > 1 ? longer / 3 : 1;
	return n->distance <= allowed ? n->best : NULL;
}
