/* The kernel log's signs of a sick GPU, read from /dev/kmsg without blocking
 * (the ring buffer of this boot): GPU hangs, GuC and firmware failures,
 * forcewake timeouts, i915/xe drm errors. Also reads a plain text file of
 * log lines, so tests and offline bundles use the same path. */
#ifndef GPUGATE_KMSG_H
#define GPUGATE_KMSG_H

#include <stddef.h>

#define KMSG_MAX_KEPT 20

struct kmsg_match {
	char *line;          /* the message, with its time stamp when it had one */
	const char *pattern; /* the pattern it matched */
};

struct kmsg_scan {
	size_t records;     /* log lines read */
	size_t match_count; /* every matching line; only the first KMSG_MAX_KEPT are kept */
	struct kmsg_match matches[KMSG_MAX_KEPT];
	int stopped_early;           /* 1 when the deadline or the size cap ended the read */
	int has_seq;                 /* 1 when the records carried sequence numbers */
	unsigned long long last_seq; /* then: the last record's */
	char error[640];             /* when kmsg_scan fails: why, naming the file */
};

/* Scans path until the end of the log, or until deadline (monotonic seconds).
 * 0, or -errno with nothing scanned (-EPERM/-EACCES: not permitted to read it). */
int kmsg_scan(const char *path, double deadline, struct kmsg_scan *out);
/* kmsg_scan, matching only the records whose sequence number is above
 * after_seq (a record without one is not matched): the faults logged since a
 * point that an earlier scan's last_seq marked. */
int kmsg_scan_after(const char *path, unsigned long long after_seq, double deadline, struct kmsg_scan *out);
void kmsg_scan_free(struct kmsg_scan *scan);
/* The patterns, for the documentation and tests; NULL-terminated. */
extern const char *const kmsg_patterns[];

#endif
