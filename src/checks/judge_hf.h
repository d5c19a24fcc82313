/* The hf group's judging of where the cache lies, apart from reading the
 * mount table, the spec and the file system: whether the container uses
 * Hugging Face at all, whether the cache must be a mounted volume, may be
 * written, and has room. Internal to src/checks/hf.c; exposed so
 * tests/unit/test_judge_hf.c can judge hand-built facts. */
#ifndef GPUGATE_JUDGE_HF_H
#define GPUGATE_JUDGE_HF_H

#include <stdbool.h>
#include <stdint.h>

#include "../result.h"

struct hf_facts {
	bool healthcheck;   /* the healthcheck profile: nothing is written */
	bool models_listed; /* the spec lists hf.models */
	bool cache_missing; /* the cache folder does not exist (ENOENT) */
	bool on_root;       /* the cache's mount is the root filesystem's */
	bool require_mount; /* hf.require_mount */
	bool read_only;     /* hf.read_only: read-only by design */
	bool ro_mount;      /* the cache's mount is read-only */
	bool offline;       /* HF_HUB_OFFLINE is set */
};

/* A healthcheck of a container with no sign it uses Hugging Face (no
 * hf.models, no cache folder, no volume): a GPU-only container, whose
 * missing volume or unwritable cache only warns. */
bool hf_judge_unused(const struct hf_facts *f);

enum hf_mount_verdict {
	HF_MOUNT_OWN,          /* on its own mount */
	HF_MOUNT_ROOT_ALLOWED, /* on the root filesystem, hf.require_mount false */
	HF_MOUNT_ROOT_UNUSED,  /* on the root filesystem of a GPU-only container: a warning */
	HF_MOUNT_ROOT,         /* on the root filesystem, a volume required: a failure */
};
enum hf_mount_verdict hf_judge_mounted(const struct hf_facts *f, bool unused);

enum hf_write_verdict {
	HF_WRITE_BY_DESIGN,        /* read-only by design, offline: a pass */
	HF_WRITE_BY_DESIGN_ONLINE, /* read-only by design, HF_HUB_OFFLINE unset: a warning */
	HF_WRITE_RO_MOUNT,         /* a read-only mount the spec does not expect: a failure */
	HF_WRITE_TRY,              /* writable as far as the mount says: test the folder */
};
enum hf_write_verdict hf_judge_writable(const struct hf_facts *f);
/* The status of a cache folder this user cannot write. */
enum status hf_judge_not_writable(bool unused);
/* Whether avail bytes free meet min_free (need). */
bool hf_judge_space(uint64_t avail, uint64_t need);

#endif
