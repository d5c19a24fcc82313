#include "kmsg.h"

#include "safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

/* XPU Manager's pre-check list of kernel messages that mean a sick GPU. */
const char *const kmsg_patterns[] = {
	"GPU HANG",
	"GuC initialization failed",
	"ERROR.*GUC",
	"IOMMU catastrophic error",
	"LMEM not initialized by firmware",
	"timed out waiting for forcewake ack request",
	"i915.*drm.*ERROR",
	"xe.*drm.*ERROR",
	NULL,
};

#define PATTERN_COUNT (ARRAY_SIZE(kmsg_patterns) - 1)
#define MAX_BYTES     (64u << 20) /* far more than any kernel ring buffer */

struct scanner {
	regex_t re[PATTERN_COUNT];
	struct kmsg_scan *out;
	bool after_only; /* match only records after this sequence number */
	unsigned long long after_seq;
};

/* A /dev/kmsg record is "PRI,SEQ,USEC,FLAGS[,...];message"; continuation
 * lines (" KEY=value") carry metadata only. Plain text lines pass as they are. */
static void scan_line(struct scanner *s, char *line)
{
	if (!*line || *line == ' ')
		return;
	const char *msg = line;
	double ts = -1;
	bool has_seq = false;
	unsigned long long seq = 0;
	char *semi = strchr(line, ';');
	if (semi) {
		unsigned pri;
		unsigned long long usec;
		if (sscanf(line, "%u,%llu,%llu", &pri, &seq, &usec) == 3) {
			msg = semi + 1;
			ts = (double)usec / 1e6;
			has_seq = true;
			s->out->has_seq = 1;
			s->out->last_seq = seq;
		}
	}
	s->out->records++;
	if (s->after_only && (!has_seq || seq <= s->after_seq))
		return;
	for (size_t i = 0; i < PATTERN_COUNT; i++) {
		if (regexec(&s->re[i], msg, 0, NULL, 0) != 0)
			continue;
		if (s->out->match_count < KMSG_MAX_KEPT) {
			struct kmsg_match *m = &s->out->matches[s->out->match_count];
			m->line = ts >= 0 ? xasprintf("[%12.6f] %.400s", ts, msg) : xasprintf("%.400s", msg);
			text_sanitize(m->line);
			m->pattern = kmsg_patterns[i];
		}
		s->out->match_count++;
		return;
	}
}

static int scan(const char *path, double deadline, struct scanner *s, struct kmsg_scan *out);

int kmsg_scan(const char *path, double deadline, struct kmsg_scan *out)
{
	struct scanner s = { .out = out };
	return scan(path, deadline, &s, out);
}

int kmsg_scan_after(const char *path, unsigned long long after_seq, double deadline, struct kmsg_scan *out)
{
	struct scanner s = { .out = out, .after_only = true, .after_seq = after_seq };
	return scan(path, deadline, &s, out);
}

static int scan(const char *path, double deadline, struct scanner *sp, struct kmsg_scan *out)
{
	memset(out, 0, sizeof(*out));
	/* the kernel log (character device 1:11, Linux devices.txt) or a file of
	 * log lines; a FIFO, or /dev/zero planted as dev/kmsg under --root, is
	 * refused before the first read (lib/safe_io.h) */
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG | SAFE_KIND_CHR, 0, &st, out->error, sizeof(out->error));
	if (fd < 0)
		return fd;
	if (S_ISCHR(st.st_mode) && (major(st.st_rdev) != 1 || minor(st.st_rdev) != 11)) {
		snprintf(out->error, sizeof(out->error), "%s is character device %u:%u, not the kernel log (1:11)",
			 path, major(st.st_rdev), minor(st.st_rdev));
		close(fd);
		return -ENODEV;
	}
	struct scanner s = *sp;
	for (size_t i = 0; i < PATTERN_COUNT; i++)
		if (regcomp(&s.re[i], kmsg_patterns[i], REG_EXTENDED | REG_NOSUB) != 0)
			abort(); /* the patterns are constants: a failure is a bug */
	/* /dev/kmsg returns one record per read(); a file returns many lines. */
	size_t cap = 16384, used = 0, total = 0;
	char *buf = xmalloc(cap + 1);
	int rc = 0;
	for (;;) {
		if ((out->records & 255) == 0 && monotonic_seconds() >= deadline) {
			out->stopped_early = 1;
			break;
		}
		if (cap - used < 8192) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			continue; /* records were overwritten while we read: go on with the next */
		if (n < 0 && errno == EAGAIN)
			break; /* the end of the ring buffer */
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		total += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < used; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			scan_line(&s, buf + start);
			start = i + 1;
		}
		memmove(buf, buf + start, used - start);
		used -= start;
		if (total > MAX_BYTES) {
			out->stopped_early = 1;
			break;
		}
	}
	if (rc == 0 && used) {
		buf[used] = '\0';
		scan_line(&s, buf);
	}
	free(buf);
	close(fd);
	for (size_t i = 0; i < PATTERN_COUNT; i++)
		regfree(&s.re[i]);
	if (rc < 0 && out->records == 0) {
		kmsg_scan_free(out);
		snprintf(out->error, sizeof(out->error), "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	return 0;
}

void kmsg_scan_free(struct kmsg_scan *scan)
{
	size_t kept = scan->match_count < KMSG_MAX_KEPT ? scan->match_count : KMSG_MAX_KEPT;
	for (size_t i = 0; i < kept; i++)
		free(scan->matches[i].line);
	memset(scan, 0, sizeof(*scan));
}
