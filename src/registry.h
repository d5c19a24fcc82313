/* The registry: one static table of check groups, each with its checks, the
 * spec keys it reads and an optional validator for them. Adding a check means
 * adding a line to its group's table; adding a group, one line in registry.c. */
#ifndef GPUGATE_REGISTRY_H
#define GPUGATE_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "result.h"
#include "spec.h"

struct check_def {
	const char *id;          /* dotted, first part is the group */
	const char *description; /* one line, for `gpugate list` */
	const char *enabled_by;  /* spec bool that turns it on, or NULL: on with its group */
	bool expensive;          /* loads a GPU or reads every byte of something */
	void (*run)(const struct context *ctx, void *group_state, struct result *r);
};

struct check_group {
	const char *name; /* also the spec section that turns the group on */
	const char *description;
	const struct spec_key *spec_keys;                                 /* terminated by { NULL } */
	int (*validate)(const struct spec *spec, struct spec_error *err); /* may be NULL */
	/* Work shared by the group's checks (a sysfs scan, a probe run), made once
	 * before the first of them runs. May be NULL. */
	void *(*prepare)(const struct context *ctx);
	void (*release)(void *state);
	/* Its checks may run on a thread of their own while another thread runs
	 * the other groups' (src/runner.c): they read only the context and
	 * files of their own, and change no state the others read. */
	bool own_thread;
	const struct check_def *checks; /* terminated by { NULL } */
};

extern const struct check_group *const registry_groups[]; /* NULL-terminated */
/* The spec keys that belong to no group (profile, deadline, ...); { NULL }-terminated. */
extern const struct spec_key registry_top_keys[];

/* The spec schema the loader checks a spec against (spec.h): every group's
 * keys, validators and section names. */
extern const struct spec_schema registry_schema;

const struct spec_key *registry_spec_key(const char *path);
/* Typed reads of a spec key that fall back to the default its table entry
 * declares (spec_key.def), so no reader retypes one. A key without a
 * default reads as NULL, false or 0. The _for forms take the healthcheck
 * profile's default where the key declares one. */
const char *key_default(const char *path, bool healthcheck);
const char *key_str(const struct spec *spec, const char *path);
const char *key_str_for(const struct spec *spec, const char *path, bool healthcheck);
bool key_bool(const struct spec *spec, const char *path);
long key_int(const struct spec *spec, const char *path);
uint64_t key_size(const struct spec *spec, const char *path);
uint64_t key_size_for(const struct spec *spec, const char *path, bool healthcheck);
double key_seconds(const struct spec *spec, const char *path);
/* Runs every group's validator; 0 or -1 with err filled. */
int registry_validate_spec(const struct spec *spec, struct spec_error *err);
/* True when id equals pattern or starts with pattern followed by '.'. */
bool check_id_matches(const char *id, const char *pattern);
/* Whether spec turns check c of group g on: its group is on (its section
 * is present: registry_group_enabled) and the check's enabled_by bool, if
 * any, is true (registry_check_switched_on). A plan asks the group once. */
bool registry_check_enabled(const struct spec *spec, const struct check_group *g, const struct check_def *c);
bool registry_group_enabled(const struct spec *spec, const struct check_group *g);
bool registry_check_switched_on(const struct spec *spec, const struct check_def *c);
const struct check_def *registry_find(const char *id_or_prefix);
/* The check id or group name nearest to an unknown one ("did you mean"),
 * or NULL when none is close (lib/nearest.h). */
const char *registry_nearest_id(const char *word);
/* The spec key path nearest to an unknown one, or NULL. */
const char *registry_nearest_key(const char *path);

#endif
