#include "verify.h"
#include "../lib/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../lib/digest.h"
#include "../lib/mapped_file.h"
#include "../lib/parallel.h"
#include "../lib/progress.h"
#include "../lib/util.h"
#include "../result.h"
#include "cache_format.h"
#include "crew.h"
#include "verified_record.h"

/* Per thread: memory does not grow with file size. 64 KiB: read()'s copy
 * and the hash both stay in the core's L2 cache. On the build VM (AMD EPYC,
 * 512 KiB L2 a core) 256 KiB cost 40 % more CPU than 32-128 KiB for 2048
 * blobs of 256 KiB and for one of 256 MB: the copy evicted what the hash was
 * about to read, and the page cache was read from memory twice. */
#define READ_SIZE (64u << 10)
/* Bytes a worker hashes before it adds them to the shared progress counter:
 * one atomic per read from every thread kept its cache line moving. */
#define PROGRESS_STEP (16u << 20)
/* Bytes a worker hashes between two looks at the deadline and its cancel
 * flag: a clock read (the vDSO's) a MiB costs nothing next to hashing the
 * MiB, and a short deadline (a check's --deadline leaves hf verify tens of
 * milliseconds) is then kept to within a MiB's hash, not 16 MiB's. */
#define STOP_STEP (1u << 20)
/* Smaller files are read in a few calls: the read-ahead hint costs more. */
#define FADVISE_MIN (1u << 20)
/* Larger files are hashed from a mapping of the page cache: read(2) copies
 * every byte once more before the hash reads it. Smaller ones are read: a
 * mapping's set-up and faults cost more than the copy saves. */
#define MAP_MIN (16u << 20)

const char *hf_blob_state_text(enum hf_blob_state s)
{
	switch (s) {
	case HF_BLOB_OK:
		return "ok";
	case HF_BLOB_MISMATCH:
		return "hash mismatch";
	case HF_BLOB_UNREADABLE:
		return "unreadable";
	case HF_BLOB_CHANGED:
		return "changed while read";
	case HF_BLOB_UNNAMED:
		return "name is not a hash: unverified";
	case HF_BLOB_SKIPPED:
		return "not hashed";
	case HF_BLOB_UNLISTED:
		return "a copied file with no listing to check it against: unverified";
	case HF_BLOB_SIZE_DIFFERS:
		return "size differs from the listing: not hashed";
	}
	return "?";
}

bool hf_result_unverified(const struct hf_blob_result *r)
{
	return r->state == HF_BLOB_UNNAMED || r->state == HF_BLOB_UNLISTED;
}

char *hf_result_text(const struct hf_cache *cache, const struct hf_blob_result *r)
{
	const struct hf_repo *repo = &cache->repos[r->repo];
	char *msg;
	if (r->blob < 0) { /* a copied snapshot file */
		const struct hf_revision *rev = &repo->revisions[r->rev];
		char *refs = hf_refs_of(repo, rev->commit);
		char *who = xasprintf("%s: %s in revision %s%s%s%s", repo->folder, rev->files[r->file].path,
				      rev->commit, *refs ? " (" : "", refs, *refs ? ")" : "");
		free(refs);
		switch (r->state) {
		case HF_BLOB_MISMATCH:
			msg = xasprintf("%s is a copied file (not a link) whose %s is %s; trees/%s.json says %s", who,
					r->algorithm, r->actual, rev->commit, r->expected);
			break;
		case HF_BLOB_UNLISTED:
			msg = xasprintf(
				"%s is a copied file (not a link) and no listing (trees/%s.json) names its hash: content unverified",
				who, rev->commit);
			break;
		case HF_BLOB_UNREADABLE:
			msg = xasprintf("%s is a copied file that cannot be read: %s", who, strerror(r->error));
			break;
		case HF_BLOB_CHANGED:
			msg = xasprintf("%s changed size while it was read (a download in progress?)", who);
			break;
		case HF_BLOB_SIZE_DIFFERS:
			msg = xasprintf("%s is a copied file of %llu bytes; trees/%s.json says %llu: not hashed", who,
					(unsigned long long)r->size, rev->commit, (unsigned long long)r->listed_size);
			break;
		default:
			msg = xasprintf("%s: not hashed before the deadline", who);
		}
		free(who);
	} else {
		const struct hf_blob *b = &repo->blobs[r->blob];
		char *users = hf_blob_users_text(repo, r->blob);
		switch (r->state) {
		case HF_BLOB_MISMATCH:
			msg = xasprintf("%s: %s: %s mismatch: blob blobs/%s hashes to %s", repo->folder, users,
					r->algorithm, b->name, r->actual);
			break;
		case HF_BLOB_UNNAMED:
			msg = xasprintf(
				"%s: %s: blob blobs/%s is not named by a sha256 or git sha1: content unverified",
				repo->folder, users, b->name);
			break;
		case HF_BLOB_UNREADABLE:
			msg = xasprintf("%s: %s: blob blobs/%s cannot be read: %s", repo->folder, users, b->name,
					strerror(r->error));
			break;
		case HF_BLOB_CHANGED:
			msg = xasprintf(
				"%s: %s: blob blobs/%s changed size while it was read (a download in progress?)",
				repo->folder, users, b->name);
			break;
		case HF_BLOB_SIZE_DIFFERS:
			msg = xasprintf("%s: %s: blob blobs/%s is %llu bytes, its listing says %llu: not hashed",
					repo->folder, users, b->name, (unsigned long long)r->size,
					(unsigned long long)r->listed_size);
			break;
		default:
			msg = xasprintf("%s: %s: blob blobs/%s not hashed before the deadline", repo->folder, users,
					b->name);
		}
		free(users);
	}
	text_sanitize(msg);
	return msg;
}

/* A snapshot file as the JSON reports name it: revision, its refs, path. */
static json_t *file_json(const struct hf_repo *repo, const struct hf_revision *rev, const struct hf_file *f)
{
	json_t *j = json_object();
	json_object_set_new(j, "revision", json_text(rev->commit));
	json_t *refs = json_array();
	for (size_t i = 0; i < repo->n_refs; i++)
		if (strcmp(repo->refs[i].commit, rev->commit) == 0)
			json_array_append_new(refs, json_text(repo->refs[i].name));
	json_object_set_new(j, "refs", refs);
	json_object_set_new(j, "path", json_text(f->path));
	return j;
}

json_t *hf_blob_files_json(const struct hf_repo *repo, long blob)
{
	json_t *files = json_array();
	size_t n = hf_blob_users(repo, blob, NULL, 0);
	struct hf_blob_user *users = xcalloc(n + 1, sizeof(*users));
	hf_blob_users(repo, blob, users, n);
	for (size_t k = 0; k < n; k++)
		json_array_append_new(files, file_json(repo, users[k].rev, users[k].file));
	free(users);
	return files;
}

json_t *hf_result_json(const struct hf_cache *cache, const struct hf_blob_result *res)
{
	const struct hf_repo *repo = &cache->repos[res->repo];
	json_t *p = json_object();
	json_object_set_new(p, "repo", json_text(repo->folder));
	json_object_set_new(p, "state", json_string(hf_blob_state_text(res->state)));
	json_t *files;
	if (res->blob >= 0) {
		char *path = hf_blob_rel(repo->blobs[res->blob].name);
		json_object_set_new(p, "path", json_text(path));
		json_object_set_new(p, "blob", json_text(path));
		free(path);
		files = hf_blob_files_json(repo, res->blob);
	} else {
		files = json_array();
		const struct hf_revision *rev = &repo->revisions[res->rev];
		char *path = hf_snapshot_rel(rev->commit, rev->files[res->file].path);
		json_object_set_new(p, "path", json_text(path));
		free(path);
		json_array_append_new(files, file_json(repo, rev, &rev->files[res->file]));
	}
	json_object_set_new(p, "files", files);
	if (res->state == HF_BLOB_SIZE_DIFFERS) {
		json_object_set_new(p, "size", json_integer((json_int_t)res->size));
		json_object_set_new(p, "listed_size", json_integer((json_int_t)res->listed_size));
	}
	if (res->state == HF_BLOB_MISMATCH) {
		json_object_set_new(p, "algorithm", json_string(res->algorithm));
		json_object_set_new(p, "expected", json_text(res->expected));
		json_object_set_new(p, "actual", json_string(res->actual));
	}
	return p;
}

/* One file's hash as it goes: the pieces come from read(2) or a mapping. */
struct hashing {
	struct digest *d;
	uint64_t total, unreported, unchecked;
	_Atomic uint64_t *progress;
	double deadline;
	const _Atomic bool *cancel;
};

static int hash_piece(void *arg, const unsigned char *data, size_t n)
{
	struct hashing *h = arg;
	h->total += n;
	h->unreported += n;
	h->unchecked += n;
	if (h->unreported >= PROGRESS_STEP) {
		if (h->progress)
			atomic_fetch_add_explicit(h->progress, h->unreported, memory_order_relaxed);
		h->unreported = 0;
	}
	if (h->unchecked >= STOP_STEP) {
		h->unchecked = 0;
		/* a big blob stops mid-way at the deadline (issue 26: a 50 GB one ran on) */
		if (h->deadline > 0 && monotonic_seconds() > h->deadline)
			return -ETIMEDOUT;
		if (h->cancel && atomic_load_explicit(h->cancel, memory_order_relaxed))
			return -ECANCELED;
	}
	return digest_update(h->d, data, n) ? 0 : -EIO;
}

static int hash_by_reading(int fd, struct hashing *h, unsigned char *buf, size_t bufsize)
{
	for (;;) {
		ssize_t n = read(fd, buf, bufsize);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		int rc = hash_piece(h, buf, (size_t)n);
		if (rc)
			return rc;
	}
}

int hf_hasher_fd(struct hf_hasher *hasher, int fd, size_t hex_len, char hex[65], uint64_t *bytes)
{
	*bytes = 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	enum digest_kind kind = hex_len == 64 ? DIGEST_SHA256 : DIGEST_GIT_BLOB;
	if (!hasher->ctx) {
		if (!(hasher->ctx = digest_new(kind, (uint64_t)st.st_size)))
			return -ENOSYS; /* libcrypto missing: nothing can be verified */
	} else if (!digest_restart(hasher->ctx, kind, (uint64_t)st.st_size)) {
		return -ENOMEM;
	}
	struct hashing h = {
		.d = hasher->ctx, .progress = hasher->progress, .deadline = hasher->deadline, .cancel = hasher->cancel
	};
	int rc = 0;
	uint64_t size = (uint64_t)st.st_size;
	bool read_it = true;
	if (size >= MAP_MIN) {
		rc = mapped_file_each(fd, size, hasher->bufsize, hash_piece, &h);
		/* it grew under the mapping: as a read would have found */
		if (rc == 0 && (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size))
			rc = -ESTALE;
		read_it = rc != 0 && h.total == 0 && rc != -ESTALE && rc != -EIO && rc != -ETIMEDOUT &&
			  rc != -ECANCELED; /* cannot be mapped here */
		if (read_it)
			rc = 0;
	}
	if (rc == 0 && read_it) {
		if (size >= FADVISE_MIN)
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		rc = hash_by_reading(fd, &h, hasher->buf, hasher->bufsize);
	}
	if (h.progress && h.unreported)
		atomic_fetch_add_explicit(h.progress, h.unreported, memory_order_relaxed);
	h.unreported = 0;
	if (rc == 0 && h.total != size)
		rc = -ESTALE;
	if (rc == 0 && !digest_result_hex(h.d, hex))
		rc = -EIO;
	*bytes = h.total;
	return rc;
}

void hf_hasher_release(struct hf_hasher *h)
{
	digest_free(h->ctx);
	h->ctx = NULL;
}

int hf_hash_fd(int fd, size_t hex_len, unsigned char *buf, size_t bufsize, char hex[65], uint64_t *bytes)
{
	struct hf_hasher h = { .buf = buf, .bufsize = bufsize };
	int rc = hf_hasher_fd(&h, fd, hex_len, hex, bytes);
	hf_hasher_release(&h);
	return rc;
}

struct pool {
	const struct hf_cache *cache;
	struct hf_blob_result *results;
	size_t *order;        /* result indexes to hash, largest first */
	size_t n_work;        /* entries of order */
	_Atomic bool *cancel; /* per result: stop hashing it (its size differs from the listing) */
	size_t n_cancel;      /* entries of cancel */
	int *blobs_fd;        /* per repo; -1 when unopened */
	int *blobs_error;     /* per repo: why its blobs/ did not open (errno), or 0 */
	double deadline;
	atomic_bool stop;
	int cache_fd;
	/* each counter on a cache line of its own, apart from the fields above
	 * that every worker reads: every worker writes them */
	alignas(64) atomic_size_t next;
	alignas(64) atomic_size_t done;
	alignas(64) _Atomic uint64_t bytes;
	alignas(64) atomic_size_t hashed; /* files hashed to their end */
};

/* Whether the file hashed is still the one the scan stat'ed: only then may
 * the record trust it next time (a file replaced or written to between the
 * scan and the end of its hash is not recorded). */
static bool same_as_scanned(int fd, const struct hf_blob *b)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_dev == b->dev && (uint64_t)st.st_ino == b->ino &&
	       (uint64_t)st.st_size == b->size && st.st_mtim.tv_sec == b->mtim.tv_sec &&
	       st.st_mtim.tv_nsec == b->mtim.tv_nsec && st.st_ctim.tv_sec == b->ctim.tv_sec &&
	       st.st_ctim.tv_nsec == b->ctim.tv_nsec;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct hf_hasher hasher = {
		.buf = xmalloc(READ_SIZE), .bufsize = READ_SIZE, .progress = &p->bytes, .deadline = p->deadline
	};
	for (;;) {
		size_t k = atomic_fetch_add(&p->next, 1);
		if (k >= p->n_work)
			break;
		size_t idx = p->order[k];
		struct hf_blob_result *r = &p->results[idx];
		if (atomic_load(&p->stop) || (p->deadline > 0 && monotonic_seconds() > p->deadline)) {
			atomic_store(&p->stop, true);
			atomic_fetch_add(&p->done, 1);
			continue;
		}
		if (idx < p->n_cancel && atomic_load(&p->cancel[idx])) {
			atomic_fetch_add(&p->done, 1);
			continue; /* hf_verify_finish marks it */
		}
		hasher.cancel = idx < p->n_cancel ? &p->cancel[idx] : NULL;
		const struct hf_repo *repo = &p->cache->repos[r->repo];
		int fd;
		if (r->blob >= 0) {
			fd = openat(p->blobs_fd[r->repo], repo->blobs[r->blob].name,
				    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		} else { /* a copied snapshot file, reached without following links */
			const struct hf_revision *rev = &repo->revisions[r->rev];
			char *rel = xasprintf("%s/%s", rev->dir, rev->files[r->file].path);
			fd = hf_open_in_cache(p->cache_fd, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK);
			free(rel);
		}
		if (fd < 0) {
			r->state = HF_BLOB_UNREADABLE;
			r->error = errno;
		} else {
			uint64_t bytes = 0;
			int rc = hf_hasher_fd(&hasher, fd, r->hex_len, r->actual, &bytes);
			if (rc == 0)
				atomic_fetch_add(&p->hashed, 1);
			if (rc == 0 && r->blob >= 0)
				r->recordable = same_as_scanned(fd, &repo->blobs[r->blob]);
			close(fd);
			if (rc == -ESTALE)
				r->state = HF_BLOB_CHANGED;
			else if (rc == -ETIMEDOUT)
				atomic_store(&p->stop, true); /* stays SKIPPED: not hashed before the deadline */
			else if (rc == -ECANCELED)
				; /* hf_verify_finish marks it */
			else if (rc < 0) {
				r->state = HF_BLOB_UNREADABLE;
				r->error = -rc;
			} else /* upper-case names match too (utils/_verification.py lower-cases) */
				r->state = strcasecmp(r->actual, r->expected) == 0 ? HF_BLOB_OK : HF_BLOB_MISMATCH;
			r->recordable &= r->state == HF_BLOB_OK;
		}
		atomic_fetch_add(&p->done, 1);
	}
	hf_hasher_release(&hasher);
	free(hasher.buf);
	return NULL;
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

/* Whether the job hashes this repo's blobs and copies: a repo the options select, with blobs. */
static bool repo_verified(const struct hf_verify_options *opt, const struct hf_repo *repo)
{
	return repo->is_repo && hf_verify_selected(opt, repo->folder) && repo->n_blobs;
}

static int sort_by_size(const void *a, const void *b, void *arg)
{
	const struct hf_blob_result *results = arg;
	const struct hf_blob_result *x = &results[*(const size_t *)a];
	const struct hf_blob_result *y = &results[*(const size_t *)b];
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	/* equal sizes in results' order: the list is filled in any order (check_blobs) */
	return x < y ? -1 : x > y ? 1 : 0;
}

static void add_item(struct hf_verify *out, size_t *order, size_t *n_work, uint64_t *total, struct hf_blob_result item,
		     bool hash)
{
	out->results[out->count] = item;
	if (hash) {
		out->results[out->count].state = HF_BLOB_SKIPPED; /* until a worker hashes it */
		*total += item.size;
		order[(*n_work)++] = out->count;
	}
	out->count++;
}

struct hf_verify_job {
	struct pool p;
	struct hf_verify_options opt;
	struct hf_verify out;
	struct hf_record record; /* as read at the start */
	char **folder_keys;      /* per repo, as the record names it */
	size_t *first_result;    /* per repo, the index of its first blob in results (SIZE_MAX: not verified) */
	struct thread *tids;
	unsigned started;      /* threads running now */
	unsigned most;         /* the most that ran at once */
	uint64_t total;        /* bytes to hash */
	atomic_size_t trusted; /* results trusted from the record */
	double start;
	struct progress progress;
};

/* Starts the workers on order[0..n_work): threads of their own (none that
 * could start: the caller hashes them in job_wait). */
static void job_launch(struct hf_verify_job *job)
{
	struct pool *p = &job->p;
	atomic_store(&p->next, 0);
	atomic_store(&p->done, 0);
	if (p->n_work) /* largest first, so that no thread is left with one big file at the end */
		qsort_r(p->order, p->n_work, sizeof(size_t), sort_by_size, p->results);
	unsigned threads = job->opt.threads ? job->opt.threads : usable_cpus();
	if (threads > p->n_work) /* none for nothing to hash: a run that trusts every blob */
		threads = (unsigned)p->n_work;
	job->tids = xcalloc(threads, sizeof(*job->tids));
	job->started = 0;
	for (unsigned t = 0; t < threads; t++)
		/* lib/parallel.h's stacks (1 MiB): a worker's frames are small, its
		 * read buffer and digest context on the heap */
		if (thread_start(&job->tids[job->started], worker, p) == 0)
			job->started++;
		else
			break;
	if (job->started > job->most)
		job->most = job->started;
}

static void draw_progress(struct hf_verify_job *job, bool final)
{
	char files[64];
	snprintf(files, sizeof(files), "%zu/%zu files", atomic_load(&job->p.done), job->p.n_work);
	if (final)
		progress_end(&job->progress, atomic_load(&job->p.bytes), job->total, files);
	else
		progress_update(&job->progress, atomic_load(&job->p.bytes), job->total, files);
}

/* Waits for the workers, showing progress where asked. */
static void job_wait(struct hf_verify_job *job)
{
	struct pool *p = &job->p;
	if (!job->started && p->n_work)
		worker(p);
	if (job->progress.on && job->started) {
		/* looks every 10 ms, so that the end is not waited for; the
		 * progress line itself is redrawn at most four times a second */
		while (atomic_load(&p->done) < p->n_work) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			draw_progress(job, false);
		}
	}
	for (unsigned t = 0; t < job->started; t++)
		thread_join(&job->tids[t]);
	free(job->tids);
	job->tids = NULL;
	job->started = 0;
}

static struct hf_record_stat blob_stat(const struct hf_blob *b)
{
	return (struct hf_record_stat){
		.dev = b->dev, .ino = b->ino, .size = b->size, .mtim = b->mtim, .ctim = b->ctim
	};
}

/* One repo's blobs against the record, in slices on the crew's threads
 * (crew.h): each blob's result is its own slot (results[first + b]), its
 * fresh page first written there, side by side; a blob to hash joins the
 * work list under the lock (the list is sorted by size before the hashing:
 * the order it is added in does not count). */
struct blob_check {
	struct hf_verify_job *job;
	const struct hf_repo *repo;
	size_t r, first;
	pthread_mutex_t lock;
};

#define CHECK_SLICE 512 /* blobs a slice: fewer are checked on one thread */

static void check_blobs(void *arg, size_t begin, size_t end)
{
	struct blob_check *c = arg;
	struct hf_verify_job *job = c->job;
	struct pool *p = &job->p;
	size_t next = begin; /* the record's entry for the next blob: both sorted by name */
	size_t trusted = 0;
	for (size_t b = begin; b < end; b++) {
		const struct hf_blob *blob = &c->repo->blobs[b];
		struct hf_blob_result item = { .repo = c->r,
					       .blob = (long)b,
					       .rev = -1,
					       .file = -1,
					       .expected = blob->name,
					       .hex_len = blob->hex_len,
					       .size = blob->size };
		item.algorithm = blob->hex_len == 64 ? "sha256" : blob->hex_len == 40 ? "git-sha1" : NULL;
		if (!item.algorithm)
			item.state = HF_BLOB_UNNAMED;
		else if (!blob->regular)
			item.state = HF_BLOB_SKIPPED;
		else if (p->blobs_fd[c->r] < 0) {
			item.state = HF_BLOB_UNREADABLE;
			item.error = p->blobs_error[c->r];
		}
		bool hash = item.algorithm && blob->regular && p->blobs_fd[c->r] >= 0;
		if (hash && !job->opt.full) { /* verified before and unchanged since: trusted */
			struct hf_record_stat now = blob_stat(blob);
			if (hf_record_trusts(
				    &job->record,
				    hf_record_find_next(&job->record, job->folder_keys[c->r], blob->name, &next),
				    &now)) {
				item.state = HF_BLOB_OK;
				item.trusted = true;
				hash = false;
				trusted++;
			}
		}
		size_t at = c->first + b;
		job->out.results[at] = item;
		if (hash) {
			job->out.results[at].state = HF_BLOB_SKIPPED; /* until a worker hashes it */
			pthread_mutex_lock(&c->lock);
			job->total += item.size;
			p->order[p->n_work++] = at;
			pthread_mutex_unlock(&c->lock);
		}
	}
	atomic_fetch_add(&job->trusted, trusted);
}

struct hf_verify_job *hf_verify_start(const struct hf_cache *cache, const struct hf_verify_options *opt)
{
	double start = monotonic_seconds();
	int cache_fd = open(cache->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cache_fd < 0)
		return NULL;
	/* one descriptor per repo's blobs/ folder: raise the soft limit to the hard one */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct hf_verify_job *job = xcalloc(1, sizeof(*job));
	job->opt = *opt;
	job->start = start;
	progress_start(&job->progress, opt->label ? opt->label : "hf verify", opt->progress);
	if (opt->record_loading)
		hf_record_load_join(opt->record_loading, &job->record);
	else if (opt->record)
		hf_record_load(&job->record, opt->record, cache->path);
	tl_mark("record joined");
	job->folder_keys = xcalloc(cache->n_repos + 1, sizeof(char *));
	job->first_result = xcalloc(cache->n_repos + 1, sizeof(size_t));
	struct hf_verify *out = &job->out;
	struct pool *p = &job->p;
	p->cache = cache;
	p->deadline = opt->deadline;
	p->cache_fd = cache_fd;
	p->blobs_fd = xcalloc(cache->n_repos + 1, sizeof(int));
	p->blobs_error = xcalloc(cache->n_repos + 1, sizeof(int));
	/* the work list: results[] indexes of the blobs to hash */
	size_t n_blobs = 0;
	for (size_t r = 0; r < cache->n_repos; r++)
		n_blobs += cache->repos[r].n_blobs;
	out->results = xcalloc(n_blobs + 1, sizeof(*out->results));
	p->order = xcalloc(n_blobs + 1, sizeof(*p->order));
	p->cancel = xcalloc(n_blobs + 1, sizeof(*p->cancel));
	p->n_cancel = n_blobs;
	for (size_t r = 0; r < cache->n_repos; r++) {
		const struct hf_repo *repo = &cache->repos[r];
		p->blobs_fd[r] = -1;
		job->first_result[r] = SIZE_MAX;
		if (!repo_verified(opt, repo))
			continue;
		job->first_result[r] = out->count;
		job->folder_keys[r] = hf_record_folder_key(repo->folder);
		errno = 0;
		int fd = repo->real ? hf_open_in_cache(cache_fd, repo->real, O_RDONLY | O_DIRECTORY) : -1;
		if (fd >= 0) {
			p->blobs_fd[r] = openat(fd, HF_BLOBS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(fd);
		}
		p->blobs_error[r] = p->blobs_fd[r] < 0 ? (errno ? errno : EBADF) : 0;
		struct blob_check c = {
			.job = job, .repo = repo, .r = r, .first = out->count, .lock = PTHREAD_MUTEX_INITIALIZER
		};
		hf_crew_for(repo->n_blobs, CHECK_SLICE, SIZE_MAX, check_blobs, &c);
		pthread_mutex_destroy(&c.lock);
		out->count += repo->n_blobs;
	}
	tl_mark("record checked");
	p->results = out->results;
	job_launch(job);
	return job;
}

/* results[] in the order hf_verify_run has always given: per repo, its
 * blobs, then its copied files by revision and path. */
static int result_cmp(const void *a, const void *b)
{
	const struct hf_blob_result *x = a, *y = b;
	if (x->repo != y->repo)
		return x->repo < y->repo ? -1 : 1;
	if ((x->blob < 0) != (y->blob < 0))
		return x->blob >= 0 ? -1 : 1;
	if (x->blob != y->blob)
		return x->blob < y->blob ? -1 : 1;
	if (x->rev != y->rev)
		return x->rev < y->rev ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Sizes against the listings, before (or while) hashing: a blob whose size
 * is not the one a listing gives a file linked to it is a finding without
 * its hash (issue 26), and its hashing, if a worker has begun it, stops at
 * its next MiB (STOP_STEP). Known once the scan has walked the snapshots. */
struct size_check {
	struct hf_verify_job *job;
	const struct hf_revision *rev;
	size_t first; /* the repo's first result */
	pthread_mutex_t lock;
};

/* Files [begin, end) of one revision, in slices on the crew (20,000 files
 * and their listed sizes read on one thread were a few hundred
 * microseconds at the end of a run). */
static void check_sizes(void *arg, size_t begin, size_t end)
{
	struct size_check *c = arg;
	struct pool *p = &c->job->p;
	for (size_t i = begin; i < end; i++) {
		const struct hf_file *f = &c->rev->files[i];
		if (f->blob < 0 || f->link != HF_LINK_OK || f->listed < 0)
			continue;
		const struct hf_listed_file *lf = &c->rev->listing.files[f->listed];
		/* the file's size is its blob's (the walk's): the blob's
		 * result, far from the last one in memory, only read
		 * for a size that differs */
		if (!lf->has_size || lf->size == f->size)
			continue;
		size_t k = c->first + (size_t)f->blob; /* a repo's blobs are added in order */
		pthread_mutex_lock(&c->lock);          /* two files may link one blob */
		struct hf_blob_result *res = &c->job->out.results[k];
		if (lf->size != res->size && !res->trusted && res->state == HF_BLOB_SKIPPED) {
			res->listed_size = lf->size;
			atomic_store(&p->cancel[k], true);
		}
		pthread_mutex_unlock(&c->lock);
	}
}

static void cancel_size_mismatches(struct hf_verify_job *job)
{
	const struct hf_cache *cache = job->p.cache;
	for (size_t r = 0; r < cache->n_repos; r++) {
		const struct hf_repo *repo = &cache->repos[r];
		if (job->first_result[r] == SIZE_MAX)
			continue; /* not verified by this job */
		for (size_t v = 0; v < repo->n_revisions; v++) {
			const struct hf_revision *rev = &repo->revisions[v];
			if (rev->listing.state != HF_LISTING_OK)
				continue;
			struct size_check c = {
				.job = job, .rev = rev, .first = job->first_result[r], .lock = PTHREAD_MUTEX_INITIALIZER
			};
			if (hf_crew_held()) /* else on this thread, as before: not worth a thread start */
				hf_crew_for(rev->n_files, CHECK_SLICE * 8, SIZE_MAX, check_sizes, &c);
			else
				check_sizes(&c, 0, rev->n_files);
			pthread_mutex_destroy(&c.lock);
		}
	}
}

/* Hashes the copied snapshot files: known once the snapshots are walked,
 * checked against the listing's lfs_sha256 or blob_id, as `hf cache verify`. */
static void hash_copies(struct hf_verify_job *job)
{
	struct pool *p = &job->p;
	const struct hf_cache *cache = p->cache;
	struct hf_verify *o = &job->out;
	size_t copies = 0;
	for (size_t r = 0; r < cache->n_repos; r++) {
		const struct hf_repo *repo = &cache->repos[r];
		if (!repo_verified(&job->opt, repo))
			continue;
		for (size_t v = 0; v < repo->n_revisions; v++)
			for (size_t i = 0; i < repo->revisions[v].n_files; i++)
				copies += repo->revisions[v].files[i].link == HF_LINK_COPY;
	}
	if (!copies)
		return;
	o->results = xrealloc(o->results, (o->count + copies + 1) * sizeof(*o->results));
	p->order = xrealloc(p->order, (copies + 1) * sizeof(*p->order));
	p->n_work = 0;
	for (size_t r = 0; r < cache->n_repos; r++) {
		const struct hf_repo *repo = &cache->repos[r];
		if (!repo_verified(&job->opt, repo))
			continue;
		for (size_t v = 0; v < repo->n_revisions; v++) {
			const struct hf_revision *rev = &repo->revisions[v];
			for (size_t i = 0; i < rev->n_files; i++) {
				const struct hf_file *f = &rev->files[i];
				if (f->link != HF_LINK_COPY)
					continue;
				const struct hf_listed_file *lf =
					f->listed >= 0 ? &rev->listing.files[f->listed] : NULL;
				const char *want = lf ? hf_listed_hash(lf) : NULL;
				struct hf_blob_result item = { .repo = r,
							       .blob = -1,
							       .rev = (long)v,
							       .file = (long)i,
							       .expected = want,
							       .hex_len = want ? strlen(want) : 0,
							       .size = f->size };
				item.algorithm = item.hex_len == 64 ? "sha256" : item.hex_len == 40 ? "git-sha1" : NULL;
				if (!want)
					item.state = HF_BLOB_UNLISTED;
				else if (lf->has_size && lf->size != f->size) {
					item.state = HF_BLOB_SIZE_DIFFERS;
					item.listed_size = lf->size;
					want = NULL;
				}
				add_item(o, p->order, &p->n_work, &job->total, item, want != NULL);
			}
		}
	}
	p->results = o->results;
	job_launch(job);
	job_wait(job);
}

/* The record for the next run: the blobs verified now (hashed with their
 * stat unchanged, or trusted), and what the old record says of the repos
 * this run did not verify (those it judged racy dropped: under a newer
 * stamp they would pass). Written only when it gains an entry. */
static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void update_record(struct hf_verify_job *job)
{
	const struct hf_cache *cache = job->p.cache;
	struct hf_verify *o = &job->out;
	struct hf_record *old = &job->record;
	size_t fresh = 0; /* only a file hashed to its end is recordable: none, no look at 20,000 results */
	for (size_t i = 0; atomic_load(&job->p.hashed) && i < o->count; i++)
		fresh += o->results[i].recordable;
	if (!old->usable)
		snprintf(o->record_note, sizeof(o->record_note), "%s", old->why);
	if (!fresh && old->usable)
		return; /* nothing new: the record stands as it is */
	struct hf_record_item *items = xcalloc(o->count + old->n + 1, sizeof(*items));
	size_t n = 0;
	for (size_t i = 0; i < o->count; i++) {
		const struct hf_blob_result *r = &o->results[i];
		if (!r->recordable && !r->trusted)
			continue;
		const struct hf_blob *b = &cache->repos[r->repo].blobs[r->blob];
		items[n++] = (struct hf_record_item){ .folder = job->folder_keys[r->repo],
						      .blob = b->name,
						      .st = blob_stat(b) };
	}
	/* the folders verified now, sorted, to tell the old entries to keep */
	char **now = xcalloc(cache->n_repos + 1, sizeof(char *));
	size_t n_now = 0;
	for (size_t r = 0; r < cache->n_repos; r++)
		if (job->folder_keys[r])
			now[n_now++] = job->folder_keys[r];
	qsort(now, n_now, sizeof(char *), key_cmp);
	for (size_t e = 0; e < old->n; e++) {
		const struct hf_record_entry *en = &old->entries[e];
		if (bsearch(&en->folder, now, n_now, sizeof(char *), key_cmp) || hf_record_racy(&old->stamp, &en->st))
			continue;
		items[n++] = (struct hf_record_item){ .folder = en->folder, .blob = en->blob, .st = en->st };
	}
	free(now);
	char why[512];
	int rc = hf_record_save(job->opt.record, cache->path, &cache->scan_stamp, items, n, why, sizeof(why));
	if (rc < 0)
		snprintf(o->record_note + strlen(o->record_note), sizeof(o->record_note) - strlen(o->record_note),
			 "%snot written: %s", o->record_note[0] ? "; " : "", why);
	o->record_written = rc == 0;
	free(items);
}

int hf_verify_finish(struct hf_verify_job *job, struct hf_verify *out)
{
	memset(out, 0, sizeof(*out));
	if (!job)
		return -errno;
	cancel_size_mismatches(job);
	job_wait(job);
	struct pool *p = &job->p;
	struct hf_verify *o = &job->out;
	for (size_t i = 0; i < p->n_cancel && i < o->count; i++)
		if (atomic_load(&p->cancel[i])) {
			o->results[i].state = HF_BLOB_SIZE_DIFFERS;
			o->results[i].recordable = false;
		}
	size_t n_blob_results = o->count;
	p->n_cancel = o->count;
	hash_copies(job);
	if (job->total) /* nothing to hash (all trusted): no line */
		draw_progress(job, true);
	if (o->count != n_blob_results)
		qsort(o->results, o->count, sizeof(*o->results), result_cmp);
	o->bytes = atomic_load(&p->bytes);
	o->timed_out = atomic_load(&p->stop);
	if (job->opt.record)
		update_record(job);
	close(p->cache_fd);
	for (size_t r = 0; r < p->cache->n_repos; r++)
		if (p->blobs_fd[r] >= 0)
			close(p->blobs_fd[r]);
	free(p->blobs_fd);
	free(p->blobs_error);
	free(p->order);
	free(p->cancel);
	hf_record_free(&job->record);
	for (size_t r = 0; r < p->cache->n_repos; r++)
		free(job->folder_keys[r]);
	free(job->folder_keys);
	free(job->first_result);
	o->hashed = atomic_load(&p->hashed);
	o->trusted = atomic_load(&job->trusted); /* counted by check_blobs, the one place that trusts */
	*out = *o;
	out->threads = job->most ? job->most : 1;
	out->bytes_to_hash = job->total;
	out->seconds = monotonic_seconds() - job->start;
	free(job);
	return 0;
}

char *hf_verify_stopped_text(const struct hf_verify *v)
{
	uint64_t left = v->bytes_to_hash > v->bytes ? v->bytes_to_hash - v->bytes : 0;
	double rate = v->seconds > 0 ? (double)v->bytes / v->seconds : 0;
	char done[32], rest[32], r[32], eta[32];
	progress_bytes((double)v->bytes, done, sizeof(done));
	progress_bytes((double)left, rest, sizeof(rest));
	progress_bytes(rate, r, sizeof(r));
	if (rate <= 0)
		return xasprintf("%s hashed, %s left (no rate measured to estimate the rest)", done, rest);
	progress_clock((double)left / rate, eta, sizeof(eta));
	return xasprintf("%s hashed, %s left (about %s more at %s/s)", done, rest, eta, r);
}

int hf_verify_run(const struct hf_cache *cache, const struct hf_verify_options *opt, struct hf_verify *out)
{
	return hf_verify_finish(hf_verify_start(cache, opt), out);
}

void hf_verify_free(struct hf_verify *v)
{
	free(v->results);
	memset(v, 0, sizeof(*v));
}
