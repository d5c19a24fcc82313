#include "probe_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/kmsg.h"
#include "../lib/safe_io.h"
#include "../lib/util.h"
#include "../result.h"
#include "stack_identity.h"

#define CACHE_FILE "runtime.json"
/* 2: the runs of one child per device, each with its enumeration;
 * 3: the stack identity and the kernel log's last record */
#define CACHE_VERSION 3
/* the kernel log's read is bounded: a healthcheck stays in its budget */
#define KMSG_READ_S 0.5

/* A folder we may trust: a real folder (no symlink), ours, not writable by
 * group or others. Creates it 0700 when missing; one lstat when it is
 * there already (every run after the first), mkdir only when it is not. */
static int trusted_dir(const char *path, char *why, size_t why_size)
{
	struct stat st;
	int got = lstat(path, &st);
	if (got < 0) { /* missing, or not reachable: mkdir says which, as it did first */
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			snprintf(why, why_size, "cannot create %s: %s", path, strerror(errno));
			return -1;
		}
		got = lstat(path, &st);
	}
	if (got < 0) {
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

/* The candidates in their order, each looked at only when those before it
 * failed: a run whose first choice is there pays one access and one lstat.
 * why holds the last failed candidate's reason (empty when none was tried
 * and failed). */
char *probe_cache_dir(const char *xdg, char *why, size_t why_size)
{
	why[0] = '\0';
	for (int i = 0; i < 4; i++) {
		char *dir = NULL;
		if (i == 0 && xdg && xdg[0] == '/')
			dir = xasprintf("%s/gpugate", xdg);
		else if (i == 1 && access("/run", W_OK) == 0)
			dir = xstrdup("/run/gpugate");
		/* a tmpfs private to the container: never the image's writable layer */
		else if (i == 2 && access("/dev/shm", W_OK) == 0)
			dir = xasprintf("/dev/shm/gpugate-%u", (unsigned)geteuid());
		else if (i == 3)
			dir = xasprintf("/tmp/gpugate-%u", (unsigned)geteuid());
		if (!dir)
			continue;
		if (trusted_dir(dir, why, why_size) == 0)
			return dir;
		free(dir);
	}
	return NULL;
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

/* The kernel log, or NULL when it cannot be read here (a container gets it
 * only with --device /dev/kmsg and CAP_SYSLOG). */
static char *kmsg_path(const char *root)
{
	char *path = root_path(root, "/dev/kmsg");
	if (access(path, R_OK) == 0)
		return path;
	free(path);
	return NULL;
}

char *probe_cache_stale(const char *root, const struct backend *const *bes, size_t n, const json_t *cached)
{
	const json_t *before = json_object_get(cached, "stack");
	json_t *paths = json_array();
	const char *file;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(before, "files"), file, v)
	{
		json_array_append_new(paths, json_string(file));
	}
	json_t *now = stack_identity(root, bes, n, paths);
	char *why = stack_identity_diff(before, now);
	json_decref(now);
	json_decref(paths);
	json_t *seq = json_object_get(cached, "kmsg_seq");
	char *log = why || !json_is_integer(seq) ? NULL : kmsg_path(root);
	if (log) {
		struct kmsg_scan scan;
		unsigned long long after = (unsigned long long)json_integer_value(seq);
		if (kmsg_scan_after(log, after, monotonic_seconds() + KMSG_READ_S, &scan) == 0) {
			if (scan.match_count)
				why = xasprintf("the kernel log reports a GPU fault since: %s", scan.matches[0].line);
			/* a log that restarted below the mark (another boot) is not the same log */
			else if (scan.has_seq && scan.last_seq < after)
				why = xasprintf("the kernel log %s restarted", log);
			kmsg_scan_free(&scan);
		}
		free(log);
	}
	return why;
}

int probe_cache_store(const char *root, const char *dir, const char *key, bool ok, json_t *identity, json_t *state)
{
	json_object_set_new(state, "version", json_integer(CACHE_VERSION));
	json_object_set(state, "stack", identity);
	char *log = kmsg_path(root);
	struct kmsg_scan scan;
	if (log && kmsg_scan_after(log, ULLONG_MAX, monotonic_seconds() + KMSG_READ_S, &scan) == 0) {
		if (scan.has_seq && !scan.stopped_early)
			json_object_set_new(state, "kmsg_seq", json_integer((json_int_t)scan.last_seq));
		kmsg_scan_free(&scan);
	}
	free(log);
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
