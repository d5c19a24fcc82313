/* Every write hf fetch makes into the Hugging Face hub cache, through folder
 * fds opened by hf_dir_walk (hf/cache_dir.h): one openat per path component,
 * never following a link, so a symlink planted where a folder must be
 * (blobs, snapshots, refs, trees, .no_exist, .locks/<repo>) is refused and
 * named, and nothing is written outside the cache. The cache folder's own
 * path is the user's choice and may pass through links. */
#ifndef GPUGATE_PROVISION_HF_CACHE_WRITE_H
#define GPUGATE_PROVISION_HF_CACHE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

struct hf_cache_dirs {
	int cache; /* the cache folder */
	int repo;  /* <cache>/models--org--name */
	int blobs; /* <repo>/blobs */
	int locks; /* <cache>/.locks/models--org--name */
	const char *cache_path;
	const char *folder; /* models--org--name, for messages */
};

/* Sets d up with every fd closed; nothing is made before the first write,
 * which makes the cache folder (mkdir -p). The strings are borrowed. */
void hfw_init(struct hf_cache_dirs *d, const char *cache_path, const char *folder);
/* Opens (making it) the repo folder. 0, or -1 with err. */
int hfw_open_repo(struct hf_cache_dirs *d, char *err, size_t n);
/* Opens (making them) the repo folder, its blobs/ and .locks/<folder>. */
int hfw_open_store(struct hf_cache_dirs *d, char *err, size_t n);
void hfw_close(struct hf_cache_dirs *d);

/* Writes CACHEDIR.TAG at the cache root unless something is there already
 * (huggingface_hub's _create_cachedir_tag); a failure is ignored, as there. */
void hfw_cachedir_tag(struct hf_cache_dirs *d);
/* The functions below open the repo folder when it is not open yet. */
/* Writes rel (under the repo folder, e.g. "refs/main", "trees/C.json")
 * through a temp file (mode less the umask), fsync and rename, making its
 * folders. 0 or -1 with err. */
int hfw_write_file(struct hf_cache_dirs *d, const char *rel, const char *data, size_t len, unsigned mode, char *err,
		   size_t n);
/* Makes rel (under the repo folder) a symlink to target, replacing what is
 * there (a temp link renamed over it). 0 or -1 with err. */
int hfw_link(struct hf_cache_dirs *d, const char *rel, const char *target, char *err, size_t n);
/* Creates the empty file rel under the repo folder if missing (a .no_exist
 * marker). 0 or -1 with err. */
int hfw_touch(struct hf_cache_dirs *d, const char *rel, char *err, size_t n);

/* huggingface_hub's CACHEDIR.TAG, byte for byte (_local_folder.py, CACHEDIR_TAG_CONTENT). */
extern const char hfw_cachedir_tag_content[];

#endif
