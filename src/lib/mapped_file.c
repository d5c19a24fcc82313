#include "mapped_file.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The mapping this thread is reading, and where to go when a page of it
 * cannot be read. Only this thread's own faults inside it are caught. */
static _Thread_local sigjmp_buf *fault_jump;
static _Thread_local const unsigned char *fault_lo, *fault_hi;

static void on_sigbus(int sig, siginfo_t *si, void *context)
{
	(void)context;
	const unsigned char *at = si->si_addr;
	if (fault_jump && at >= fault_lo && at < fault_hi)
		siglongjmp(*fault_jump, 1);
	/* not ours: the default action, on the same fault when we return */
	signal(sig, SIG_DFL);
}

/* Set on every call, not once: a test harness (cmocka) or a library may
 * have put its own SIGBUS handler in between; one system call a file. */
static int install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) == 0 ? 0 : -errno;
}

/* A file is mapped a window at a time, each unmapped once read: mapped
 * pages count in the process's RSS (and in the OOM killer's score), and a
 * 70 GB blob must not make a health check look 70 GB large. */
#define WINDOW (4u << 20)

int mapped_file_each(int fd, uint64_t size, size_t step, int (*each)(void *arg, const unsigned char *data, size_t n),
		     void *arg)
{
	if (size == 0 || step == 0)
		return -EINVAL;
	int err = install();
	if (err)
		return err;
	sigjmp_buf jump;
	volatile int rc = 0;
	unsigned char *volatile map = NULL;
	volatile size_t len = 0;
	if (sigsetjmp(jump, 1) == 0) {
		for (uint64_t at = 0; at < size && rc == 0; at += len) {
			len = size - at < WINDOW ? (size_t)(size - at) : WINDOW;
			/* all of it at once: one call instead of a fault per 64 KiB */
			map = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, (off_t)at);
			if (map == MAP_FAILED) {
				map = NULL;
				rc = -errno;
				break;
			}
			fault_lo = map;
			fault_hi = map + len;
			fault_jump = &jump;
			for (size_t off = 0; off < len && rc == 0; off += step)
				rc = each(arg, map + off, len - off < step ? len - off : step);
			fault_jump = NULL;
			munmap(map, len);
			map = NULL;
		}
	} else { /* a page past the file's new end, or one the disk could not give */
		fault_jump = NULL;
		munmap(map, len);
		struct stat st;
		rc = fstat(fd, &st) == 0 && (uint64_t)st.st_size < size ? -ESTALE : -EIO;
	}
	return rc;
}

int mapped_file_guard(const void *lo, const void *hi, int (*fn)(void *arg), void *arg)
{
	int err = install();
	if (err)
		return err;
	sigjmp_buf jump;
	volatile int rc = -EFAULT;
	if (sigsetjmp(jump, 1) == 0) {
		fault_lo = lo;
		fault_hi = hi;
		fault_jump = &jump;
		rc = fn(arg);
	}
	fault_jump = NULL;
	return rc;
}
