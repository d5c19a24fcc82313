#include "stack_identity.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"

/* "dev:inode:size:mtime" of what path resolves to, or "missing". */
static json_t *file_identity(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return json_string("missing");
	char *id = xasprintf("%llu:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			     (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	json_t *j = json_string(id);
	free(id);
	return j;
}

/* The last part of the symbolic link dir/name/link points to ("" when none). */
static void link_tail(const char *dir, const char *name, const char *link, char *out, size_t size)
{
	char *path = xasprintf("%s/%s/%s", dir, name, link);
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	free(path);
	target[n > 0 ? n : 0] = '\0';
	const char *slash = strrchr(target, '/');
	const char *tail = slash ? slash + 1 : target;
	size_t len = strnlen(tail, size - 1);
	memcpy(out, tail, len);
	out[len] = '\0';
}

/* A kernel module's version text (its version, else its srcversion). */
static void module_version(const char *root, const char *module, struct strbuf *sb)
{
	static const char *const files[] = { "version", "srcversion", NULL };
	for (size_t i = 0; files[i]; i++) {
		char *abs = xasprintf("/sys/module/%s/%s", module, files[i]);
		char *path = root_path(root, abs), *text = NULL;
		size_t len = 0;
		int rc = read_file_max(path, 256, &text, &len);
		free(path);
		free(abs);
		if (rc == 0) {
			text[strcspn(text, "\n")] = '\0';
			sb_printf(sb, "%s=%s;", module, text);
			free(text);
			return;
		}
	}
	sb_printf(sb, "%s=?;", module);
}

/* The DRM nodes (card*, renderD*) with their PCI addresses, and the versions
 * of the kernel drivers bound to them, in name order. */
static void drm_set(const char *root, struct strbuf *gpus, struct strbuf *drivers)
{
	char *dir = root_path(root, "/sys/class/drm");
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		/* connectors (card0-DP-1) and "version" are not GPUs */
		if ((str_starts_with(name, "card") || str_starts_with(name, "renderD")) && !strchr(name, '-')) {
			char pci[256], driver[256];
			link_tail(dir, name, "device", pci, sizeof(pci));
			link_tail(dir, name, "device/driver", driver, sizeof(driver));
			sb_printf(gpus, "%s=%s;", name, pci);
			char *seen = xasprintf(";%s", drivers->buf ? drivers->buf : "");
			char *needle = xasprintf(";%s=", driver);
			if (*driver && !strstr(seen, needle))
				module_version(root, driver, drivers);
			free(needle);
			free(seen);
		}
		free(names[i]);
	}
	free(names);
	free(dir);
}

/* Each backend's device nodes (/dev/dri/renderD*, /dev/nvidia*) with their
 * device numbers. */
static void node_set(const char *root, const struct backend *const *bes, size_t n, struct strbuf *gpus)
{
	for (size_t b = 0; b < n; b++) {
		char *dir = root_path(root, bes[b]->vendor->node_dir);
		struct dirent **names = NULL;
		int count = scandir(dir, &names, NULL, alphasort);
		for (int i = 0; i < count; i++) {
			const char *name = names[i]->d_name;
			struct stat st;
			char *path = xasprintf("%s/%s", dir, name);
			if (str_starts_with(name, bes[b]->vendor->node_prefix) && stat(path, &st) == 0)
				sb_printf(gpus, "%s=%llx;", path, (unsigned long long)st.st_rdev);
			free(path);
			free(names[i]);
		}
		free(names);
		free(dir);
	}
}

json_t *stack_identity(const char *root, const struct backend *const *bes, size_t n, const json_t *paths)
{
	json_t *files = json_object();
	char *ldcache = root_path(root, "/etc/ld.so.cache");
	json_object_set_new(files, ldcache, file_identity(ldcache));
	free(ldcache);
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p)
	{
		/* the probe child's own paths: where it loaded them from */
		const char *path = json_string_value(p);
		if (path)
			json_object_set_new(files, path, file_identity(path));
	}
	struct strbuf gpus = STRBUF_INIT, drivers = STRBUF_INIT;
	drm_set(root, &gpus, &drivers);
	node_set(root, bes, n, &gpus);
	char *boot_path = root_path(root, "/proc/sys/kernel/random/boot_id"), *boot = NULL;
	size_t len = 0;
	if (read_file_max(boot_path, 64, &boot, &len) == 0)
		boot[strcspn(boot, "\n")] = '\0';
	free(boot_path);
	json_t *j = json_pack("{s:o, s:s, s:s, s:s}", "files", files, "gpus", gpus.buf, "kernel_drivers", drivers.buf,
			      "boot", boot ? boot : "");
	free(boot);
	sb_release(&gpus);
	sb_release(&drivers);
	return j;
}

void stack_identity_add_libraries(json_t *paths, const json_t *result)
{
	static const char *const keys[] = { "library", "driver_library", NULL };
	for (size_t k = 0; keys[k]; k++) {
		const char *path = json_string_value(json_object_get(result, keys[k]));
		bool have = false;
		size_t i;
		json_t *p;
		json_array_foreach(paths, i, p) have = have || (path && strcmp(json_string_value(p), path) == 0);
		if (path && !have)
			json_array_append_new(paths, json_string(path));
	}
}

char *stack_identity_diff(const json_t *before, const json_t *now)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(now, "files"), key, v)
	{
		if (!json_equal(v, json_object_get(json_object_get(before, "files"), key)))
			return xasprintf("the file %s changed", key);
	}
	static const struct {
		const char *key, *words;
	} parts[] = { { "gpus", "the GPU set (device nodes, PCI addresses) changed" },
		      { "kernel_drivers", "the kernel driver's version changed" },
		      { "boot", "the machine rebooted" },
		      { NULL, NULL } };
	for (size_t i = 0; parts[i].key; i++)
		if (!json_equal(json_object_get(before, parts[i].key), json_object_get(now, parts[i].key)))
			return xstrdup(parts[i].words);
	return NULL;
}
