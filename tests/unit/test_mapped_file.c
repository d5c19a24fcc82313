/* Reading through a mapping (src/lib/mapped_file.h) and the hash that uses
 * it for large files (src/hf/verify.h): every byte in order, a file cut
 * short under the mapping is an error and not a SIGBUS, a fault outside the
 * mapping still kills, and the digest equals libcrypto's one-shot digest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hf/verify.h"
#include "lib/crypto_dl.h"
#include "lib/mapped_file.h"

static unsigned char pattern(uint64_t i)
{
	return (unsigned char)(i % 251 ^ i >> 13);
}

/* A temp file of size bytes of pattern(); its fd (the name is unlinked). */
static int temp_file(uint64_t size)
{
	char name[] = "/tmp/gpugate-mapped-XXXXXX";
	int fd = mkstemp(name);
	assert_true(fd >= 0);
	assert_int_equal(unlink(name), 0);
	unsigned char buf[65536];
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(off + i);
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
	}
	return fd;
}

struct seen {
	uint64_t bytes;
	size_t pieces, largest;
	int wrong;   /* bytes that were not the pattern */
	int cut_fd;  /* >= 0: cut this file to one page after the first piece */
	int stop_at; /* > 0: return this after that many pieces */
};

static int look(void *arg, const unsigned char *data, size_t n)
{
	struct seen *s = arg;
	for (size_t i = 0; i < n; i++)
		s->wrong += data[i] != pattern(s->bytes + i);
	s->bytes += n;
	s->pieces++;
	if (n > s->largest)
		s->largest = n;
	if (s->cut_fd >= 0 && s->pieces == 1)
		assert_int_equal(ftruncate(s->cut_fd, 4096), 0);
	return s->stop_at && (int)s->pieces == s->stop_at ? 7 : 0;
}

static void test_every_byte_in_order_in_pieces(void **state)
{
	(void)state;
	uint64_t size = (3u << 20) + 123;
	int fd = temp_file(size);
	struct seen s = { .cut_fd = -1 };
	assert_int_equal(mapped_file_each(fd, size, 65536, look, &s), 0);
	assert_int_equal(s.bytes, size);
	assert_int_equal(s.wrong, 0);
	assert_int_equal(s.largest, 65536);
	assert_int_equal(s.pieces, (size + 65535) / 65536);
	close(fd);
}

static void test_a_nonzero_answer_stops_it(void **state)
{
	(void)state;
	int fd = temp_file(1u << 20);
	struct seen s = { .cut_fd = -1, .stop_at = 3 };
	assert_int_equal(mapped_file_each(fd, 1u << 20, 4096, look, &s), 7);
	assert_int_equal(s.pieces, 3);
	close(fd);
}

static void test_a_file_cut_short_under_it_is_an_error_not_a_crash(void **state)
{
	(void)state;
	for (int round = 0; round < 3; round++) { /* and it can be caught again */
		uint64_t size = 8u << 20;
		int fd = temp_file(size);
		struct seen s = { .cut_fd = fd };
		assert_int_equal(mapped_file_each(fd, size, 1u << 20, look, &s), -ESTALE);
		assert_true(s.pieces <= 2);
		close(fd);
	}
	/* a later file reads whole */
	int fd = temp_file(1u << 20);
	struct seen s = { .cut_fd = -1 };
	assert_int_equal(mapped_file_each(fd, 1u << 20, 65536, look, &s), 0);
	assert_int_equal(s.wrong, 0);
	close(fd);
}

static void test_what_cannot_be_mapped_says_so(void **state)
{
	(void)state;
	struct seen s = { .cut_fd = -1 };
	int pipes[2];
	assert_int_equal(pipe(pipes), 0);
	assert_int_equal(mapped_file_each(pipes[0], 4096, 4096, look, &s), -ENODEV);
	assert_int_equal(mapped_file_each(pipes[0], 0, 4096, look, &s), -EINVAL);
	assert_int_equal(s.pieces, 0);
	close(pipes[0]);
	close(pipes[1]);
}

/* Touches a page past the end of a file mapped elsewhere, during a mapped read. */
static int fault_elsewhere(void *arg, const unsigned char *data, size_t n)
{
	(void)data;
	(void)n;
	const volatile unsigned char *other = arg;
	return other[8192];
}

static void test_a_fault_outside_the_mapping_still_kills(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = temp_file(1u << 20), other = temp_file(4096);
		unsigned char *map = mmap(NULL, 16384, PROT_READ, MAP_SHARED, other, 0);
		if (map == MAP_FAILED)
			_exit(2);
		mapped_file_each(fd, 1u << 20, 65536, fault_elsewhere, map);
		_exit(3); /* not reached: the fault is not the mapped read's */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGBUS);
}

/* hf_hash_fd maps files of 16 MiB and more: its digest must be the one-shot
 * digest of the same bytes, for sha256 and for git's blob sha1. */
static void test_large_file_hash_equals_the_one_shot_digest(void **state)
{
	(void)state;
	const struct crypto_api *c = crypto_dl();
	assert_non_null(c);
	uint64_t sizes[] = { (16u << 20) - 1, 16u << 20, (17u << 20) + 5 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = (size_t)sizes[k];
		int fd = temp_file(size);
		unsigned char *all = malloc(size + 64);
		assert_non_null(all);
		for (size_t i = 0; i < size; i++)
			all[i] = pattern(i);
		unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
		unsigned len = 0;
		char hex[65], want[65];
		uint64_t bytes = 0;
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(hf_hash_fd(fd, 64, buf, sizeof(buf), hex, &bytes), 0);
		assert_int_equal(bytes, size);
		assert_true(c->digest(all, size, md, &len, c->sha256(), NULL));
		for (unsigned i = 0; i < len; i++)
			snprintf(want + 2 * i, 3, "%02x", md[i]);
		assert_string_equal(hex, want);
		/* git: sha1 over "blob SIZE\0" and the bytes */
		int head = snprintf((char *)buf, sizeof(buf), "blob %zu", size) + 1;
		unsigned char *git = malloc(size + (size_t)head);
		assert_non_null(git);
		memcpy(git, buf, (size_t)head);
		memcpy(git + head, all, size);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(hf_hash_fd(fd, 40, buf, sizeof(buf), hex, &bytes), 0);
		assert_true(c->digest(git, size + (size_t)head, md, &len, c->sha1(), NULL));
		for (unsigned i = 0; i < len; i++)
			snprintf(want + 2 * i, 3, "%02x", md[i]);
		assert_string_equal(hex, want);
		free(git);
		free(all);
		close(fd);
	}
}

/* The process's peak resident set, in KiB (VmHWM: mapped file pages count). */
static long peak_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	char line[256];
	long kib = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	assert_true(kib > 0);
	return kib;
}

static int ignore(void *arg, const unsigned char *data, size_t n)
{
	(void)data;
	*(uint64_t *)arg += n;
	return 0;
}

/* Mapped pages count in the RSS (and the OOM killer's score): reading a
 * 96 MiB file must not make the process 96 MiB larger. */
static void test_memory_does_not_grow_with_the_file(void **state)
{
	(void)state;
	uint64_t size = 96u << 20, seen = 0;
	int fd = temp_file(size);
	long before = peak_rss_kib();
	assert_int_equal(mapped_file_each(fd, size, 65536, ignore, &seen), 0);
	assert_int_equal(seen, size);
	long grown = peak_rss_kib() - before;
	assert_true(grown < 16 * 1024);
	close(fd);
}

/* mapped_file_guard over a caller's own mapping: fn's answer when every
 * page it reads is there; -EFAULT, not SIGBUS, when the file was cut short
 * under it, on this thread as many times as it happens. */
struct guarded {
	const unsigned char *map;
	size_t size;
	uint64_t sum;
};

static int read_all(void *arg)
{
	struct guarded *g = arg;
	for (size_t i = 0; i < g->size; i += 512)
		g->sum += g->map[i];
	return 5;
}

static void test_guard_of_a_callers_mapping(void **state)
{
	(void)state;
	size_t size = 1u << 20;
	for (int round = 0; round < 3; round++) {
		int fd = temp_file(size);
		void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		assert_true(m != MAP_FAILED);
		struct guarded g = { m, size, 0 };
		assert_int_equal(mapped_file_guard(m, (char *)m + size, read_all, &g), 5);
		if (round) /* cut after the map: the pages past one are gone */
			assert_int_equal(ftruncate(fd, 4096), 0);
		int rc = mapped_file_guard(m, (char *)m + size, read_all, &g);
		assert_int_equal(rc, round ? -EFAULT : 5);
		munmap(m, size);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: the others raise the peak it measures from */
		cmocka_unit_test(test_memory_does_not_grow_with_the_file),
		cmocka_unit_test(test_guard_of_a_callers_mapping),
		cmocka_unit_test(test_every_byte_in_order_in_pieces),
		cmocka_unit_test(test_a_nonzero_answer_stops_it),
		cmocka_unit_test(test_a_file_cut_short_under_it_is_an_error_not_a_crash),
		cmocka_unit_test(test_what_cannot_be_mapped_says_so),
		cmocka_unit_test(test_a_fault_outside_the_mapping_still_kills),
		cmocka_unit_test(test_large_file_hash_equals_the_one_shot_digest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
