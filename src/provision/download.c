#include "download.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "lib/crypto_dl.h"
#include "lib/digest.h"
#include "lib/parallel.h"
#include "lib/progress.h"
#include "lib/safe_io.h"
#include "lib/util.h"

#define USER_AGENT "gpugate-provision/" GPUGATE_VERSION

struct dl_state {
	CURL *easy;
	int fd;
	struct digest *sha256, *sha1;
	_Atomic int64_t written; /* bytes received for the file (read by the progress line) */
	int attempt;
	double not_before; /* monotonic time of the next attempt */
	_Atomic bool done;
	bool fatal;   /* our own failure inside a callback: no retry */
	bool discard; /* this response is an error page */
	bool started; /* the current response's first body byte has arrived */
	long code;
	int64_t range_start; /* from Content-Range of the current response */
	double retry_after;
	char xerror[200]; /* X-Error-Code / X-Error-Message of the hub */
	char body[200];   /* start of an error page */
	size_t body_len;
	char curl_err[CURL_ERROR_SIZE];
	/* Each transfer is received on its own thread (a lane, see dl_run),
	 * which writes what arrives straight into the temp file, as curl -o
	 * does; a second thread (the hasher) trails it, reading the file back
	 * from the page cache a slice at a time and hashing it. sha256 costs
	 * about as much CPU as receiving and writing together, so the two run
	 * side by side rather than one after the other. With fewer CPUs than
	 * threads that would only add a copy: then the lane hashes and writes
	 * what it receives itself (inline_sink). The bytes hashed are the temp
	 * file's own, and it is renamed to its hash only after they matched. */
	bool inline_sink;
	pthread_t worker;
	bool worker_running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t file_end; /* bytes in the temp file for the hasher (under mu) */
	int64_t hashed;   /* bytes the hasher has hashed (under mu) */
	bool hasher_idle, lane_waiting, quit;
	int read_errno; /* set by the hasher */
};

/* What is hashed at a time: 64 KiB stays in L2 between the copy and the
 * hash (256 KiB cost 40 % more CPU on the build VM, src/hf/verify.c). */
#define SINK_SLICE (64u << 10)
/* How far the lane may run ahead of the hasher: what it wrote is still in
 * the page cache when the hasher reads it, whatever the file system. */
#define HASH_LAG (32 << 20)
/* How much the lane writes before it wakes an idle hasher. */
#define HASH_WAKE (1 << 20)

static volatile sig_atomic_t interrupted; /* set by SIGINT/SIGTERM: clean up, then exit */

static void on_signal(int sig)
{
	interrupted = sig;
}

int retries_from_env(void)
{
	const char *v = getenv("GPUGATE_RETRIES");
	char *end;
	long n = v && *v ? strtol(v, &end, 10) : -1;
	if (!v || !*v || *end || n < 0 || n > 20) {
		if (v && *v)
			fprintf(stderr, "gpugate: GPUGATE_RETRIES='%s' is not 0 to 20; using 5\n", v);
		return 5;
	}
	return (int)n;
}

void dl_options_init(struct dl_options *o)
{
	o->parallel = 8;
	o->retries = retries_from_env();
	o->backoff = 0.5;
	o->idle_seconds = 30;
	o->min_speed = 1024;
	o->deadline = 0;
	o->timeout_seconds = 0;
	o->progress = isatty(STDERR_FILENO);
}

/* A running hash the download needs: libcrypto is linked into
 * gpugate-provision, so it loads; if it ever did not, nothing could be
 * verified. */
static struct digest *digest_or_die(enum digest_kind kind, uint64_t size)
{
	struct digest *d = digest_new(kind, size);
	if (!d) {
		fprintf(stderr, "gpugate-provision: OpenSSL digest initialisation failed: %s\n", crypto_dl_error());
		abort();
	}
	return d;
}

void git_blob_id(const void *data, size_t len, char out[41])
{
	struct digest *c = digest_or_die(DIGEST_GIT_BLOB, len);
	digest_update(c, data, len);
	digest_final_hex(c, out);
}

int hash_file(const char *path, char sha256_hex[65], char gitsha1_hex[41], int64_t *size)
{
	/* a regular file only: a FIFO or /dev/zero would never end (lib/safe_io.h) */
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG, 0, &st, NULL, 0);
	if (fd < 0)
		return fd;
	int rc = hash_fd(fd, sha256_hex, gitsha1_hex, size);
	close(fd);
	return rc;
}

int hash_fd(int fd, char sha256_hex[65], char gitsha1_hex[41], int64_t *size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	struct digest *s256 = sha256_hex ? digest_or_die(DIGEST_SHA256, 0) : NULL;
	struct digest *s1 = gitsha1_hex ? digest_or_die(DIGEST_GIT_BLOB, (uint64_t)st.st_size) : NULL;
	size_t cap = 1 << 20;
	char *buf = xmalloc(cap);
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		if (s256)
			digest_update(s256, buf, (size_t)n);
		if (s1)
			digest_update(s1, buf, (size_t)n);
	}
	free(buf);
	if (rc == 0 && s256)
		digest_final_hex(s256, sha256_hex);
	else
		digest_free(s256);
	if (rc == 0 && s1)
		digest_final_hex(s1, gitsha1_hex);
	else
		digest_free(s1);
	if (size)
		*size = st.st_size;
	return rc;
}

/* Keeps printable ASCII only: servers' text reaches the terminal. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

static void restart_hashes(struct dl_job *job)
{
	struct dl_state *s = job->state;
	digest_free(s->sha256);
	digest_free(s->sha1);
	s->sha256 = job->sha256 ? digest_or_die(DIGEST_SHA256, 0) : NULL;
	s->sha1 = job->git_sha1 && job->size >= 0 ? digest_or_die(DIGEST_GIT_BLOB, (uint64_t)job->size) : NULL;
}

/* lib/safe_io.h's loop, as an errno (0: all written). */
static int write_all(int fd, const char *p, size_t n)
{
	return -safe_write_all(fd, p, n);
}

static void hash_update(struct dl_state *s, const char *p, size_t n)
{
	if (s->sha256)
		digest_update(s->sha256, p, n);
	if (s->sha1)
		digest_update(s->sha1, p, n);
}

/* Hashes and writes n bytes, a slice at a time: write(2) copies each slice
 * while it is still in the cache after hashing (whole 4 MiB buffers came
 * from memory twice). Returns 0 or an errno. */
static int sink_consume(struct dl_state *s, const char *p, size_t n)
{
	for (size_t at = 0; at < n; at += SINK_SLICE) {
		size_t len = n - at < SINK_SLICE ? n - at : SINK_SLICE;
		hash_update(s, p + at, len);
		int err = write_all(s->fd, p + at, len);
		if (err)
			return err;
	}
	return 0;
}

/* Reads [from, to) of the temp file back and hashes it; 0 or an errno. */
static int hash_range(struct dl_state *s, char *buf, int64_t from, int64_t to)
{
	while (from < to) {
		size_t want = to - from < (int64_t)SINK_SLICE ? (size_t)(to - from) : SINK_SLICE;
		ssize_t r = pread(s->fd, buf, want, from);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (r == 0)
			return EIO; /* shorter than what was written: someone truncated it */
		hash_update(s, buf, (size_t)r);
		from += r;
	}
	return 0;
}

/* The hasher: hashes what the lane has written, in order, until told to quit. */
static void *sink_main(void *arg)
{
	struct dl_state *s = arg;
	char *buf = xmalloc(SINK_SLICE);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->hashed == s->file_end && !s->quit) {
			s->hasher_idle = true;
			if (s->lane_waiting)
				pthread_cond_broadcast(&s->cv);
			pthread_cond_wait(&s->cv, &s->mu);
		}
		s->hasher_idle = false;
		if (s->quit)
			break;
		int64_t from = s->hashed, to = s->file_end;
		pthread_mutex_unlock(&s->mu);
		int err = s->read_errno ? 0 : hash_range(s, buf, from, to);
		pthread_mutex_lock(&s->mu);
		if (err && !s->read_errno)
			s->read_errno = err;
		s->hashed = to;
		if (s->lane_waiting)
			pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	free(buf);
	return NULL;
}

static int sink_start(struct dl_job *job)
{
	struct dl_state *s = job->state;
	if (s->worker_running || s->inline_sink || (!s->sha256 && !s->sha1))
		return 0;
	s->file_end = s->hashed = s->written; /* a resumed file's start is hashed already */
	s->hasher_idle = s->lane_waiting = s->quit = false;
	s->read_errno = 0;
	if (pthread_mutex_init(&s->mu, NULL) != 0 || pthread_cond_init(&s->cv, NULL) != 0 ||
	    pthread_create(&s->worker, NULL, sink_main, s) != 0) {
		snprintf(job->error, sizeof(job->error), "cannot start a hashing thread");
		return -1;
	}
	s->worker_running = true;
	return 0;
}

/* Tells the hasher that the file now ends at s->written, then waits while
 * it is more than lag bytes behind (0: until it has hashed everything).
 * Returns 0, or -1 with job->error set. */
static int sink_publish(struct dl_job *job, int64_t lag)
{
	struct dl_state *s = job->state;
	if (!s->worker_running)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->file_end = s->written;
	/* an idle hasher is woken for a slice or more, or for the rest at the
	 * end: a wake-up per received chunk cost a futex call each, and in a VM
	 * an interrupt to a halted CPU */
	if (s->hasher_idle && s->file_end - s->hashed >= (lag ? (int64_t)HASH_WAKE : 1))
		pthread_cond_broadcast(&s->cv);
	while (s->file_end - s->hashed > lag && !s->read_errno) {
		s->lane_waiting = true;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	s->lane_waiting = false;
	int err = s->read_errno;
	pthread_mutex_unlock(&s->mu);
	if (err) {
		snprintf(job->error, sizeof(job->error), "%s: reading it back to hash it: %s", job->tmp_path,
			 strerror(err));
		return -1;
	}
	return 0;
}

/* Waits until everything written is hashed; returns 0 or -1 with job->error. */
static int sink_wait(struct dl_job *job)
{
	return sink_publish(job, 0);
}

static void sink_stop(struct dl_state *s)
{
	if (!s->worker_running)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->worker, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	s->worker_running = false;
}

/* Only with the worker idle (sink_wait) or not started. */
static int truncate_to_zero(struct dl_job *job)
{
	struct dl_state *s = job->state;
	if (ftruncate(s->fd, 0) < 0 || lseek(s->fd, 0, SEEK_SET) < 0) {
		snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path, strerror(errno));
		return -1;
	}
	s->written = 0;
	if (s->worker_running) { /* the hasher is idle (sink_wait) */
		pthread_mutex_lock(&s->mu);
		s->file_end = s->hashed = 0;
		pthread_mutex_unlock(&s->mu);
	}
	restart_hashes(job);
	return 0;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct dl_job *job = ud;
	struct dl_state *s = job->state;
	size_t n = size * nmemb;
	char line[256];
	size_t len = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
	memcpy(line, p, len);
	line[len] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) { /* a new response (after a redirect, too) */
		s->started = false;
		s->discard = false;
		s->range_start = -1;
		s->retry_after = 0;
		s->xerror[0] = '\0';
		return n;
	}
	char *colon = strchr(line, ':');
	if (!colon)
		return n;
	*colon = '\0';
	char *value = colon + 1;
	while (*value == ' ' || *value == '\t')
		value++;
	if (strcasecmp(line, "Content-Range") == 0) {
		long long start;
		if (sscanf(value, "bytes %lld-", &start) == 1)
			s->range_start = start;
	} else if (strcasecmp(line, "Retry-After") == 0) {
		s->retry_after = http_retry_after_seconds(value); /* capped by http_retry_wait */
	} else if (strcasecmp(line, "X-Error-Code") == 0 || strcasecmp(line, "X-Error-Message") == 0) {
		size_t used = strlen(s->xerror);
		snprintf(s->xerror + used, sizeof(s->xerror) - used, "%s%s", used ? ": " : "", value);
		printable(s->xerror);
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct dl_job *job = ud;
	struct dl_state *s = job->state;
	size_t n = size * nmemb;
	if (!s->started) {
		s->started = true;
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->code);
		if (s->code >= 300) {
			s->discard = true;
		} else if (s->code == 206 && s->range_start != s->written) {
			snprintf(job->error, sizeof(job->error),
				 "asked to resume at byte %" PRId64 " and the server answered from byte %" PRId64,
				 s->written, s->range_start);
			s->fatal = true;
			return 0;
		} else if (s->code != 206 && s->written > 0 && (sink_wait(job) < 0 || truncate_to_zero(job) < 0)) {
			s->fatal = true; /* a full answer to a Range request: start again */
			return 0;
		}
	}
	if (s->discard) {
		size_t room = sizeof(s->body) - 1 - s->body_len;
		size_t take = n < room ? n : room;
		memcpy(s->body + s->body_len, p, take);
		s->body_len += take;
		s->body[s->body_len] = '\0';
		return n;
	}
	if (job->size >= 0 && s->written + (int64_t)n > job->size) {
		snprintf(job->error, sizeof(job->error), "the server sent more than the %" PRId64 " bytes announced",
			 job->size);
		s->fatal = true;
		return 0;
	}
	if (s->inline_sink) {
		int err = sink_consume(s, p, n);
		if (err) {
			snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path, strerror(err));
			s->fatal = true;
			return 0;
		}
		s->written += (int64_t)n;
		return n;
	}
	int err = write_all(s->fd, p, n);
	if (err) {
		snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path, strerror(err));
		s->fatal = true;
		return 0;
	}
	s->written += (int64_t)n;
	if (sink_publish(job, HASH_LAG) < 0) {
		s->fatal = true;
		return 0;
	}
	return n;
}

/* Opens the temp file; with keep_partial, hashes the bytes already there. */
static int open_target(struct dl_job *job)
{
	struct dl_state *s = job->state;
	/* never through a link; a FIFO in its place fails instead of blocking */
	int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (job->keep_partial ? 0 : O_TRUNC);
	s->fd = openat(job->in_dir ? job->dir_fd : AT_FDCWD, job->tmp_path, flags, job->mode ? job->mode : 0644);
	struct stat st;
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(s->fd);
		s->fd = -1;
		errno = EINVAL;
	}
	if (s->fd < 0) {
		snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path,
			 errno == ELOOP    ? "is a symlink: refusing to write through it"
			 : errno == EINVAL ? "is not a regular file"
					   : strerror(errno));
		return -1;
	}
	restart_hashes(job);
	s->written = 0;
	if (!job->keep_partial)
		return 0;
	if (fstat(s->fd, &st) < 0) {
		snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path, strerror(errno));
		return -1;
	}
	if (st.st_size == 0 || (job->size >= 0 && st.st_size >= job->size))
		return truncate_to_zero(job); /* nothing to resume, or not a prefix */
	char *buf = xmalloc(1 << 20);
	for (;;) {
		ssize_t r = read(s->fd, buf, 1 << 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(job->error, sizeof(job->error), "%s: %s", job->tmp_path, strerror(errno));
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		if (s->sha256)
			digest_update(s->sha256, buf, (size_t)r);
		if (s->sha1)
			digest_update(s->sha1, buf, (size_t)r);
		s->written += r;
	}
	free(buf);
	return 0;
}

/* Makes the transfer stop soon after SIGINT/SIGTERM. */
static int on_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)ud, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return interrupted ? 1 : 0;
}

static bool past_deadline(const struct dl_options *o)
{
	return o->deadline > 0 && monotonic_seconds() >= o->deadline;
}

/* The overall timeout ran out: the job fails, naming what it got. */
static void deadline_passed(struct dl_job *job, const struct dl_options *o)
{
	snprintf(job->error, sizeof(job->error),
		 "the overall timeout of %ld s ran out (--timeout) after %" PRId64 " of %" PRId64 " bytes",
		 o->timeout_seconds, job->state->written, job->size);
}

/* Sets up an attempt on the lane's handle e (reset: its connection stays). */
static int start_attempt(CURL *e, struct dl_job *job, const struct dl_options *o)
{
	struct dl_state *s = job->state;
	if (sink_start(job) < 0)
		return -1;
	curl_easy_reset(e);
	s->easy = e;
	s->started = s->discard = s->fatal = false;
	s->body_len = 0;
	s->body[0] = s->xerror[0] = s->curl_err[0] = '\0';
	s->code = 0;
	curl_easy_setopt(e, CURLOPT_URL, job->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, job->headers);
	/* Redirects are followed; libcurl sends a custom Authorization header only
	 * to the host (and port) of the first URL unless UNRESTRICTED_AUTH is set,
	 * so the token never reaches a CDN on another host. Stated explicitly: */
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
	/* the idle timeout: a server that drips a byte a second is abandoned */
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, o->min_speed);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->idle_seconds);
	if (o->deadline > 0) {
		double left = o->deadline - monotonic_seconds();
		if (left <= 0) {
			deadline_passed(job, o);
			return -1;
		}
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
	}
	/* large reads: fewer recv(2) calls and callbacks per byte (4 MiB took
	 * 15% less CPU than 512 KiB for 2 GB over loopback; libcurl 7.88 allows
	 * up to 10 MiB and clamps above its limit) */
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 4L << 20);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->curl_err);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
	if (s->written > 0)
		curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)s->written);
	job->error[0] = '\0';
	return 0;
}

static void finish_job(struct dl_job *job, bool ok)
{
	struct dl_state *s = job->state;
	job->ok = ok;
	s->done = true;
	sink_stop(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (!ok && !(job->keep_partial && s->written > 0))
		unlinkat(job->in_dir ? job->dir_fd : AT_FDCWD, job->tmp_path, 0);
}

/* The transfer ended well: check length and hashes, then rename into place. */
static void complete(struct dl_job *job)
{
	struct dl_state *s = job->state;
	char hex[65];
	if (s->sha256) {
		digest_final_hex(s->sha256, hex);
		s->sha256 = NULL;
		if (strcmp(hex, job->sha256) != 0) {
			snprintf(job->error, sizeof(job->error), "sha256 mismatch: expected %s, received %s",
				 job->sha256, hex);
			job->keep_partial = false; /* corrupt: never resume from it */
			finish_job(job, false);
			return;
		}
	}
	if (s->sha1) {
		digest_final_hex(s->sha1, hex);
		s->sha1 = NULL;
		if (strcmp(hex, job->git_sha1) != 0) {
			snprintf(job->error, sizeof(job->error), "git blob id mismatch: expected %s, received %s",
				 job->git_sha1, hex);
			job->keep_partial = false;
			finish_job(job, false);
			return;
		}
	}
	int dir = job->in_dir ? job->dir_fd : AT_FDCWD;
	if (fsync(s->fd) < 0 || renameat(dir, job->tmp_path, dir, job->final_path) < 0) {
		snprintf(job->error, sizeof(job->error), "%s: %s", job->final_path, strerror(errno));
		job->keep_partial = false;
		finish_job(job, false);
		return;
	}
	finish_job(job, true);
}

/* Another attempt after why, when rc (CURLE_OK for an HTTP status) allows
 * one (http_retry_allowed) and the wait (http_retry_wait: the backoff or
 * the server's Retry-After) ends before the overall timeout. */
static void schedule_retry(struct dl_job *job, const struct dl_options *o, const char *why, CURLcode rc)
{
	struct dl_state *s = job->state;
	if (!http_retry_allowed(rc, s->attempt, o->retries)) {
		snprintf(job->error, sizeof(job->error), "%s (gave up after %d %s)", why, s->attempt + 1,
			 count_noun((size_t)s->attempt + 1, "attempt", "attempts"));
		finish_job(job, false);
		return;
	}
	double wait;
	char note[200];
	if (http_retry_wait(s->attempt, o->backoff, s->retry_after, o->deadline, &wait, note, sizeof(note)) < 0) {
		if (s->retry_after > 0 && strstr(note, "Retry-After"))
			snprintf(job->error, sizeof(job->error), "%s (last attempt: %s)", note, why);
		else {
			deadline_passed(job, o);
			snprintf(job->error + strlen(job->error), sizeof(job->error) - strlen(job->error),
				 " (last attempt: %s)", why);
		}
		finish_job(job, false);
		return;
	}
	s->attempt++;
	s->not_before = monotonic_seconds() + wait;
	if (o->progress)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "gpugate: %s: %s%s; retrying in %.1f s\n", job->label, why, note, wait);
}

static void on_done(struct dl_job *job, CURLcode rc, const struct dl_options *o)
{
	struct dl_state *s = job->state;
	long code = 0;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	job->http_code = code;
	char why[400];
	if (!s->fatal && sink_wait(job) < 0)
		s->fatal = true; /* what arrived is kept: a retry resumes after it */
	if (s->fatal) {
		job->keep_partial = job->keep_partial && s->written > 0 && strstr(job->error, "more than") == NULL;
		finish_job(job, false);
		return;
	}
	if (rc != CURLE_OK && past_deadline(o)) {
		deadline_passed(job, o);
		finish_job(job, false);
		return;
	}
	if (rc != CURLE_OK) {
		snprintf(why, sizeof(why), "%s", s->curl_err[0] ? s->curl_err : curl_easy_strerror(rc));
		printable(why);
		if (rc == CURLE_OPERATION_TIMEDOUT && s->code >= 200 && s->code < 300)
			snprintf(why, sizeof(why), "stalled: less than %ld bytes/s for %ld s (--idle-timeout)",
				 o->min_speed, o->idle_seconds);
		if (http_transient_error(rc)) {
			schedule_retry(job, o, why, rc);
		} else {
			snprintf(job->error, sizeof(job->error), "%s", why);
			finish_job(job, false);
		}
		return;
	}
	if (code == 416 && s->written > 0) { /* our partial file is not a prefix any more */
		if (sink_wait(job) < 0 || truncate_to_zero(job) < 0) {
			finish_job(job, false);
			return;
		}
		schedule_retry(job, o, "the server refused to resume (HTTP 416)", CURLE_OK);
		return;
	}
	if (code >= 300 || code < 200) {
		if (s->xerror[0])
			snprintf(why, sizeof(why), "HTTP %ld (%s)", code, s->xerror);
		else
			snprintf(why, sizeof(why), "HTTP %ld", code);
		if (code == 429 || code >= 500) {
			schedule_retry(job, o, why, CURLE_OK);
		} else {
			if (code == 401 || code == 403)
				snprintf(why + strlen(why), sizeof(why) - strlen(why),
					 ": the file needs a token with access (HF_TOKEN or the token file)");
			snprintf(job->error, sizeof(job->error), "%s", why);
			finish_job(job, false);
		}
		return;
	}
	if (job->size >= 0 && s->written != job->size) {
		snprintf(why, sizeof(why), "received %" PRId64 " of %" PRId64 " bytes", s->written, job->size);
		schedule_retry(job, o, why, CURLE_OK);
		return;
	}
	complete(job);
}

/* The shared progress line (src/lib/progress.c): bytes of all files, rate, time left. */
static void draw_progress(struct progress *pr, struct dl_job *jobs, size_t n, bool final)
{
	int64_t got = 0, total = 0;
	size_t done = 0;
	for (size_t i = 0; i < n; i++) {
		got += jobs[i].state->written;
		total += jobs[i].size > 0 ? jobs[i].size : 0;
		done += jobs[i].state->done;
	}
	char files[64];
	snprintf(files, sizeof(files), "%zu/%zu %s", done, n, count_noun(n, "file", "files"));
	if (final)
		progress_end(pr, (uint64_t)got, (uint64_t)total, files);
	else
		progress_update(pr, (uint64_t)got, (uint64_t)total, files);
}

/* The jobs shared by the lanes: each lane takes the next job and runs it to
 * its end (retries included), then the next. */
struct lanes {
	struct dl_job *jobs;
	size_t n;
	const struct dl_options *o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;    /* the next job to take */
	size_t running; /* lanes not finished */
};

/* One job, every attempt, on the calling thread. */
static void run_job(CURL *e, struct dl_job *job, const struct dl_options *o)
{
	struct dl_state *s = job->state;
	while (!s->done && !interrupted) {
		double wait = s->not_before - monotonic_seconds();
		if (past_deadline(o)) {
			deadline_passed(job, o);
			finish_job(job, false);
			break;
		}
		if (wait > 0) { /* backoff, in short naps so that a signal is seen */
			sleep_seconds(wait < 0.1 ? wait : 0.1);
			continue;
		}
		if (start_attempt(e, job, o) < 0) {
			finish_job(job, false);
			break;
		}
		CURLcode rc = curl_easy_perform(e);
		if (interrupted)
			break; /* dl_run reports it and cleans up */
		on_done(job, rc, o);
	}
	s->easy = NULL;
}

static void *lane_main(void *arg)
{
	struct lanes *l = arg;
	CURL *e = curl_easy_init();
	for (;;) {
		pthread_mutex_lock(&l->mu);
		size_t i = l->next < l->n ? l->next++ : l->n;
		pthread_mutex_unlock(&l->mu);
		if (i >= l->n || interrupted)
			break;
		struct dl_job *job = &l->jobs[i];
		if (job->state->done)
			continue;
		if (!e) {
			snprintf(job->error, sizeof(job->error), "libcurl could not create a transfer");
			finish_job(job, false);
			continue;
		}
		run_job(e, job, l->o);
	}
	if (e)
		curl_easy_cleanup(e);
	pthread_mutex_lock(&l->mu);
	l->running--;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* Lanes (a thread each, o->parallel at most) rather than one libcurl multi
 * loop: with one receiving thread for every transfer, that thread's copies
 * capped the throughput of all of them together. */
size_t dl_run(struct dl_job *jobs, size_t n, const struct dl_options *o)
{
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct dl_state *states = xcalloc(n ? n : 1, sizeof(*states));
	for (size_t i = 0; i < n; i++) {
		jobs[i].state = &states[i];
		jobs[i].ok = false;
		jobs[i].error[0] = '\0';
		states[i].fd = -1;
		if (open_target(&jobs[i]) < 0)
			finish_job(&jobs[i], false);
	}
	struct lanes l = { .jobs = jobs, .n = n, .o = o };
	size_t want = o->parallel < 1 ? 1 : (size_t)o->parallel;
	if (want > n)
		want = n;
	/* a hashing thread per lane only where there is a CPU for it (measured
	 * on 2 CPUs with 8 lanes: the hand-over copy cost 6% more CPU) */
	size_t n_cpus = usable_cpus();
	for (size_t i = 0; i < n; i++)
		states[i].inline_sink = n_cpus < 2 * want;
	pthread_t *threads = xcalloc(want ? want : 1, sizeof(*threads));
	size_t started = 0;
	if (pthread_mutex_init(&l.mu, NULL) != 0 || pthread_cond_init(&l.cv, NULL) != 0) {
		fputs("gpugate: cannot start the download threads\n", stderr);
		abort();
	}
	for (; started < want; started++) {
		pthread_mutex_lock(&l.mu);
		l.running++;
		pthread_mutex_unlock(&l.mu);
		if (pthread_create(&threads[started], NULL, lane_main, &l) != 0) {
			pthread_mutex_lock(&l.mu);
			l.running--;
			pthread_mutex_unlock(&l.mu);
			break;
		}
	}
	if (started == 0) { /* no thread could start: this one does the work */
		l.running = 1;
		lane_main(&l);
	}
	struct progress pr;
	progress_start(&pr, "hf fetch", o->progress);
	pthread_mutex_lock(&l.mu);
	while (l.running > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&l.cv, &l.mu, &ts);
		if (o->progress && l.running > 0) {
			pthread_mutex_unlock(&l.mu);
			draw_progress(&pr, jobs, n, false);
			pthread_mutex_lock(&l.mu);
		}
	}
	pthread_mutex_unlock(&l.mu);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	pthread_mutex_destroy(&l.mu);
	pthread_cond_destroy(&l.cv);
	draw_progress(&pr, jobs, n, true);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		struct dl_state *s = &states[i];
		if (!s->done) {
			snprintf(jobs[i].error, sizeof(jobs[i].error), "interrupted by signal %d", (int)interrupted);
			finish_job(&jobs[i], false);
		}
		digest_free(s->sha256);
		digest_free(s->sha1);
		failed += !jobs[i].ok;
		jobs[i].state = NULL;
	}
	free(states);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (interrupted)
		fprintf(stderr, "gpugate: interrupted; partial downloads removed\n");
	return failed;
}
