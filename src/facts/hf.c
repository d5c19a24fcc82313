#include "facts/hf.h"

#include "../result.h"
#include "facts/decode.h"

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

static json_t *count(uint64_t n)
{
	return json_integer((json_int_t)n);
}

void hf_location_encode(json_t *d, const struct hf_location_fact *f)
{
	json_object_set_new(d, K_HUB_CACHE, json_text(f->hub_cache));
	json_object_set_new(d, K_FROM, json_text(f->from));
	json_object_set_new(d, K_HF_HOME, json_text(f->hf_home));
	json_object_set_new(d, K_OFFLINE, json_boolean(f->offline));
	json_object_set_new(d, K_TOKEN, json_text(f->token ? f->token : "none"));
	if (f->token_error)
		json_object_set_new(d, K_TOKEN_ERROR, json_text(f->token_error));
}

void hf_mount_encode(json_t *d, const struct hf_mount_fact *f)
{
	json_object_set_new(d, K_MOUNT_POINT, json_text(f->mount_point));
	json_object_set_new(d, K_FSTYPE, json_text(f->fstype));
	json_object_set_new(d, K_SOURCE, json_text(f->source));
	json_object_set_new(d, K_OPTIONS, json_text(f->options));
}

void hf_space_encode(json_t *d, const struct hf_space_fact *f)
{
	json_object_set_new(d, K_FREE, count(f->free_bytes));
	json_object_set_new(d, K_MIN_FREE, count(f->min_free_bytes));
}

void hf_layout_encode(json_t *d, const struct hf_layout_fact *f)
{
	json_object_set_new(d, K_REVISIONS, count(f->revisions));
	json_object_set_new(d, K_UNLISTED, count(f->revisions_without_listing));
	json_object_set_new(d, K_REPOS, count(f->repos));
	json_object_set_new(d, K_SIZE_ON_DISK, count(f->size_on_disk));
}

void hf_integrity_encode(json_t *d, const struct hf_integrity_fact *f)
{
	json_object_set_new(d, K_FILES, count(f->files));
	json_object_set_new(d, K_MATCHING, count(f->matching));
	json_object_set_new(d, K_UNVERIFIED, count(f->unverified));
	json_object_set_new(d, K_BYTES_HASHED, count(f->bytes_hashed));
	json_object_set_new(d, K_BYTES_LEFT, count(f->bytes_left));
	json_object_set_new(d, K_HASHED, count(f->hashed));
	json_object_set_new(d, K_TRUSTED, count(f->trusted));
	json_object_set_new(d, K_SCOPE, json_text(f->scope));
	json_object_set_new(d, K_RECORD, json_text_or_null(f->record));
	json_object_set_new(d, K_RECORD_NOTE, json_text(f->record_note));
	json_object_set_new(d, K_PROBLEMS, f->problems ? f->problems : json_array());
}

int hf_location_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	static const char check[] = "hf.location";
	struct hf_location_fact *l = &f->location;
	*l = (struct hf_location_fact){ 0 };
	if (facts_details(d, check, &f->has_location, err, errsz) < 0)
		return -1;
	if (!f->has_location)
		return 0;
	if (facts_str(d, check, K_HUB_CACHE, &l->hub_cache, err, errsz) < 0 ||
	    facts_str(d, check, K_FROM, &l->from, err, errsz) < 0 ||
	    facts_str(d, check, K_HF_HOME, &l->hf_home, err, errsz) < 0 ||
	    facts_bool(d, check, K_OFFLINE, &l->offline, err, errsz) < 0 ||
	    facts_str(d, check, K_TOKEN, &l->token, err, errsz) < 0 ||
	    facts_str(d, check, K_TOKEN_ERROR, &l->token_error, err, errsz) < 0) {
		f->has_location = false;
		*l = (struct hf_location_fact){ 0 };
		return -1;
	}
	return 0;
}

int hf_mount_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	static const char check[] = "hf.mounted";
	struct hf_mount_fact *m = &f->mount;
	*m = (struct hf_mount_fact){ 0 };
	if (facts_details(d, check, &f->has_mount, err, errsz) < 0)
		return -1;
	if (!f->has_mount)
		return 0;
	if (facts_str(d, check, K_MOUNT_POINT, &m->mount_point, err, errsz) < 0 ||
	    facts_str(d, check, K_FSTYPE, &m->fstype, err, errsz) < 0 ||
	    facts_str(d, check, K_SOURCE, &m->source, err, errsz) < 0 ||
	    facts_str(d, check, K_OPTIONS, &m->options, err, errsz) < 0) {
		f->has_mount = false;
		*m = (struct hf_mount_fact){ 0 };
		return -1;
	}
	return 0;
}

int hf_space_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	static const char check[] = "hf.space";
	struct hf_space_fact *s = &f->space;
	*s = (struct hf_space_fact){ 0 };
	if (facts_details(d, check, &f->has_space, err, errsz) < 0)
		return -1;
	if (!f->has_space)
		return 0;
	if (facts_count(d, check, K_FREE, &s->free_bytes, err, errsz) < 0 ||
	    facts_count(d, check, K_MIN_FREE, &s->min_free_bytes, err, errsz) < 0) {
		f->has_space = false;
		*s = (struct hf_space_fact){ 0 };
		return -1;
	}
	return 0;
}

int hf_layout_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	static const char check[] = "hf.layout";
	struct hf_layout_fact *l = &f->layout;
	*l = (struct hf_layout_fact){ 0 };
	if (facts_details(d, check, &f->has_layout, err, errsz) < 0)
		return -1;
	if (!f->has_layout)
		return 0;
	if (facts_count(d, check, K_REVISIONS, &l->revisions, err, errsz) < 0 ||
	    facts_count(d, check, K_UNLISTED, &l->revisions_without_listing, err, errsz) < 0 ||
	    facts_count(d, check, K_REPOS, &l->repos, err, errsz) < 0 ||
	    facts_count(d, check, K_SIZE_ON_DISK, &l->size_on_disk, err, errsz) < 0) {
		f->has_layout = false;
		*l = (struct hf_layout_fact){ 0 };
		return -1;
	}
	return 0;
}

int hf_integrity_decode(const json_t *d, struct hf_cache_facts *f, char *err, size_t errsz)
{
	static const char check[] = "hf.integrity";
	struct hf_integrity_fact *v = &f->integrity;
	*v = (struct hf_integrity_fact){ 0 };
	if (facts_details(d, check, &f->has_integrity, err, errsz) < 0)
		return -1;
	if (!f->has_integrity)
		return 0;
	if (facts_count(d, check, K_FILES, &v->files, err, errsz) < 0 ||
	    facts_count(d, check, K_MATCHING, &v->matching, err, errsz) < 0 ||
	    facts_count(d, check, K_UNVERIFIED, &v->unverified, err, errsz) < 0 ||
	    facts_count(d, check, K_BYTES_HASHED, &v->bytes_hashed, err, errsz) < 0 ||
	    facts_count(d, check, K_BYTES_LEFT, &v->bytes_left, err, errsz) < 0 ||
	    facts_count(d, check, K_HASHED, &v->hashed, err, errsz) < 0 ||
	    facts_count(d, check, K_TRUSTED, &v->trusted, err, errsz) < 0 ||
	    facts_str(d, check, K_SCOPE, &v->scope, err, errsz) < 0 ||
	    facts_str_or_null(d, check, K_RECORD, &v->record, err, errsz) < 0 ||
	    facts_str(d, check, K_RECORD_NOTE, &v->record_note, err, errsz) < 0 ||
	    facts_list(d, check, K_PROBLEMS, &v->problems, err, errsz) < 0) {
		f->has_integrity = false;
		*v = (struct hf_integrity_fact){ 0 };
		return -1;
	}
	return 0;
}
