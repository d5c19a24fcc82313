/* The hf group's facts: where the hub cache is (hf.location), the mount
 * that holds it (hf.mounted), its free space (hf.space), what the layout
 * scan counted (hf.layout) and what verifying the blobs found
 * (hf.integrity). One encoder per check (the check writes its details with
 * it) and one decoder per check own the details keys;
 * checks/report.schema.json describes them ($defs.details, "hf.*"). */
#ifndef GPUGATE_FACTS_HF_H
#define GPUGATE_FACTS_HF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* hf.location */
struct hf_location_fact {
	const char *hub_cache, *from, *hf_home;
	bool offline;            /* HF_HUB_OFFLINE */
	const char *token;       /* where the token comes from, "none" (never the token) */
	const char *token_error; /* NULL: none */
};

/* hf.mounted: the mount table's entry that holds the cache */
struct hf_mount_fact {
	const char *mount_point, *fstype, *source, *options;
};

/* hf.space */
struct hf_space_fact {
	uint64_t free_bytes, min_free_bytes;
};

/* hf.layout */
struct hf_layout_fact {
	uint64_t revisions, revisions_without_listing, repos, size_on_disk;
};

/* hf.integrity */
struct hf_integrity_fact {
	uint64_t files, matching, unverified, bytes_hashed, bytes_left, hashed, trusted;
	const char *scope;  /* "models" or "cache" */
	const char *record; /* the verified-blob record's path, NULL: none */
	const char *record_note;
	json_t *problems; /* src/hf/verify.c hf_result_json's objects; encode takes it, decode borrows it */
};

/* What a report says of the group; each has_ bit says its check wrote
 * details (decoded), the fields are zero otherwise. */
struct hf_cache_facts {
	bool has_location, has_mount, has_space, has_layout, has_integrity;
	struct hf_location_fact location;
	struct hf_mount_fact mount;
	struct hf_space_fact space;
	struct hf_layout_fact layout;
	struct hf_integrity_fact integrity;
};

/* Encoders: each sets its check's keys in details. */
void hf_location_encode(json_t *details, const struct hf_location_fact *f);
void hf_mount_encode(json_t *details, const struct hf_mount_fact *f);
void hf_space_encode(json_t *details, const struct hf_space_fact *f);
void hf_layout_encode(json_t *details, const struct hf_layout_fact *f);
void hf_integrity_encode(json_t *details, const struct hf_integrity_fact *f); /* takes f->problems */

/* Decoders: each reads its check's details (NULL or empty: that check
 * wrote none, its has_ bit stays false) into f. Strings and problems point
 * into details, which must outlive f. 0, or -1 with the reason (check and
 * key) in err when a key has the wrong type; a missing key reads as 0,
 * false or NULL. */
int hf_location_decode(const json_t *details, struct hf_cache_facts *f, char *err, size_t errsz);
int hf_mount_decode(const json_t *details, struct hf_cache_facts *f, char *err, size_t errsz);
int hf_space_decode(const json_t *details, struct hf_cache_facts *f, char *err, size_t errsz);
int hf_layout_decode(const json_t *details, struct hf_cache_facts *f, char *err, size_t errsz);
int hf_integrity_decode(const json_t *details, struct hf_cache_facts *f, char *err, size_t errsz);

#endif
