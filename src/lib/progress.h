/* One progress line on stderr for long commands (hf verify, hf fetch):
 * bytes done of total, rate, time left, redrawn in place at most four times
 * a second, from a quarter second on, and once at the end. Only on
 * a terminal, and never with --quiet: the caller says whether it is on
 * (progress_wanted). The caller serializes calls (one thread draws). */
#ifndef GPUGATE_LIB_PROGRESS_H
#define GPUGATE_LIB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_INTERVAL 0.25 /* seconds between redraws */

struct progress {
	const char *label; /* "hf verify", "hf.integrity", "hf fetch" */
	bool on;
	bool drawn; /* a line is on the screen */
	double start, next;
};

/* Whether a progress line belongs on stderr: a terminal, and not quiet. */
bool progress_wanted(bool quiet);
void progress_start(struct progress *p, const char *label, bool on);
/* Redraws the line if it is on and due; extra (may be NULL) ends the line
 * ("12/40 files"). */
void progress_update(struct progress *p, uint64_t done, uint64_t total, const char *extra);
/* Erases the line, for a message to take its place (the next update draws it again). */
void progress_clear(struct progress *p);
/* The last state, once, and the newline that keeps it (when on). */
void progress_end(struct progress *p, uint64_t done, uint64_t total, const char *extra);
/* "1.5 GiB": binary units, for the line and messages. */
void progress_bytes(double bytes, char *out, unsigned size);
/* "1:05" or "2:03:07". */
void progress_clock(double seconds, char *out, unsigned size);

#endif
