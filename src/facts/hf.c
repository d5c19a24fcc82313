#include "facts/hf.h"

#include "../result.h"
#include "facts/fields.h"

/* the details keys of hf.location, .mounted, .space, .layout and
 * .integrity: written and read only here */
#define K_HUB_CACHE    "hub_cache"
#define K_FROM         "from"
#define K_HF_HOME      "hf_home"
#define K_OFFLINE      "offline"
#define K_TOKEN        "token"
#define K_TOKEN_ERROR  "token_error"
#define K_MOUNT_POINT  "mount_point"
#define K_FSTYPE       "fstype"
#define K_SOURCE       "source"
#define K_OPTIONS      "options"
#define K_FREE         "free_bytes"
#define K_MIN_FREE     "min_free_bytes"
#define K_REVISIONS    "revisions"
#define K_UNLISTED     "revisions_without_listing"
#define K_REPOS        "repos"
#define K_SIZE_ON_DISK "size_on_disk"
#define K_FILES        "files"
#define K_MATCHING     "matching"
#define K_UNVERIFIED   "unverified"
#define K_BYTES_HASHED "bytes_hashed"
#define K_BYTES_LEFT   "bytes_left"
#define K_HASHED       "hashed"
#define K_TRUSTED      "trusted"
#define K_SCOPE        "scope"
#define K_RECORD       "record"
#define K_RECORD_NOTE  "record_note"
#define K_PROBLEMS     "problems"

/* each check's fields, in the order the details list them */
static const struct fact_field location_fields[] = {
	{ K_HUB_CACHE, FACT_TEXT, FACT_MEMBER(struct hf_location_fact, hub_cache) },
	{ K_FROM, FACT_TEXT, FACT_MEMBER(struct hf_location_fact, from) },
	{ K_HF_HOME, FACT_TEXT, FACT_MEMBER(struct hf_location_fact, hf_home) },
	{ K_OFFLINE, FACT_BOOL, FACT_MEMBER(struct hf_location_fact, offline) },
	{ K_TOKEN, FACT_TEXT, FACT_MEMBER(struct hf_location_fact, token), .fallback = "none" },
	{ K_TOKEN_ERROR, FACT_TEXT, FACT_MEMBER(struct hf_location_fact, token_error), .flags = FACT_OMIT_NULL },
};
FACT_TABLE(location_table, struct hf_location_fact, NULL, location_fields);

static const struct fact_field mount_fields[] = {
	{ K_MOUNT_POINT, FACT_TEXT, FACT_MEMBER(struct hf_mount_fact, mount_point) },
	{ K_FSTYPE, FACT_TEXT, FACT_MEMBER(struct hf_mount_fact, fstype) },
	{ K_SOURCE, FACT_TEXT, FACT_MEMBER(struct hf_mount_fact, source) },
	{ K_OPTIONS, FACT_TEXT, FACT_MEMBER(struct hf_mount_fact, options) },
};
FACT_TABLE(mount_table, struct hf_mount_fact, NULL, mount_fields);

static const struct fact_field space_fields[] = {
	{ K_FREE, FACT_COUNT, FACT_MEMBER(struct hf_space_fact, free_bytes) },
	{ K_MIN_FREE, FACT_COUNT, FACT_MEMBER(struct hf_space_fact, min_free_bytes) },
};
FACT_TABLE(space_table, struct hf_space_fact, NULL, space_fields);

static const struct fact_field layout_fields[] = {
	{ K_REVISIONS, FACT_COUNT, FACT_MEMBER(struct hf_layout_fact, revisions) },
	{ K_UNLISTED, FACT_COUNT, FACT_MEMBER(struct hf_layout_fact, revisions_without_listing) },
	{ K_REPOS, FACT_COUNT, FACT_MEMBER(struct hf_layout_fact, repos) },
	{ K_SIZE_ON_DISK, FACT_COUNT, FACT_MEMBER(struct hf_layout_fact, size_on_disk) },
};
FACT_TABLE(layout_table, struct hf_layout_fact, NULL, layout_fields);

static const struct fact_field integrity_fields[] = {
	{ K_FILES, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, files) },
	{ K_MATCHING, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, matching) },
	{ K_UNVERIFIED, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, unverified) },
	{ K_BYTES_HASHED, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, bytes_hashed) },
	{ K_BYTES_LEFT, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, bytes_left) },
	{ K_HASHED, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, hashed) },
	{ K_TRUSTED, FACT_COUNT, FACT_MEMBER(struct hf_integrity_fact, trusted) },
	{ K_SCOPE, FACT_TEXT, FACT_MEMBER(struct hf_integrity_fact, scope) },
	{ K_RECORD, FACT_TEXT_OR_NULL, FACT_MEMBER(struct hf_integrity_fact, record) },
	{ K_RECORD_NOTE, FACT_TEXT, FACT_MEMBER(struct hf_integrity_fact, record_note) },
	{ K_PROBLEMS, FACT_LIST, FACT_MEMBER(struct hf_integrity_fact, problems) },
};
FACT_TABLE(integrity_table, struct hf_integrity_fact, NULL, integrity_fields);

void hf_location_encode(json_t *d, const struct hf_location_fact *f)
{
	facts_encode(d, &location_table, f);
}

void hf_mount_encode(json_t *d, const struct hf_mount_fact *f)
{
	facts_encode(d, &mount_table, f);
}

void hf_space_encode(json_t *d, const struct hf_space_fact *f)
{
	facts_encode(d, &space_table, f);
}

void hf_layout_encode(json_t *d, const struct hf_layout_fact *f)
{
	facts_encode(d, &layout_table, f);
}

void hf_integrity_encode(json_t *d, const struct hf_integrity_fact *f)
{
	facts_encode(d, &integrity_table, f);
}

int hf_location_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &location_table, &f->location, "hf.location", &f->has_location, err, errsz);
}

int hf_mount_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &mount_table, &f->mount, "hf.mounted", &f->has_mount, err, errsz);
}

int hf_space_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &space_table, &f->space, "hf.space", &f->has_space, err, errsz);
}

int hf_layout_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &layout_table, &f->layout, "hf.layout", &f->has_layout, err, errsz);
}

int hf_integrity_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &integrity_table, &f->integrity, "hf.integrity", &f->has_integrity, err, errsz);
}
