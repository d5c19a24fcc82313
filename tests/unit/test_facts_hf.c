/* The hf group's facts (src/facts/hf.c): what each check's encoder writes
 * decodes back to the same facts, and hostile details (a key of the wrong
 * type, a negative size, details that are not an object) are refused with
 * the check and key named, while missing keys read as zero. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "facts/hf.h"

static void location_round_trip(void **state)
{
	(void)state;
	json_t *d = json_object();
	struct hf_location_fact in = { "/data/hub", "HF_HUB_CACHE", "/data", true, NULL, "token file unreadable" };
	hf_location_encode(d, &in);
	struct hf_cache_facts f = { 0 };
	char err[256];
	assert_int_equal(hf_location_decode(d, &f, err, sizeof(err)), 0);
	assert_true(f.has_location);
	assert_string_equal(f.location.hub_cache, "/data/hub");
	assert_string_equal(f.location.from, "HF_HUB_CACHE");
	assert_string_equal(f.location.hf_home, "/data");
	assert_true(f.location.offline);
	assert_string_equal(f.location.token, "none"); /* no source: "none", never the token */
	assert_string_equal(f.location.token_error, "token file unreadable");

	/* no token error: the key is left out and reads as NULL */
	json_t *d2 = json_object();
	in.token = "HF_TOKEN";
	in.token_error = NULL;
	in.offline = false;
	hf_location_encode(d2, &in);
	assert_null(json_object_get(d2, "token_error"));
	assert_int_equal(hf_location_decode(d2, &f, err, sizeof(err)), 0);
	assert_string_equal(f.location.token, "HF_TOKEN");
	assert_null(f.location.token_error);
	assert_false(f.location.offline);

	/* hostile: offline as a string, the path as a number */
	json_object_set_new(d2, "offline", json_string("yes"));
	assert_int_equal(hf_location_decode(d2, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.location: \"offline\" is not true or false");
	assert_false(f.has_location);
	assert_null(f.location.hub_cache); /* nothing half read is left */
	json_object_set_new(d2, "offline", json_false());
	json_object_set_new(d2, "hub_cache", json_integer(7));
	assert_int_equal(hf_location_decode(d2, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.location: \"hub_cache\" is not a string");
	json_decref(d);
	json_decref(d2);
}

static void mount_and_space_round_trip(void **state)
{
	(void)state;
	json_t *m = json_object(), *s = json_object();
	hf_mount_encode(m, &(struct hf_mount_fact){ "/data", "nfs4", "server:/export", "rw,relatime" });
	/* above 2^53: the integers are not squeezed through a double */
	hf_space_encode(s, &(struct hf_space_fact){ ((uint64_t)1 << 60) + 1, (uint64_t)10 << 30 });
	struct hf_cache_facts f = { 0 };
	char err[256];
	assert_int_equal(hf_mount_decode(m, &f, err, sizeof(err)), 0);
	assert_int_equal(hf_space_decode(s, &f, err, sizeof(err)), 0);
	assert_true(f.has_mount && f.has_space);
	assert_string_equal(f.mount.mount_point, "/data");
	assert_string_equal(f.mount.fstype, "nfs4");
	assert_string_equal(f.mount.source, "server:/export");
	assert_string_equal(f.mount.options, "rw,relatime");
	assert_true(f.space.free_bytes == ((uint64_t)1 << 60) + 1);
	assert_true(f.space.min_free_bytes == (uint64_t)10 << 30);

	/* a negative or fractional size is no size */
	json_object_set_new(s, "free_bytes", json_integer(-1));
	assert_int_equal(hf_space_decode(s, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.space: \"free_bytes\" is not an integer from 0");
	assert_false(f.has_space);
	json_object_set_new(s, "free_bytes", json_real(1.5));
	assert_int_equal(hf_space_decode(s, &f, err, sizeof(err)), -1);
	json_object_set_new(m, "options", json_array());
	assert_int_equal(hf_mount_decode(m, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.mounted: \"options\" is not a string");
	json_decref(m);
	json_decref(s);
}

static void layout_and_integrity_round_trip(void **state)
{
	(void)state;
	json_t *l = json_object(), *v = json_object();
	hf_layout_encode(l, &(struct hf_layout_fact){ 3, 1, 2, 123456789 });
	json_t *problems = json_array();
	json_array_append_new(problems, json_pack("{s:s}", "file", "model.safetensors"));
	struct hf_integrity_fact in = { .files = 10,
					.matching = 8,
					.unverified = 1,
					.bytes_hashed = 4096,
					.bytes_left = 0,
					.hashed = 2,
					.trusted = 6,
					.scope = "models",
					.record = NULL,
					.record_note = "no record folder",
					.problems = problems };
	hf_integrity_encode(v, &in);
	assert_true(json_is_null(json_object_get(v, "record")));
	struct hf_cache_facts f = { 0 };
	char err[256];
	assert_int_equal(hf_layout_decode(l, &f, err, sizeof(err)), 0);
	assert_int_equal(hf_integrity_decode(v, &f, err, sizeof(err)), 0);
	assert_true(f.layout.revisions == 3 && f.layout.revisions_without_listing == 1 && f.layout.repos == 2);
	assert_true(f.layout.size_on_disk == 123456789);
	const struct hf_integrity_fact *g = &f.integrity;
	assert_true(g->files == 10 && g->matching == 8 && g->unverified == 1 && g->bytes_hashed == 4096);
	assert_true(g->bytes_left == 0 && g->hashed == 2 && g->trusted == 6);
	assert_string_equal(g->scope, "models");
	assert_null(g->record);
	assert_string_equal(g->record_note, "no record folder");
	assert_int_equal(json_array_size(g->problems), 1);

	/* a record path reads back; problems that are not a list are refused */
	json_object_set_new(v, "record", json_string("/var/lib/gpugate/verified"));
	assert_int_equal(hf_integrity_decode(v, &f, err, sizeof(err)), 0);
	assert_string_equal(f.integrity.record, "/var/lib/gpugate/verified");
	json_object_set_new(v, "record", json_true());
	assert_int_equal(hf_integrity_decode(v, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.integrity: \"record\" is not a string or null");
	json_object_set_new(v, "record", json_null());
	json_object_set_new(v, "problems", json_object());
	assert_int_equal(hf_integrity_decode(v, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.integrity: \"problems\" is not a list");
	assert_false(f.has_integrity);
	assert_null(f.integrity.problems);
	json_object_set_new(l, "repos", json_string("2"));
	assert_int_equal(hf_layout_decode(l, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.layout: \"repos\" is not an integer from 0");
	json_decref(l);
	json_decref(v);
}

/* a check that wrote no details (skipped, blocked) or a report without it */
static void missing_details_and_keys(void **state)
{
	(void)state;
	struct hf_cache_facts f = { 0 };
	char err[256];
	assert_int_equal(hf_location_decode(NULL, &f, err, sizeof(err)), 0);
	assert_false(f.has_location);
	json_t *empty = json_object();
	assert_int_equal(hf_integrity_decode(empty, &f, err, sizeof(err)), 0);
	assert_false(f.has_integrity);
	/* present but with keys missing: what is there is read, the rest is zero */
	json_t *partial = json_pack("{s:I}", "free_bytes", (json_int_t)42);
	assert_int_equal(hf_space_decode(partial, &f, err, sizeof(err)), 0);
	assert_true(f.has_space);
	assert_true(f.space.free_bytes == 42 && f.space.min_free_bytes == 0);
	json_t *loc = json_pack("{s:s}", "from", "default");
	assert_int_equal(hf_location_decode(loc, &f, err, sizeof(err)), 0);
	assert_null(f.location.hub_cache);
	assert_false(f.location.offline);
	/* details that are not an object */
	json_t *list = json_array();
	assert_int_equal(hf_layout_decode(list, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "hf.layout: its details are not an object");
	assert_false(f.has_layout);
	json_decref(empty);
	json_decref(partial);
	json_decref(loc);
	json_decref(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(location_round_trip),
		cmocka_unit_test(mount_and_space_round_trip),
		cmocka_unit_test(layout_and_integrity_round_trip),
		cmocka_unit_test(missing_details_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
