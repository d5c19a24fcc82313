#include "probe_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/safe_io.h"
#include "../lib/util.h"
#include "../result.h"

#define CACHE_FILE "runtime.json"
/* 2: the runs of one child per device, each with its enumeration */
#define CACHE_VERSION 2

/* A folder we may trust: a real folder (no symlink), ours, not writable by
 * group or others. Creates it 0700 when missing. */
static int trusted_dir(const char *path, char *why, size_t why_size)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		snprintf(why, why_size, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) < 0) {
		snprintf(why, why_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_size, "%s is not a folder (a symlink or file there is refused)", path);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, why_size, "%s belongs to uid %u, not to this user (uid %u)", path, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -1;
	}
	if (st.st_mode & 022) {
		snprintf(why, why_size, "%s is writable by group or others (mode %04o)", path,
			 (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

char *probe_cache_dir(const struct context *ctx, char *why, size_t why_size)
{
	const char *xdg = ctx_getenv(ctx, "XDG_RUNTIME_DIR");
	char *candidates[4] = { NULL, NULL, NULL, NULL };
	if (xdg && xdg[0] == '/')
		candidates[0] = xasprintf("%s/gpugate", xdg);
	if (access("/run", W_OK) == 0)
		candidates[1] = xstrdup("/run/gpugate");
	/* a tmpfs private to the container: never the image's writable layer */
	if (access("/dev/shm", W_OK) == 0)
		candidates[2] = xasprintf("/dev/shm/gpugate-%u", (unsigned)geteuid());
	candidates[3] = xasprintf("/tmp/gpugate-%u", (unsigned)geteuid());
	char *found = NULL;
	why[0] = '\0';
	for (int i = 0; i < 4; i++) {
		if (!candidates[i])
			continue;
		if (!found && trusted_dir(candidates[i], why, why_size) == 0)
			found = candidates[i];
		else
			free(candidates[i]);
	}
	return found;
}

json_t *probe_run_to_json(const struct probe_run *run)
{
	json_t *j = json_object();
	json_object_set_new(j, "stage", json_string(run->stage));
	json_object_set_new(j, "device", json_string(run->device));
	if (run->result)
		json_object_set(j, "result", run->result);
	if (run->enumerated)
		json_object_set(j, "enumerated", run->enumerated);
	json_object_set_new(j, "killed", json_boolean(run->killed));
	json_object_set_new(j, "stage_seconds", json_real(run->stage_seconds));
	json_object_set_new(j, "exit_code", json_integer(run->exit_code));
	json_object_set_new(j, "signal", json_integer(run->signal));
	json_object_set_new(j, "seconds", json_real(run->seconds));
	json_object_set_new(j, "output", json_text(run->output ? run->output : ""));
	if (run->verdict)
		json_object_set_new(j, "verdict", json_text(run->verdict));
	if (run->failed_stage)
		json_object_set_new(j, "failed_stage", json_string(run->failed_stage));
	return j;
}

static const char *str_or(const json_t *j, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : def;
}

void probe_run_from_json(const json_t *j, struct probe_run *run)
{
	memset(run, 0, sizeof(*run));
	snprintf(run->stage, sizeof(run->stage), "%s", str_or(j, "stage", ""));
	snprintf(run->device, sizeof(run->device), "%s", str_or(j, "device", ""));
	json_t *res = json_object_get(j, "result");
	if (json_is_object(res))
		run->result = json_incref(res);
	json_t *en = json_object_get(j, "enumerated");
	if (json_is_object(en))
		run->enumerated = json_incref(en);
	run->killed = json_is_true(json_object_get(j, "killed"));
	run->stage_seconds = json_number_value(json_object_get(j, "stage_seconds"));
	run->exit_code = (int)json_integer_value(json_object_get(j, "exit_code"));
	run->signal = (int)json_integer_value(json_object_get(j, "signal"));
	run->seconds = json_number_value(json_object_get(j, "seconds"));
	run->output = xstrdup(str_or(j, "output", ""));
	const char *v = str_or(j, "verdict", NULL);
	run->verdict = v ? xstrdup(v) : NULL;
	const char *f = str_or(j, "failed_stage", NULL);
	run->failed_stage = f ? xstrdup(f) : NULL;
}

json_t *probe_cache_load(const char *dir, const char *key, double ttl, double *age_s)
{
	char *path = xasprintf("%s/" CACHE_FILE, dir);
	struct stat st;
	int fd = open_private(path, 1 << 22, &st);
	free(path);
	if (fd < 0)
		return NULL;
	json_error_t err;
	json_t *j = json_loadfd(fd, JSON_REJECT_DUPLICATES, &err);
	close(fd);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	double written = json_number_value(json_object_get(j, "written"));
	double age = wall_seconds() - written;
	bool ok = json_is_true(json_object_get(j, "ok"));
	double limit = ok ? ttl : (ttl < PROBE_CACHE_FAILURE_TTL_S ? ttl : PROBE_CACHE_FAILURE_TTL_S);
	const char *k = json_string_value(json_object_get(j, "key"));
	if (!k || strcmp(k, key) != 0 || age < 0 || age >= limit ||
	    json_integer_value(json_object_get(j, "version")) != CACHE_VERSION) {
		json_decref(j);
		return NULL;
	}
	*age_s = age;
	return j;
}

int probe_cache_store(const char *dir, const char *key, bool ok, json_t *state)
{
	json_object_set_new(state, "version", json_integer(CACHE_VERSION));
	json_object_set_new(state, "key", json_text(key));
	json_object_set_new(state, "ok", json_boolean(ok));
	json_object_set_new(state, "written", json_real(wall_seconds()));
	char *text = json_dumps(state, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	char *path = xasprintf("%s/" CACHE_FILE, dir);
	/* only ever a private regular file; no fsync: a lost cache is one more probe */
	int rc = safe_write_file(path, text, strlen(text), 0600, SAFE_WRITE_REPLACE_ONLY | SAFE_WRITE_NO_SYNC, NULL, 0);
	free(path);
	free(text);
	return rc;
}
