/* What the operator commands (spec freeze, diff) share: how they write
 * their output and read their inputs. */
#ifndef GPUGATE_OPERATOR_H
#define GPUGATE_OPERATOR_H

#include <stddef.h>

/* Writes data to path: "-" is standard output; an existing target that is
 * not a regular file (a character device, a FIFO, a link to one) is written
 * through, never renamed over; a regular or missing file is replaced
 * atomically. 0, or -errno with err naming the file and the problem. */
int operator_write_output(const char *path, const char *data, size_t len, char *err, size_t errsize);

/* Reads a whole input file of at most max bytes, without blocking: a FIFO,
 * a device or a folder is an error naming the file. "-" is standard input
 * (a file or a pipe, read to its end; a terminal is refused), with the same
 * cap. 0, or -errno with err filled. content is NUL-terminated; caller frees. */
int operator_read_input(const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize);

#endif
