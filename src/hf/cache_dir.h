/* Opening folders inside a Hugging Face hub cache without following links:
 * the one rule `hf verify` (layout.c) reads by and `hf fetch` writes by.
 * huggingface_hub itself never makes a folder of the cache a symlink, so a
 * link where a folder must be (blobs, snapshots, refs, .locks/<repo> ...) was
 * planted, and following it would read or write outside the cache. */
#ifndef GPUGATE_HF_CACHE_DIR_H
#define GPUGATE_HF_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* One folder name under dirfd, opened with O_DIRECTORY | O_NOFOLLOW: a link
 * or a file in its place fails (ELOOP or ENOTDIR). Returns the fd or -1. */
int hf_dir_open(int dirfd, const char *name);

/* Walks rel ("a/b/c", no empty, "." or ".." parts) under dirfd one component
 * at a time with hf_dir_open; with create, missing folders are made (0777
 * less the umask, as os.makedirs makes them). shown is how messages name dirfd's folder ("" for none).
 * Returns the last folder's fd, or -1 with err saying which component is
 * wrong, e.g. "models--a--b/blobs is a symlink to /x: refusing to write
 * outside the cache". */
int hf_dir_walk(int dirfd, const char *shown, const char *rel, bool create, char *err, size_t err_size);

#endif
