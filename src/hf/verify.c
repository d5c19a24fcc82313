#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include "../lib/crypto_dl.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"

#define READ_SIZE (1u << 20) /* per thread: memory does not grow with file size */

const char *hf_blob_state_text(enum hf_blob_state s)
{
	switch (s) {
	case HF_BLOB_OK: return "ok";
	case HF_BLOB_MISMATCH: return "hash mismatch";
	case HF_BLOB_UNREADABLE: return "unreadable";
	case HF_BLOB_CHANGED: return "changed while read";
	case HF_BLOB_UNNAMED: return "name is not a hash";
	case HF_BLOB_SKIPPED: return "not hashed";
	}
	return "?";
}

int hf_hash_fd(int fd, size_t hex_len, unsigned char *buf, size_t bufsize, char hex[65], uint64_t *bytes)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	const struct crypto_api *c = crypto_dl();
	if (!c)
		return -ENOSYS; /* libcrypto missing: nothing can be verified */
	const EVP_MD *md = hex_len == 64 ? c->sha256() : c->sha1();
	EVP_MD_CTX *ctx = c->ctx_new();
	if (!ctx || !c->init(ctx, md, NULL)) {
		c->ctx_free(ctx);
		return -ENOMEM;
	}
	int rc = 0;
	if (hex_len == 40) {
		char header[64];
		int n = snprintf(header, sizeof(header), "blob %llu", (unsigned long long)st.st_size);
		if (!c->update(ctx, header, (size_t)n + 1)) /* with its NUL */
			rc = -EIO;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	uint64_t total = 0;
	while (rc == 0) {
		ssize_t n = read(fd, buf, bufsize);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (!c->update(ctx, buf, (size_t)n))
			rc = -EIO;
	}
	if (rc == 0 && total != (uint64_t)st.st_size)
		rc = -ESTALE;
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	if (rc == 0 && !c->final(ctx, digest, &len))
		rc = -EIO;
	c->ctx_free(ctx);
	if (rc == 0) {
		for (unsigned i = 0; i < len && i * 2 < 64; i++)
			snprintf(hex + 2 * i, 3, "%02x", digest[i]);
		hex[2 * len] = '\0';
	}
	*bytes = total;
	return rc;
}

struct pool {
	const struct hf_cache *cache;
	struct hf_verify *out;
	size_t *order;          /* result indexes, largest blob first */
	int *blobs_fd;          /* per repo; -1 when unopened */
	atomic_size_t next;
	atomic_size_t done;
	atomic_uint_fast64_t bytes;
	double deadline;
	atomic_bool stop;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	unsigned char *buf = xmalloc(READ_SIZE);
	for (;;) {
		size_t k = atomic_fetch_add(&p->next, 1);
		if (k >= p->out->count)
			break;
		struct hf_blob_result *r = &p->out->results[p->order[k]];
		if (atomic_load(&p->stop) || (p->deadline > 0 && monotonic_seconds() > p->deadline)) {
			atomic_store(&p->stop, true);
			atomic_fetch_add(&p->done, 1);
			continue;
		}
		const struct hf_blob *b = &p->cache->repos[r->repo].blobs[r->blob];
		int fd = openat(p->blobs_fd[r->repo], b->name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			r->state = HF_BLOB_UNREADABLE;
			r->error = errno;
		} else {
			uint64_t bytes = 0;
			int rc = hf_hash_fd(fd, hf_hex_length(b->name), buf, READ_SIZE, r->actual, &bytes);
			close(fd);
			atomic_fetch_add(&p->bytes, bytes);
			if (rc == -ESTALE)
				r->state = HF_BLOB_CHANGED;
			else if (rc < 0) {
				r->state = HF_BLOB_UNREADABLE;
				r->error = -rc;
			} else
				r->state = strcmp(r->actual, b->name) == 0 ? HF_BLOB_OK : HF_BLOB_MISMATCH;
		}
		atomic_fetch_add(&p->done, 1);
	}
	free(buf);
	return NULL;
}

static unsigned cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

bool hf_verify_selected(const struct hf_verify_options *opt, const char *folder)
{
	if (!opt->repos)
		return true;
	for (char **r = opt->repos; *r; r++)
		if (strcmp(*r, folder) == 0)
			return true;
	return false;
}

static int sort_by_size(const void *a, const void *b, void *arg)
{
	const struct pool *p = arg;
	const struct hf_blob_result *x = &p->out->results[*(const size_t *)a];
	const struct hf_blob_result *y = &p->out->results[*(const size_t *)b];
	uint64_t sx = p->cache->repos[x->repo].blobs[x->blob].size;
	uint64_t sy = p->cache->repos[y->repo].blobs[y->blob].size;
	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

static void show_progress(struct pool *p, uint64_t total, double start, bool final)
{
	double el = monotonic_seconds() - start;
	uint64_t done = atomic_load(&p->bytes);
	fprintf(stderr, "\rhf verify: %zu/%zu blobs, %.1f/%.1f GiB, %.0f MiB/s%s", atomic_load(&p->done),
		p->out->count, (double)done / (1u << 30), (double)total / (1u << 30),
		el > 0 ? (double)done / (1u << 20) / el : 0.0, final ? "\n" : "   ");
	fflush(stderr);
}

int hf_verify_run(const struct hf_cache *cache, const struct hf_verify_options *opt, struct hf_verify *out)
{
	memset(out, 0, sizeof(*out));
	double start = monotonic_seconds();
	int cache_fd = open(cache->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cache_fd < 0)
		return -errno;
	/* one descriptor per repo's blobs/ folder: raise the soft limit to the hard one */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct pool p = { .cache = cache, .out = out, .deadline = opt->deadline };
	p.blobs_fd = xcalloc(cache->n_repos + 1, sizeof(int));
	/* the work list: results[] indexes of the blobs to hash */
	size_t n_work = 0;
	uint64_t total = 0;
	for (size_t r = 0; r < cache->n_repos; r++) {
		const struct hf_repo *repo = &cache->repos[r];
		p.blobs_fd[r] = -1;
		if (!repo->is_repo || !hf_verify_selected(opt, repo->folder) || !repo->n_blobs)
			continue;
		int fd = openat(cache_fd, repo->folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			p.blobs_fd[r] = openat(fd, "blobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(fd);
		}
		out->results = xrealloc(out->results, (out->count + repo->n_blobs) * sizeof(*out->results));
		p.order = xrealloc(p.order, (out->count + repo->n_blobs) * sizeof(*p.order));
		for (size_t b = 0; b < repo->n_blobs; b++) {
			struct hf_blob_result *res = &out->results[out->count++];
			memset(res, 0, sizeof(*res));
			res->repo = r;
			res->blob = b;
			size_t hex = hf_hex_length(repo->blobs[b].name);
			res->algorithm = hex == 64 ? "sha256" : hex == 40 ? "git-sha1" : NULL;
			if (!res->algorithm)
				res->state = HF_BLOB_UNNAMED;
			else if (!repo->blobs[b].regular)
				res->state = HF_BLOB_SKIPPED;
			else if (p.blobs_fd[r] < 0) {
				res->state = HF_BLOB_UNREADABLE;
				res->error = errno ? errno : EBADF;
			} else {
				res->state = HF_BLOB_SKIPPED; /* until a worker hashes it */
				total += repo->blobs[b].size;
				p.order[n_work++] = out->count - 1;
			}
		}
	}
	close(cache_fd);
	/* largest first, so that no thread is left with one big file at the end */
	if (n_work) /* order is NULL when nothing is selected */
		qsort_r(p.order, n_work, sizeof(size_t), sort_by_size, &p);
	/* workers walk order[0..n_work) */
	struct hf_verify view = *out;
	view.count = n_work;
	p.out = &view;
	unsigned threads = opt->threads ? opt->threads : cpu_count();
	if (threads > n_work)
		threads = n_work ? (unsigned)n_work : 1;
	pthread_t *tids = xcalloc(threads, sizeof(*tids));
	unsigned started = 0;
	for (unsigned t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, worker, &p) == 0)
			started++;
		else
			break;
	if (!started)
		worker(&p);
	bool shown = false;
	if (opt->progress && started) {
		while (atomic_load(&p.done) < n_work) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			if (monotonic_seconds() - start > 1.0) {
				show_progress(&p, total, start, false);
				shown = true;
			}
		}
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	if (shown)
		show_progress(&p, total, start, true);
	free(tids);
	for (size_t r = 0; r < cache->n_repos; r++)
		if (p.blobs_fd[r] >= 0)
			close(p.blobs_fd[r]);
	free(p.blobs_fd);
	free(p.order);
	out->bytes = atomic_load(&p.bytes);
	out->timed_out = atomic_load(&p.stop);
	out->seconds = monotonic_seconds() - start;
	return 0;
}

void hf_verify_free(struct hf_verify *v)
{
	free(v->results);
	memset(v, 0, sizeof(*v));
}
