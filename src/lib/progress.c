#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "util.h"

bool progress_wanted(bool quiet)
{
	return !quiet && isatty(STDERR_FILENO);
}

void progress_start(struct progress *p, const char *label, bool on)
{
	p->label = label;
	p->on = on;
	p->drawn = false;
	p->start = monotonic_seconds();
	p->next = p->start + PROGRESS_INTERVAL;
}

void progress_bytes(double b, char *out, unsigned size)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;
	while (b >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1024;
		u++;
	}
	snprintf(out, size, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
}

void progress_clock(double s, char *out, unsigned size)
{
	unsigned long t = s > 0 && s < 360000 ? (unsigned long)(s + 0.5) : 0;
	if (t >= 3600)
		snprintf(out, size, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, size, "%lu:%02lu", t / 60, t % 60);
}

static void draw(struct progress *p, uint64_t done, uint64_t total, const char *extra, double now)
{
	double el = now - p->start;
	double rate = el > 0 ? (double)done / el : 0;
	char d[32], t[32], r[32], left[32];
	progress_bytes((double)done, d, sizeof(d));
	progress_bytes((double)total, t, sizeof(t));
	progress_bytes(rate, r, sizeof(r));
	if (rate > 0 && total >= done)
		progress_clock((double)(total - done) / rate, left, sizeof(left));
	else
		snprintf(left, sizeof(left), "?");
	/* \r and erase-to-end: one line redrawn in place */
	fprintf(stderr, "\r%s: %s of %s (%.0f%%), %s/s, %s left%s%s\033[K", p->label, d, t,
		total ? 100.0 * (double)done / (double)total : 100.0, r, left, extra ? ", " : "", extra ? extra : "");
	fflush(stderr);
	p->drawn = true;
}

void progress_update(struct progress *p, uint64_t done, uint64_t total, const char *extra)
{
	if (!p->on)
		return;
	double now = monotonic_seconds();
	if (now < p->next)
		return;
	draw(p, done, total, extra, now);
	while (p->next <= now)
		p->next += PROGRESS_INTERVAL;
}

void progress_clear(struct progress *p)
{
	if (!p->on || !p->drawn)
		return;
	fputs("\r\033[K", stderr);
	p->drawn = false;
}

void progress_end(struct progress *p, uint64_t done, uint64_t total, const char *extra)
{
	if (!p->on)
		return;
	draw(p, done, total, extra, monotonic_seconds());
	fputc('\n', stderr);
	p->on = false;
}
