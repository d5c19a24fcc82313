/* Reading a file through a read-only mapping, without the copy read(2)
 * makes, and without dying of SIGBUS when the file is cut short (or its disk
 * fails) while it is read: that page's fault becomes an error return. */
#ifndef GPUGATE_MAPPED_FILE_H
#define GPUGATE_MAPPED_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Hands the first size bytes of the regular file fd to each(arg, data, n)
 * in consecutive pieces of at most step bytes, until each returns nonzero
 * (then that value). Returns 0 when all were handed over; -ESTALE when the
 * file became shorter under the mapping; -EIO when a page could not be read
 * otherwise; -errno when it cannot be mapped (the caller then reads it). */
int mapped_file_each(int fd, uint64_t size, size_t step, int (*each)(void *arg, const unsigned char *data, size_t n),
		     void *arg);

/* Runs fn(arg) with this thread's faults in [lo, hi), a read-only mapping
 * of a file the caller made, caught: returns fn's value, or -EFAULT when
 * fn touched a page of it that could not be read (the file became shorter
 * under the mapping, or its disk failed), or -errno when the catch cannot
 * be set up (fn is not run then). fn is left where it faulted: it
 * must hold no lock and be able to stop anywhere (what it allocated must
 * be reachable from arg). Several threads may each read their own part of
 * one mapping this way at once. */
int mapped_file_guard(const void *lo, const void *hi, int (*fn)(void *arg), void *arg);

#endif
