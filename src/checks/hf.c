/* Check group `hf`: the Hugging Face hub cache the tests read. Where it is
 * (huggingface_hub's own rules), that it lies on a mounted volume, can be
 * written (or is read-only on purpose), has room, has usable lock files, a
 * sound layout, the models the spec needs complete, and (hf.integrity) that
 * every blob's content matches its name. Paths are read under --root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "judge_hf.h"
#include "../facts/hf.h"
#include "../hf/cache_format.h"
#include "../hf/layout.h"
#include "../backend/probe_cache.h"
#include "../hf/location.h"
#include "../hf/verified_record.h"
#include "../hf/verify.h"
#include "../lib/digest.h"
#include "../lib/escape.h"
#include "../lib/mountinfo.h"
#include "../lib/progress.h"
#include "../lib/util.h"
#include "../registry.h"

#define MAX_LISTED 50 /* findings per check; the rest are counted */

static const struct spec_key hf_keys[] = {
	{ "hf", SPEC_MAP, SCALAR_STR, NULL, "the Hugging Face hub cache (found as huggingface_hub finds it)", NULL,
	  NULL },
	{ "hf.require_mount", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "the cache must be on a mounted volume, not the container's root filesystem", "true", NULL },
	{ "hf.read_only", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "the cache is read-only on purpose: no write test, no space or lock checks; HF_HUB_OFFLINE should be set",
	  "false", NULL },
	{ "hf.min_free", SPEC_SCALAR, SCALAR_SIZE, NULL,
	  "free space the cache's filesystem must have (0: only reported)", "10GiB", "0" },
	{ "hf.integrity", SPEC_SCALAR, SCALAR_BOOL, NULL, "hash every blob against its name (hf.integrity check)",
	  "false", NULL },
	{ "hf.integrity_scope", SPEC_SCALAR, SCALAR_ENUM, "models|cache",
	  "what hf.integrity hashes: the repos hf.models lists (default in ci and healthcheck when it lists any), or the whole cache (default otherwise, and in validate)",
	  NULL, NULL },
	{ "hf.models", SPEC_SEQ, SCALAR_STR, NULL, "repos that must be complete in the cache", NULL, NULL },
	{ "hf.models[]", SPEC_SCALAR | SPEC_MAP, SCALAR_STR, NULL, "'org/name', 'org/name@revision', or a map", NULL,
	  NULL },
	{ "hf.models[].repo", SPEC_SCALAR, SCALAR_STR, NULL, "repo id: org/name (datasets/name for a dataset)", NULL,
	  NULL },
	{ "hf.models[].revision", SPEC_SCALAR, SCALAR_STR, NULL, "branch, tag or 40-hex commit", "main", NULL },
	{ "hf.models[].type", SPEC_SCALAR, SCALAR_ENUM, "model|dataset|space", "repo type", "model", NULL },
	{ "hf.models[].files", SPEC_SEQ, SCALAR_STR, NULL,
	  "files that must be in the snapshot (default: all it has, at least one)", NULL, NULL },
	{ "hf.models[].files[]", SPEC_SCALAR, SCALAR_STR, NULL, "a path inside the repo", NULL, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* The `hf download` option that names a repo type (none for a model). */
static const char *repo_type_option(const char *type)
{
	return !type                          ? ""
	       : strcmp(type, "dataset") == 0 ? " --repo-type dataset"
	       : strcmp(type, "space") == 0   ? " --repo-type space"
					      : "";
}

/* One required model, from the spec. */
struct model_req {
	char *repo, *revision, *type;
	char **files;
};

static bool bad_repo_path(const char *s)
{
	if (!*s || s[0] == '/' || strstr(s, "\\") || (s[0] && s[1] == ':'))
		return true;
	for (const char *p = s; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

static void model_free(struct model_req *m)
{
	free(m->repo);
	free(m->revision);
	free(m->type);
	free_list(m->files);
}

/* Reads item i of hf.models; 0, or -1 with err located at the item. */
static int model_read(const struct spec *spec, const yaml_node_t *item, struct model_req *m, struct spec_error *err)
{
	memset(m, 0, sizeof(*m));
	const char *s = spec_node_str(item);
	if (s) {
		const char *at = strchr(s, '@');
		m->repo = at ? xstrndup(s, (size_t)(at - s)) : xstrdup(s);
		m->revision = xstrdup(at ? at + 1 : key_default("hf.models[].revision", false));
	} else {
		yaml_node_t *repo = spec_child(spec, item, "repo");
		if (!repo || !spec_node_str(repo))
			return spec_error_at(err, spec, item, "hf.models: an entry as a map needs 'repo: org/name'");
		m->repo = xstrdup(spec_node_str(repo));
		yaml_node_t *rev = spec_child(spec, item, "revision");
		m->revision = xstrdup(rev && spec_node_str(rev) ? spec_node_str(rev)
								: key_default("hf.models[].revision", false));
		yaml_node_t *type = spec_child(spec, item, "type");
		if (type && spec_node_str(type))
			m->type = xstrdup(spec_node_str(type));
		yaml_node_t *files = spec_child(spec, item, "files");
		size_t n = spec_seq_len(files);
		if (n) {
			m->files = xcalloc(n + 1, sizeof(char *));
			for (size_t i = 0; i < n; i++) {
				yaml_node_t *f = spec_seq_item(spec, files, i);
				const char *name = spec_node_str(f) ? spec_node_str(f) : "";
				if (bad_repo_path(name))
					return spec_error_at(
						err, spec, f,
						"hf.models: file '%s' must be a relative path inside the repo (no '..', no leading '/')",
						name);
				m->files[i] = xstrdup(name);
			}
		}
	}
	if (bad_repo_path(m->repo) || !hf_repo_id_round_trips(m->repo))
		return spec_error_at(err, spec, item, "hf.models: '%s' is not a repo id such as org/name", m->repo);
	if (!*m->revision || strchr(m->revision, '\n') || strstr(m->revision, ".."))
		return spec_error_at(err, spec, item, "hf.models: '%s' is not a revision (branch, tag or commit)",
				     m->revision);
	return 0;
}

static int hf_validate(const struct spec *spec, struct spec_error *err)
{
	yaml_node_t *list = spec_get(spec, "hf.models");
	for (size_t i = 0; i < spec_seq_len(list); i++) {
		struct model_req m;
		int rc = model_read(spec, spec_seq_item(spec, list, i), &m, err);
		model_free(&m);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Shared by the group's checks: made once in prepare. The scan is made on
 * first use (the checks run one after another on one thread). */
struct hf_state {
	struct hf_location loc;
	bool usable;      /* an absolute cache path */
	char *cache;      /* the cache folder under --root */
	char *mount_path; /* the cache path as the mount table sees it */
	struct mountinfo mi;
	bool mi_ok;
	char mi_err[4300];
	bool healthcheck; /* no listings read (see hf_cache_scan_listings) */
	/* the state folder whose folder record (dir_trust.h) and kept listings
	 * the scan trusts while unchanged, as hf verify's does; NULL in
	 * validate, which trusts no record (hf verify --full) */
	char *keep_dir;
	/* where huggingface_hub's makedirs would start (existing_folder): the
	 * cache, or its nearest parent when the cache does not exist yet; NULL
	 * when the path cannot be reached, and reach_why says why */
	char *reach;
	char *reach_under_root; /* reach resolved under --root, once */
	bool cache_missing;     /* ENOENT below reach: not created yet */
	char reach_why[PATH_MAX + 200];
	/* healthcheck, and no sign the container uses Hugging Face: no hf.models,
	 * no cache folder, no volume (the cache would be on the root filesystem):
	 * a GPU-only container, whose missing volume only warns */
	bool unused;
	bool scanned;
	int scan_rc;
	char scan_err[4300];
	struct hf_cache scan;
};

/* The cache as summaries name it: where gpugate read it (ROOT/... under
 * --root, as every check names the paths it read); fixes to paste keep the
 * path the container sees. */
static const char *shown(const struct hf_state *s)
{
	return s->cache ? s->cache : s->loc.hub_cache;
}

bool hf_judge_unused(const struct hf_facts *f)
{
	return f->healthcheck && !f->models_listed && f->cache_missing && f->on_root;
}

enum hf_mount_verdict hf_judge_mounted(const struct hf_facts *f, bool unused)
{
	if (!f->on_root)
		return HF_MOUNT_OWN;
	if (!f->require_mount)
		return HF_MOUNT_ROOT_ALLOWED;
	return unused ? HF_MOUNT_ROOT_UNUSED : HF_MOUNT_ROOT;
}

enum hf_write_verdict hf_judge_writable(const struct hf_facts *f)
{
	if (f->read_only)
		return f->offline ? HF_WRITE_BY_DESIGN : HF_WRITE_BY_DESIGN_ONLINE;
	return f->ro_mount ? HF_WRITE_RO_MOUNT : HF_WRITE_TRY;
}

enum status hf_judge_not_writable(bool unused)
{
	return unused ? STATUS_WARN : STATUS_FAIL;
}

bool hf_judge_space(uint64_t avail, uint64_t need)
{
	return avail >= need;
}

/* The cache folder, or its nearest existing parent while only missing
 * folders (ENOENT) lie below it: a fresh volume where huggingface_hub has
 * not made hub/ yet, which its makedirs creates. NULL when anything else
 * stops the path, with why (the path and the errno text): a part is a file
 * (ENOTDIR), a folder this uid cannot search (EACCES), ELOOP, EIO, or a link
 * to nowhere (makedirs fails on it too): never "not created yet". path and
 * result are container paths, read under --root; path_under_root is path
 * already resolved there (not resolved again), *under_root_out the
 * result's. Caller frees both. */
static char *existing_folder(const struct context *ctx, const char *path, const char *path_under_root,
			     char **under_root_out, char *why, size_t why_size)
{
	char *p = xstrdup(path);
	*under_root_out = NULL;
	for (bool first = true;; first = false) {
		char *under_root = first ? xstrdup(path_under_root) : ctx_path(ctx, p);
		struct stat st;
		int e = stat(under_root, &st) == 0 ? (S_ISDIR(st.st_mode) ? 0 : ENOTDIR) : errno;
		bool dangling = e == ENOENT && lstat(under_root, &st) == 0;
		/* stat fails on the whole path first: only a missing part climbs */
		if (dangling)
			snprintf(why, why_size, "%s is a link to nowhere (huggingface_hub's makedirs fails on it)",
				 under_root);
		else if (e && e != ENOENT)
			snprintf(why, why_size, "%s%s", strerror(e),
				 e == ENOTDIR  ? " (it, or a folder above it, is a file)"
				 : e == EACCES ? " (a folder above it is closed to this user)"
					       : "");
		if (!e) {
			*under_root_out = under_root;
			return p;
		}
		free(under_root);
		char *slash = strrchr(p, '/');
		if (dangling || e != ENOENT) {
			free(p);
			return NULL;
		}
		if (!slash || slash == p) { /* nothing of it exists: the root folder is where it starts */
			free(p);
			*under_root_out = ctx_path(ctx, "/");
			return xstrdup("/");
		}
		*slash = '\0';
	}
}

/* The failure of a check that needs the cache path when it cannot be
 * reached; false then. */
static bool need_reach(struct result *r, const struct hf_state *s)
{
	if (s->reach)
		return true;
	result_set(r, STATUS_FAIL, "the hub cache %s cannot be reached: %s", shown(s), s->reach_why);
	result_remedy(r,
		      "namei -l %s   (shows which part of the path is a file, a link to nowhere, or closed to uid %u)",
		      s->loc.hub_cache, (unsigned)geteuid());
	return false;
}

static void *hf_prepare(const struct context *ctx)
{
	struct hf_state *s = xcalloc(1, sizeof(*s));
	hf_location_of_environ(ctx->env, ctx->root, true, &s->loc);
	s->usable = s->loc.hub_cache[0] == '/';
	s->healthcheck = ctx_is_healthcheck(ctx);
	char why[512];
	if (!(ctx->profile && strcmp(ctx->profile, "validate") == 0))
		s->keep_dir = probe_cache_dir(ctx_getenv(ctx, "XDG_RUNTIME_DIR"), why, sizeof(why));
	if (s->usable) {
		s->cache = ctx_path(ctx, s->loc.hub_cache);
		s->reach = existing_folder(ctx, s->loc.hub_cache, s->cache, &s->reach_under_root, s->reach_why,
					   sizeof(s->reach_why));
		s->cache_missing = s->reach && strcmp(s->reach, s->loc.hub_cache) != 0;
		char real[PATH_MAX];
		/* on the real root, links such as ~/.cache -> /data count */
		if (root_is_real(ctx->root) && realpath(s->loc.hub_cache, real))
			s->mount_path = xstrdup(real);
		else
			s->mount_path = hf_path_normalize(s->loc.hub_cache);
	}
	char *mi = ctx_path(ctx, "/proc/self/mountinfo");
	s->mi_ok = mountinfo_load(mi, &s->mi, s->mi_err, sizeof(s->mi_err)) == 0;
	free(mi);
	if (s->usable && s->mi_ok) {
		struct hf_facts f = {
			.healthcheck = s->healthcheck,
			.models_listed = spec_has(ctx->spec, "hf.models"),
			.cache_missing = s->cache_missing,
			.on_root = mountinfo_find(&s->mi, s->mount_path) == mountinfo_find(&s->mi, "/"),
		};
		s->unused = hf_judge_unused(&f);
	}
	return s;
}

static void hf_release(void *state)
{
	struct hf_state *s = state;
	if (!s)
		return;
	hf_location_free(&s->loc);
	free(s->cache);
	free(s->reach);
	free(s->reach_under_root);
	free(s->mount_path);
	free(s->keep_dir);
	mountinfo_free(&s->mi);
	if (s->scanned)
		hf_cache_free(&s->scan);
	free(s);
}

static const struct hf_cache *scanned(struct hf_state *s)
{
	if (!s->scanned) {
		s->scanned = true;
		/* absolute links written into the cache carry the path huggingface_hub uses */
		struct hf_scan_hook hook = { .keep_dir = s->keep_dir };
		s->scan_rc = hf_cache_scan_hooked(s->cache, s->loc.hub_cache, !s->healthcheck, &s->scan, s->scan_err,
						  sizeof(s->scan_err), &hook);
	}
	return s->scan_rc == 0 ? &s->scan : NULL;
}

/* The host side and container side of the -v line that fixes the mount. */
static void remedy_mount(struct result *r, const struct hf_state *s)
{
	char *home_hub = hf_path_join(s->loc.hf_home, "hub");
	if (strcmp(home_hub, s->loc.hub_cache) == 0)
		result_remedy(
			r,
			"docker run -v $HOME/.cache/huggingface:%s ...   (mount the host's Hugging Face home at HF_HOME)",
			s->loc.hf_home);
	else
		result_remedy(
			r,
			"docker run -v $HOME/.cache/huggingface/hub:%s ...   (mount the host's hub cache at the cache path)",
			s->loc.hub_cache);
	free(home_hub);
}

/* False when a check cannot run for want of a usable path; sets the skip. */
static bool need_path(struct result *r, const struct hf_state *s)
{
	if (s->usable)
		return true;
	result_set(r, STATUS_SKIP, "no usable hub cache path (see hf.location)");
	return false;
}

static void run_location(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	const struct hf_location *l = &s->loc;
	const struct hf_location_fact fact = { l->hub_cache,  l->hub_source,   l->hf_home,
					       l->offline,    l->token_source, /* never the token */
					       l->token_error };
	hf_location_encode(result_details(r), &fact);
	char why[PATH_MAX + 256], fix[256];
	if (hf_location_relative(ctx->env, l, why, sizeof(why), fix, sizeof(fix))) {
		result_set(r, STATUS_FAIL, "%s", why);
		result_remedy(r, "%s", fix);
	} else if (need_reach(r, s)) {
		result_set(r, STATUS_PASS, "hub cache %s (from %s)%s", shown(s),
			   strcmp(l->hub_source, "default") == 0 ? "the default ~/.cache/huggingface/hub"
								 : l->hub_source,
			   s->cache_missing ? ", not created yet" : "");
	}
	if (l->token_error) {
		/* utils/_auth.py get_token() raises inside every download
		 * (hf_hub_download builds its headers first, offline too) */
		if (*l->hub_cache == '/')
			result_set(r, STATUS_FAIL, "every huggingface_hub download would raise: %s", l->token_error);
		else
			result_finding(r, STATUS_FAIL, "hf.location.token_error",
				       "every huggingface_hub download would raise: %s", l->token_error);
		result_remedy(
			r,
			"point HF_TOKEN_PATH at a token file, or unset it (the default is %s/token): unset HF_TOKEN_PATH",
			l->hf_home);
	}
	for (const char *const *dep = l->deprecated; *dep; dep++) {
		result_finding(r, STATUS_WARN, "hf.location.deprecated_variable",
			       "%s is set, but huggingface_hub ignores it (deprecated): the cache is %s", *dep,
			       shown(s));
		result_remedy(r, "unset %s; export HF_HOME=... instead", *dep);
	}
}

static bool system_mount(const char *mp)
{
	static const char *const sys[] = { "/proc",           "/sys", "/dev", "/run", "/etc/hosts", "/etc/hostname",
					   "/etc/resolv.conf" };
	for (size_t i = 0; i < ARRAY_SIZE(sys); i++) {
		size_t n = strlen(sys[i]);
		if (strncmp(mp, sys[i], n) == 0 && (mp[n] == '\0' || mp[n] == '/'))
			return true;
	}
	return strcmp(mp, "/") == 0;
}

/* True when folder (under --root) looks like a hub cache: repo folders or
 * the CACHEDIR.TAG huggingface_hub writes. */
static bool looks_like_hub(const char *folder)
{
	DIR *d = opendir(folder);
	if (!d)
		return false;
	bool yes = false;
	struct dirent *de;
	while (!yes && (de = readdir(d)))
		yes = hf_repo_folder_type(de->d_name) || strcmp(de->d_name, HF_CACHEDIR_TAG) == 0;
	closedir(d);
	return yes;
}

static void run_mounted(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	if (!need_path(r, s))
		return;
	if (!s->mi_ok) {
		result_set(r, STATUS_FAIL, "cannot read the mount table: %s", s->mi_err);
		if (!root_is_real(ctx->root))
			result_remedy(r, "an unpacked root filesystem has no mount table: add --skip hf.mounted "
					 "(whether the cache is a volume shows in the running container)");
		else
			result_remedy(r, "keep /proc mounted in the container (Docker and Kubernetes mount it)");
		return;
	}
	struct stat st;
	if (stat(s->cache, &st) < 0 && (errno == ESTALE || errno == ENOTCONN || errno == EIO)) {
		result_set(r, STATUS_FAIL, "the cache mount at %s is gone: %s", shown(s), strerror(errno));
		result_remedy(r, "restart the container once the host's volume is back (a stale NFS or FUSE mount)");
		return;
	}
	const struct mount_entry *m = mountinfo_find(&s->mi, s->mount_path);
	const struct mount_entry *root = mountinfo_find(&s->mi, "/");
	if (!m) {
		result_set(r, STATUS_FAIL, "no mount in the mount table holds %s", s->mount_path);
		return;
	}
	const struct hf_mount_fact fact = { m->mount_point, m->fstype, m->source, m->mount_options };
	hf_mount_encode(result_details(r), &fact);
	bool on_root = m == root;
	/* another mount that holds a hub cache: HF_HOME points beside it */
	char *beside = NULL;
	for (size_t i = 0; i < s->mi.count && !beside; i++) {
		const struct mount_entry *e = &s->mi.entries[i];
		if (e == m || system_mount(e->mount_point))
			continue;
		char *top = ctx_path(ctx, e->mount_point);
		char *hub = xasprintf("%s/hub", top);
		if (looks_like_hub(hub))
			beside = xasprintf("export HF_HOME=%s", e->mount_point);
		else if (looks_like_hub(top))
			beside = xasprintf("export HF_HUB_CACHE=%s", e->mount_point);
		free(top);
		free(hub);
		if (beside) {
			result_finding(
				r, on_root ? STATUS_FAIL : STATUS_WARN, "hf.mounted.beside_mount",
				"a Hugging Face cache is mounted at %s, but huggingface_hub uses %s (from %s): HF_HOME points beside the mount",
				e->mount_point, shown(s), s->loc.hub_source);
			result_remedy(r, "%s", beside);
		}
	}
	struct hf_facts f = { .on_root = on_root, .require_mount = key_bool(ctx->spec, "hf.require_mount") };
	enum hf_mount_verdict v = hf_judge_mounted(&f, s->unused);
	if (v == HF_MOUNT_ROOT_UNUSED) {
		result_set(
			r, STATUS_WARN,
			"no Hugging Face volume: the cache %s does not exist and the spec lists no hf.models (the ci profile requires the volume)",
			s->loc.hub_cache);
		remedy_mount(r, s);
	} else if (v == HF_MOUNT_ROOT) {
		result_set(
			r, STATUS_FAIL,
			"the cache %s is on the container's root filesystem (%s at /), not a mounted volume: downloads vanish with the container",
			shown(s), m->fstype);
		if (!beside)
			remedy_mount(r, s);
	} else if (v == HF_MOUNT_ROOT_ALLOWED) {
		result_set(r, r->status, "the cache %s is on the root filesystem (hf.require_mount is false)",
			   shown(s));
	} else {
		result_set(r, r->status, "the cache %s is on its own mount %s (%s from %s)", shown(s), m->mount_point,
			   m->fstype, m->source);
	}
	free(beside);
}

static const struct mount_entry *cache_mount(const struct hf_state *s)
{
	return s->mi_ok ? mountinfo_find(&s->mi, s->mount_path) : NULL;
}

/* Where a container path inside mount m lies on the host: a bind mount's
 * (or a Docker volume's) root field in the mount table is the folder of the
 * host's filesystem mounted there. NULL where m mounts a whole filesystem
 * (root "/": a tmpfs, a block device) and the host folder is not known.
 * Caller frees. */
static char *host_path(const struct mount_entry *m, const char *path)
{
	if (!m || strcmp(m->root, "/") == 0 || strcmp(m->mount_point, "/") == 0)
		return NULL;
	size_t n = strlen(m->mount_point);
	if (strncmp(path, m->mount_point, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return xasprintf("%s%s", m->root, path + n);
}

/* True for a path of at least two parts (/home/app, not /home or /): the
 * least a recursive ownership change may name. */
static bool deep_path(const char *path)
{
	const char *second = strchr(path + (path[0] == '/'), '/');
	return second && second[1] != '\0';
}

/* The fix for a cache this uid cannot write, the same in every profile. dir
 * is the folder at fault (container path): the cache itself, or its nearest
 * existing parent when the cache does not exist yet. A recursive chown only
 * ever names the cache itself (never /, never a folder above it); where the
 * cache is a bind mount the host folder comes from the mount table. */
static void remedy_not_writable(struct result *r, const struct hf_state *s, const struct mount_entry *m,
				const char *dir)
{
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	const char *cache = s->loc.hub_cache;
	char *host = host_path(m, cache);
	const char *target = host ? host : cache;
	const char *where = host ? "on the host" : "as root";
	if (strcmp(dir, cache) != 0) { /* not created yet: make the cache itself, owned by this user */
		result_remedy(
			r,
			"mkdir -p %s && chown %u:%u %s   (%s; or mount a host folder this user owns at HF_HOME: docker run -v $HOME/.cache/huggingface:%s ...)",
			target, uid, gid, target, where, s->loc.hf_home);
	} else {
		struct stat st;
		unsigned owner = stat(s->cache, &st) == 0 ? (unsigned)st.st_uid : uid; /* the cache under --root */
		result_remedy(
			r,
			"chown %s%u:%u %s   (%s; or run the container as the folder's owner: docker run --user %u ...)",
			deep_path(target) ? "-R " : "", uid, gid, target, where, owner);
	}
	free(host);
}

static void run_writable(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	/* a path that cannot be reached fails as in hf.location, read-only by
	 * design or not: nothing can read such a cache either */
	if (!need_path(r, s) || !need_reach(r, s))
		return;
	const struct mount_entry *m = cache_mount(s);
	struct hf_facts f = { .read_only = key_bool(ctx->spec, "hf.read_only"),
			      .ro_mount = m && mount_is_read_only(m),
			      .offline = s->loc.offline };
	enum hf_write_verdict v = hf_judge_writable(&f);
	if (v == HF_WRITE_BY_DESIGN || v == HF_WRITE_BY_DESIGN_ONLINE) {
		result_set(r, STATUS_PASS, "read-only by design (hf.read_only)%s",
			   f.ro_mount ? ", and the mount is read-only" : "");
		if (v == HF_WRITE_BY_DESIGN_ONLINE) {
			result_finding(
				r, STATUS_WARN, "hf.writable.offline_unset",
				"the cache is read-only but HF_HUB_OFFLINE is not set: huggingface_hub will call the Hub and try to write");
			result_remedy(r, "export HF_HUB_OFFLINE=1");
			result_set(r, STATUS_WARN, "read-only by design, but HF_HUB_OFFLINE is not set");
		}
		return;
	}
	if (v == HF_WRITE_RO_MOUNT) {
		result_set(r, STATUS_FAIL,
			   "the cache %s is on a read-only mount %s (%s): downloads and lock files fail", shown(s),
			   m->mount_point, m->mount_options);
		result_remedy(
			r,
			"mount it read-write (drop ':ro' from -v ...:%s:ro), or set 'read_only: true' in the hf spec and export HF_HUB_OFFLINE=1",
			m->mount_point);
		return;
	}
	/* summaries name the folder where it was read (ROOT/... under --root, as
	 * shown() does); fixes keep the path the container sees */
	const char *dir = s->reach, *dir_under_root = s->reach_under_root;
	bool missing = s->cache_missing;
	if (ctx_is_healthcheck(ctx)) { /* never writes: the permission bits only */
		if (access(dir_under_root, W_OK | X_OK) < 0) {
			/* a GPU-only container (no volume, no models): nothing will write there */
			result_set(r, hf_judge_not_writable(s->unused), "%s is not writable by uid %u: %s",
				   dir_under_root, (unsigned)geteuid(), strerror(errno));
			remedy_not_writable(r, s, m, dir);
		} else {
			result_set(r, STATUS_PASS, "%s is writable (mount options %s)", dir_under_root,
				   m ? m->mount_options : "unknown");
		}
		return;
	}
	char *tmp = xasprintf("%s/.gpugate-write-test.XXXXXX", dir_under_root);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		if (e == EROFS)
			result_set(r, STATUS_FAIL, "%s is read-only (EROFS): a write test failed", dir_under_root);
		else
			result_set(r, STATUS_FAIL, "cannot create a file in %s as uid %u: %s", dir_under_root,
				   (unsigned)geteuid(), strerror(e));
		if (e == EROFS)
			result_remedy(
				r,
				"mount the cache read-write, or set 'read_only: true' in the hf spec and export HF_HUB_OFFLINE=1");
		else
			remedy_not_writable(r, s, m, dir);
	} else {
		bool ok = write(fd, "x", 1) == 1;
		int werr = errno;
		if (close(fd) < 0 && ok) {
			ok = false;
			werr = errno;
		}
		if (unlink(tmp) < 0) {
			result_set(r, STATUS_FAIL, "wrote %s but cannot remove it: %s", tmp, strerror(errno));
		} else if (!ok) {
			result_set(r, STATUS_FAIL, "cannot write into %s: %s", dir_under_root, strerror(werr));
		} else if (missing) {
			result_set(r, STATUS_WARN,
				   "the cache %s does not exist yet; %s is writable, so huggingface_hub can create it",
				   shown(s), dir_under_root);
		} else {
			result_set(r, STATUS_PASS, "%s is writable (a temp file was created and removed)", shown(s));
		}
	}
	free(tmp);
}

static void run_space(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	if (!need_path(r, s))
		return;
	if (key_bool(ctx->spec, "hf.read_only")) {
		result_set(r, STATUS_SKIP, "read-only cache (hf.read_only): nothing will be downloaded");
		return;
	}
	if (!need_reach(r, s))
		return;
	const char *dir = s->reach_under_root; /* where it was read, as in hf.writable */
	struct statvfs vfs;
	if (statvfs(s->reach_under_root, &vfs) < 0) {
		result_set(r, STATUS_FAIL, "cannot read the free space of %s: %s", dir, strerror(errno));
		return;
	}
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	uint64_t need = key_size_for(ctx->spec, "hf.min_free", ctx_is_healthcheck(ctx));
	hf_space_encode(result_details(r), &(struct hf_space_fact){ avail, need });
	char a[32], n[32];
	human_bytes(avail, a, sizeof(a));
	human_bytes(need, n, sizeof(n));
	if (!hf_judge_space(avail, need)) {
		result_set(r, STATUS_FAIL, "only %s free on the cache's filesystem (%s), need at least %s (min_free)",
			   a, dir, n);
		result_remedy(
			r,
			"free space (gpugate hf scan lists repos by size; hf cache rm REPO removes one) or mount a larger volume at %s",
			s->loc.hf_home);
	} else {
		result_set(r, STATUS_PASS, "%s free on the cache's filesystem%s%s", a, need ? ", at least " : "",
			   need ? n : "");
	}
}

static bool can_write(const struct stat *st)
{
	uid_t uid = geteuid();
	if (uid == 0)
		return true;
	if (st->st_uid == uid)
		return st->st_mode & S_IWUSR;
	gid_t groups[256];
	int n = getgroups(ARRAY_SIZE(groups), groups);
	bool member = st->st_gid == getegid();
	for (int i = 0; i < n && !member; i++)
		member = groups[i] == st->st_gid;
	return member ? (st->st_mode & S_IWGRP) : (st->st_mode & S_IWOTH);
}

static void lock_finding(struct result *r, size_t *bad, const char *path, const struct stat *st)
{
	if (++*bad <= MAX_LISTED)
		result_finding(r, STATUS_FAIL, "hf.locks.not_writable",
			       "%s is owned by uid %u with mode %04o: uid %u cannot %s it", path, (unsigned)st->st_uid,
			       (unsigned)(st->st_mode & 07777), (unsigned)geteuid(),
			       S_ISDIR(st->st_mode) ? "create lock files in" : "lock");
}

static void run_locks(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	if (!need_path(r, s))
		return;
	if (key_bool(ctx->spec, "hf.read_only")) {
		result_set(r, STATUS_SKIP, "read-only cache (hf.read_only): no locks are taken offline");
		return;
	}
	if (!need_reach(r, s))
		return;
	char *locks = xasprintf("%s/" HF_LOCKS, s->cache);
	int fd = open(locks, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			result_set(r, STATUS_PASS, "no .locks folder yet (huggingface_hub creates it)");
		else
			result_set(r, STATUS_FAIL, "cannot open %s: %s", locks, strerror(errno));
		free(locks);
		return;
	}
	size_t bad = 0, files = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && !can_write(&st))
		lock_finding(r, &bad, locks, &st);
	DIR *d = fdopendir(fd);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		char *subpath = xasprintf("%s/%s", locks, de->d_name);
		if (fstat(sub, &st) == 0 && !can_write(&st))
			lock_finding(r, &bad, subpath, &st);
		DIR *sd = fdopendir(sub);
		struct dirent *le;
		while (sd && (le = readdir(sd))) {
			if (!str_ends_with(le->d_name, ".lock"))
				continue;
			files++;
			if (fstatat(sub, le->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !can_write(&st)) {
				char *p = xasprintf("%s/%s", subpath, le->d_name);
				lock_finding(r, &bad, p, &st);
				free(p);
			}
		}
		if (sd)
			closedir(sd);
		else
			close(sub);
		free(subpath);
	}
	if (d)
		closedir(d);
	else
		close(fd);
	if (bad) {
		if (bad > MAX_LISTED)
			result_finding(r, STATUS_FAIL, "hf.locks.more", "and %zu more", bad - MAX_LISTED);
		result_set(r, STATUS_FAIL,
			   "%zu %s under %s/.locks %s not writable by uid %u: downloads fail with PermissionError", bad,
			   count_noun(bad, "lock file or folder", "lock files or folders"), shown(s),
			   count_noun(bad, "is", "are"), (unsigned)geteuid());
		char *host = host_path(cache_mount(s), s->loc.hub_cache);
		result_remedy(r, "chown -R %u:%u %s/.locks   (%s; huggingface_hub also recreates a removed .locks)",
			      (unsigned)geteuid(), (unsigned)getegid(), host ? host : s->loc.hub_cache,
			      host ? "on the host" : "as root");
		free(host);
	} else {
		result_set(r, STATUS_PASS, "%zu %s under .locks, all writable by uid %u", files,
			   count_noun(files, "lock file", "lock files"), (unsigned)geteuid());
	}
	free(locks);
}

/* The cache scan, or a skip/fail explained when there is none. */
static const struct hf_cache *need_scan(struct result *r, struct hf_state *s)
{
	if (!need_path(r, s) || !need_reach(r, s))
		return NULL;
	if (s->cache_missing) {
		result_set(r, STATUS_SKIP, "no cache folder at %s yet", shown(s));
		return NULL;
	}
	const struct hf_cache *c = scanned(s);
	if (!c)
		result_set(r, STATUS_FAIL, "cannot read the cache: %s", s->scan_err);
	return c;
}

static void run_layout(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct hf_state *s = state;
	const struct hf_cache *c = need_scan(r, s);
	if (!c)
		return;
	size_t fails = 0, warns = 0;
	uint64_t size = 0;
	for (size_t i = 0; i < c->n_repos; i++) {
		const struct hf_repo *repo = &c->repos[i];
		size += repo->size_on_disk;
		for (size_t w = 0; w < repo->n_warnings; w++) {
			const struct hf_warning *wa = &repo->warnings[w];
			if (wa->severity == HF_FAIL)
				fails++;
			else
				warns++;
			if (fails + warns <= MAX_LISTED)
				result_finding(r, wa->severity == HF_FAIL ? STATUS_FAIL : STATUS_WARN,
					       "hf.layout.problem", "%s: %s%s", repo->folder, wa->message,
					       wa->hides_repo ? " (hf cache ls hides this repo)" : "");
			if (strstr(wa->message, "partial download"))
				result_remedy(r,
					      "rm %s/%s/blobs/*.incomplete   (partial downloads; re-run the download)",
					      s->loc.hub_cache, repo->folder);
			else if (strstr(wa->message, "newline"))
				result_remedy(
					r,
					"printf %%s \"$(tr -d ' \\n\\r\\t' < %s/%s/%s)\" > %s/%s/%s.new && mv %s/%s/%s.new %s/%s/%s",
					s->loc.hub_cache, repo->folder, wa->path, s->loc.hub_cache, repo->folder,
					wa->path, s->loc.hub_cache, repo->folder, wa->path, s->loc.hub_cache,
					repo->folder, wa->path);
			else if (strstr(wa->message, "outside the repo") || strstr(wa->message, "absolute link"))
				result_remedy(
					r,
					"copy caches whole: cp -a (or rsync -a) of the cache root keeps the relative links; else re-download %s",
					repo->id ? repo->id : repo->folder);
			else if (wa->severity == HF_FAIL && repo->id && str_starts_with(wa->path, HF_SNAPSHOTS "/") &&
				 digest_lower_hex_span(wa->path + 10) == 40 && wa->path[50] == '/')
				/* a file of one revision (missing, wrong size): that commit again */
				result_remedy(r, "re-download: HF_HUB_CACHE=%s hf download %s%s --revision %.40s",
					      s->loc.hub_cache, repo->id, repo_type_option(repo->type), wa->path + 10);
			else if (wa->severity == HF_FAIL && repo->id)
				result_remedy(r, "re-download: HF_HUB_CACHE=%s hf download %s%s", s->loc.hub_cache,
					      repo->id, repo_type_option(repo->type));
			else if (wa->severity == HF_FAIL)
				result_remedy(r, "move %s/%s out of the cache: it is not a repo folder",
					      s->loc.hub_cache, repo->folder);
		}
	}
	if (fails + warns > MAX_LISTED)
		result_finding(r, fails ? STATUS_FAIL : STATUS_WARN, "hf.layout.more", "and %zu more %s",
			       fails + warns - MAX_LISTED,
			       count_noun(fails + warns - MAX_LISTED, "problem", "problems"));
	size_t revisions = 0, unlisted = 0;
	for (size_t i = 0; i < c->n_repos; i++)
		for (size_t v = 0; v < c->repos[i].n_revisions; v++) {
			revisions++;
			unlisted += c->repos[i].revisions[v].listing.state != HF_LISTING_OK;
		}
	char *note =
		c->skip_listings ? xstrdup("; trees/<commit>.json listings not read in the healthcheck profile")
		: unlisted
			? xasprintf(
				  "; %zu of %zu %s %s no usable trees/<commit>.json listing, so %s completeness was not checked (a current huggingface_hub or gpugate hf fetch writes one)",
				  unlisted, revisions, count_noun(revisions, "revision", "revisions"),
				  count_noun(revisions, "has", "have"), count_noun(revisions, "its", "their"))
			: xstrdup("");
	char h[32];
	human_bytes(size, h, sizeof(h));
	hf_layout_encode(result_details(r), &(struct hf_layout_fact){ revisions, unlisted, c->n_repos, size });
	if (fails)
		result_set(r, STATUS_FAIL, "%zu layout %s in %s (%zu %s, %s)%s", fails,
			   count_noun(fails, "problem", "problems"), s->loc.hub_cache, c->n_repos,
			   count_noun(c->n_repos, "repo", "repos"), h, note);
	else
		result_set(r, warns ? STATUS_WARN : STATUS_PASS, "%zu %s, %s, layout sound%s%s", c->n_repos,
			   count_noun(c->n_repos, "repo", "repos"), h, warns ? " (with warnings)" : "", note);
	free(note);
}

static bool file_usable(const struct hf_repo *repo, const struct hf_file *f)
{
	if (f->link == HF_LINK_COPY || f->link == HF_LINK_ELSEWHERE) /* isfile() follows the link */
		return true;
	return f->link == HF_LINK_OK && f->blob >= 0 && repo->blobs[f->blob].regular;
}

/* A whole snapshot, as snapshot_download(repo, revision, local_files_only=True)
 * judges it (_snapshot_download.py, _raise_if_incomplete_snapshot): with a
 * usable listing, every file it names must be a file in the snapshot; without
 * one the folder is returned as it is. Returns the number of failures. */
static size_t check_listed(struct result *r, const struct hf_repo *repo, const struct hf_revision *rev,
			   const struct model_req *m, const char *folder, bool skip, size_t *unchecked)
{
	const struct hf_listing *l = &rev->listing;
	size_t bad = 0;
	if (l->state == HF_LISTING_OK) {
		for (size_t i = 0; i < l->n_files; i++) {
			const struct hf_listed_file *lf = &l->files[i];
			if (lf->file >= 0 && file_usable(repo, &rev->files[lf->file]))
				continue;
			if (++bad <= MAX_LISTED)
				result_finding(
					r, STATUS_FAIL, "hf.models.listed_file_missing",
					"%s@%s: %s is missing from snapshot %s (%s/trees/%s.json lists it%s): offline, snapshot_download raises IncompleteSnapshotError",
					m->repo, m->revision, lf->path, rev->commit, folder, rev->commit,
					lf->file >= 0 ? "; the snapshot's entry is a broken or refused link" : "");
		}
		if (bad > MAX_LISTED)
			result_finding(r, STATUS_FAIL, "hf.models.listed_files_more", "%s@%s: and %zu more missing %s",
				       m->repo, m->revision, bad - MAX_LISTED,
				       count_noun(bad - MAX_LISTED, "file", "files"));
		return bad;
	}
	if (l->state == HF_LISTING_CRASHES) {
		result_finding(r, STATUS_FAIL, "hf.models.listing_unreadable",
			       "%s@%s: %s/trees/%s.json is %s (%s): snapshot_download fails reading it", m->repo,
			       m->revision, folder, rev->commit, hf_listing_state_text(l->state), l->problem);
		return 1;
	}
	if (l->state == HF_LISTING_TOO_BIG) { /* not read is not proven complete: a failure (issue 26) */
		result_finding(r, STATUS_FAIL, "hf.models.listing_unusable", "%s@%s: %s/trees/%s.json is %s (%s)",
			       m->repo, m->revision, folder, rev->commit, hf_listing_state_text(l->state), l->problem);
		return 1;
	}
	if (!skip)
		++*unchecked;
	if (skip) /* the healthcheck reads no listings: what can change while a container runs is checked */
		result_finding(
			r, STATUS_PASS, "hf.models.listing_skipped",
			"%s@%s: the listing is not read in the healthcheck profile (ci and validate check completeness)",
			m->repo, m->revision);
	else if (l->state != HF_LISTING_NONE)
		result_finding(
			r, STATUS_WARN, "hf.models.listing_ignored",
			"%s@%s: %s/trees/%s.json is %s (%s): huggingface_hub ignores it, so completeness could not be checked",
			m->repo, m->revision, folder, rev->commit, hf_listing_state_text(l->state), l->problem);
	else
		result_finding(
			r, STATUS_PASS, "hf.models.no_listing",
			"%s@%s: no listing %s/trees/%s.json, so completeness could not be checked (re-run the download with a current huggingface_hub, or gpugate hf fetch, to write one)",
			m->repo, m->revision, folder, rev->commit);
	/* without a listing, what the snapshot holds must at least load */
	if (!rev->n_files)
		result_finding(r, STATUS_WARN, "hf.models.empty_snapshot",
			       "%s@%s: snapshot %s is empty (huggingface_hub returns it as it is)", m->repo,
			       m->revision, rev->commit);
	for (size_t i = 0; i < rev->n_files; i++)
		if (!file_usable(repo, &rev->files[i])) {
			result_finding(r, STATUS_FAIL, "hf.models.file_unusable",
				       "%s@%s: %s is unusable: %s (hf_hub_download of it fails)", m->repo, m->revision,
				       rev->files[i].path, hf_link_text(rev->files[i].link));
			bad++;
		}
	return bad;
}

static void check_model(struct result *r, const struct hf_state *s, const struct hf_cache *c, const struct model_req *m,
			size_t *unchecked)
{
	char *folder = hf_repo_folder(m->repo, m->type);
	const char *type_opt = repo_type_option(hf_repo_folder_type(folder));
	char *fix = xasprintf("HF_HUB_CACHE=%s hf download %s%s --revision %s", s->loc.hub_cache, m->repo, type_opt,
			      m->revision);
	const struct hf_repo *repo = NULL;
	for (size_t i = 0; i < c->n_repos && !repo; i++)
		if (strcmp(c->repos[i].folder, folder) == 0)
			repo = &c->repos[i];
	const char *commit = NULL;
	if (!repo || !repo->is_repo) {
		result_finding(r, STATUS_FAIL, "hf.models.not_cached", "%s: not in the cache (no folder %s)", m->repo,
			       folder);
	} else if (hf_is_commit(m->revision)) {
		commit = m->revision;
	} else {
		const struct hf_ref *ref = NULL;
		for (size_t i = 0; i < repo->n_refs && !ref; i++)
			if (strcmp(repo->refs[i].name, m->revision) == 0)
				ref = &repo->refs[i];
		if (!ref)
			result_finding(r, STATUS_FAIL, "hf.models.no_ref",
				       "%s@%s: no refs/%s in %s: offline, huggingface_hub cannot resolve the revision",
				       m->repo, m->revision, m->revision, folder);
		else if (!ref->has_snapshot) {
			/* the ref's raw text, escaped: a trailing newline shows as \n on the finding's one line */
			struct strbuf text = STRBUF_INIT;
			sb_puts(&text, "");
			escape_add(&text, ref->commit, ESCAPE_LINE);
			result_finding(
				r, STATUS_FAIL, "hf.models.bad_ref",
				"%s@%s: refs/%s names '%s', which is no snapshot (a trailing newline or a missing download)",
				m->repo, m->revision, m->revision, text.buf);
			sb_release(&text);
		} else
			commit = ref->commit;
	}
	const struct hf_revision *rev = commit && repo ? hf_repo_revision(repo, commit) : NULL;
	if (commit && !rev)
		result_finding(r, STATUS_FAIL, "hf.models.no_snapshot", "%s@%s: no snapshot folder %s", m->repo,
			       m->revision, commit);
	size_t bad = 0;
	if (rev && m->files) {
		for (char **f = m->files; *f; f++) {
			const struct hf_file *hit = NULL;
			for (size_t i = 0; i < rev->n_files && !hit; i++)
				if (strcmp(rev->files[i].path, *f) == 0)
					hit = &rev->files[i];
			if (!hit) {
				char *rel = hf_no_exist_rel(commit, *f);
				char *marker = xasprintf("%s/%s/%s", s->cache, folder, rel);
				bool no_exist = access(marker, F_OK) == 0;
				free(marker);
				free(rel);
				result_finding(
					r, STATUS_FAIL, "hf.models.file_missing",
					"%s@%s: %s is missing from snapshot %s%s", m->repo, m->revision, *f, commit,
					no_exist ? " (.no_exist says the Hub has no such file at that commit)" : "");
				bad++;
			} else if (!file_usable(repo, hit)) {
				result_finding(r, STATUS_FAIL, "hf.models.file_unusable", "%s@%s: %s is unusable: %s",
					       m->repo, m->revision, *f, hf_link_text(hit->link));
				bad++;
			}
		}
	} else if (rev) {
		bad += check_listed(r, repo, rev, m, folder, c->skip_listings, unchecked);
	}
	if (!rev || bad) {
		if (m->files) {
			struct strbuf sb = STRBUF_INIT;
			sb_puts(&sb, fix);
			for (char **f = m->files; *f; f++)
				sb_printf(&sb, " %s", *f);
			result_remedy(r, "%s", sb.buf);
			sb_release(&sb);
		} else {
			result_remedy(r, "%s", fix);
		}
	}
	free(fix);
	free(folder);
}

static void run_models(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	yaml_node_t *list = spec_get(ctx->spec, "hf.models");
	size_t n = spec_seq_len(list);
	if (!n) {
		result_set(r, STATUS_SKIP, "the spec lists no models (hf.models)");
		return;
	}
	if (!need_path(r, s) || !need_reach(r, s))
		return;
	struct hf_cache empty = { 0 };
	const struct hf_cache *c = s->cache_missing ? &empty : scanned(s);
	if (!c) {
		result_set(r, STATUS_FAIL, "cannot read the cache: %s", s->scan_err);
		return;
	}
	size_t unchecked = 0;
	for (size_t i = 0; i < n; i++) {
		struct model_req m;
		struct spec_error err;
		if (model_read(ctx->spec, spec_seq_item(ctx->spec, list, i), &m, &err) == 0)
			check_model(r, s, c, &m, &unchecked);
		model_free(&m);
	}
	if (r->status == STATUS_FAIL)
		result_set(r, STATUS_FAIL, "required models are not complete in %s: HF_HUB_OFFLINE=1 runs would fail",
			   s->loc.hub_cache);
	else if (unchecked)
		result_set(
			r, r->status,
			"%s %zu required %s in the cache; completeness of %zu not checked (no usable trees/<commit>.json listing)",
			count_noun(n, "the", "all"), n, count_noun(n, "model is", "models are"), unchecked);
	else
		result_set(r, STATUS_PASS, "%s %zu required %s complete in the cache (checked against %s)",
			   count_noun(n, "the", "all"), n, count_noun(n, "model is", "models are"),
			   count_noun(n, "its listing", "their listings"));
}

/* The repo folders hf.integrity hashes: those of hf.models when the scope
 * is models (NULL-ended, caller frees), or NULL for the whole cache. A job
 * needs only its models; a shared runner's cache holds everyone's. */
static char **integrity_repos(const struct context *ctx, bool strict)
{
	yaml_node_t *list = spec_get(ctx->spec, "hf.models");
	size_t n = spec_seq_len(list);
	const char *scope = spec_str(ctx->spec, "hf.integrity_scope", n && !strict ? "models" : "cache");
	if (strcmp(scope, "models") != 0)
		return NULL;
	char **folders = xcalloc(n + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct model_req m;
		struct spec_error err;
		if (model_read(ctx->spec, spec_seq_item(ctx->spec, list, i), &m, &err) == 0) {
			char *f = hf_repo_folder(m.repo, m.type);
			bool seen = false; /* org/tiny and org/tiny@v1: one repo */
			for (size_t j = 0; j < k && !seen; j++)
				seen = strcmp(folders[j], f) == 0;
			if (seen)
				free(f);
			else
				folders[k++] = f;
		}
		model_free(&m);
	}
	return folders;
}

/* The verified-blob record for this cache in the state folder, or NULL with why. */
static char *integrity_record(const struct context *ctx, const struct hf_state *s, char *why, size_t why_size)
{
	char *dir = probe_cache_dir(ctx_getenv(ctx, "XDG_RUNTIME_DIR"), why, why_size);
	if (!dir)
		return NULL;
	char *file = hf_record_file(dir, s->cache, why, why_size);
	free(dir);
	return file;
}

static void run_integrity(const struct context *ctx, void *state, struct result *r)
{
	struct hf_state *s = state;
	const struct hf_cache *c = need_scan(r, s);
	if (!c)
		return;
	/* unverified content (a blob named by no hash, a copied file no listing
	 * names) warns in ci and fails in validate: never counted as matching;
	 * validate trusts no record either */
	bool strict = ctx->profile && strcmp(ctx->profile, "validate") == 0;
	/* leave time for the reports: half a second, or a quarter of what is
	 * left when less is (at --deadline 0.3 a fixed 0.5 s would leave hf
	 * verify the runner's own deadline, whose generic "timed out" would then
	 * win over the bytes hashed and left) */
	double left = ctx_remaining(ctx);
	double deadline = ctx->deadline - (left / 4 < 0.5 ? left / 4 : 0.5);
	char why[4400] = "";
	char *record = integrity_record(ctx, s, why, sizeof(why));
	char **repos = integrity_repos(ctx, strict);
	struct hf_verify_options opt = { .deadline = deadline,
					 .progress = !ctx_is_healthcheck(ctx) && progress_wanted(false),
					 .label = "hf.integrity",
					 .repos = repos,
					 .record = record,
					 .full = strict };
	struct hf_verify v;
	if (hf_verify_run(c, &opt, &v) < 0) {
		result_set(r, STATUS_FAIL, "cannot open %s: %s", s->cache, strerror(errno));
		free(record);
		free_list(repos);
		return;
	}
	size_t bad = 0, unverified = 0, ok = 0;
	json_t *problems = json_array(); /* the blob and the files behind it, for the JSON report */
	for (size_t i = 0; i < v.count; i++) {
		const struct hf_blob_result *res = &v.results[i];
		if (res->state == HF_BLOB_OK)
			ok++;
		if (res->state == HF_BLOB_OK || res->state == HF_BLOB_SKIPPED)
			continue;
		bool unv = hf_result_unverified(res);
		unverified += unv;
		bad += !unv;
		if (bad + unverified > MAX_LISTED)
			continue;
		char *msg = hf_result_text(c, res);
		result_finding(r, unv && !strict ? STATUS_WARN : STATUS_FAIL, "hf.integrity.problem", "%s", msg);
		free(msg);
		json_array_append_new(problems, hf_result_json(c, res));
		const struct hf_repo *repo = &c->repos[res->repo];
		const char *id = repo->id ? repo->id : repo->folder;
		if (res->blob >= 0 && !unv)
			result_remedy(r, "rm %s/%s/blobs/%s and re-download %s (HF_HUB_CACHE=%s hf download %s)",
				      s->loc.hub_cache, repo->folder, repo->blobs[res->blob].name, id, s->loc.hub_cache,
				      id);
		else if (unv && res->blob < 0)
			result_remedy(
				r,
				"re-download %s with a current huggingface_hub or gpugate hf fetch: it writes trees/<commit>.json, the listing a copied file is checked against",
				id);
		else
			result_remedy(r, "re-download %s (HF_HUB_CACHE=%s hf download %s)", id, s->loc.hub_cache, id);
	}
	if (bad + unverified > MAX_LISTED)
		result_finding(r, bad || strict ? STATUS_FAIL : STATUS_WARN, "hf.integrity.more", "and %zu more",
			       bad + unverified - MAX_LISTED);
	const struct hf_integrity_fact fact = {
		.files = v.count,
		.matching = ok,
		.unverified = unverified,
		.bytes_hashed = v.bytes,
		.bytes_left = v.bytes_to_hash > v.bytes ? v.bytes_to_hash - v.bytes : 0,
		.hashed = v.hashed,
		.trusted = v.trusted,
		.scope = repos ? "models" : "cache",
		.record = record,
		.record_note = record ? v.record_note : why,
		.problems = problems,
	};
	hf_integrity_encode(result_details(r), &fact);
	char hashed[32];
	human_bytes(v.bytes, hashed, sizeof(hashed));
	size_t n_repos = 0;
	for (char **f = repos; f && *f; f++)
		n_repos++;
	char *of = repos ? xasprintf("; scope: the %zu %s hf.models lists (integrity_scope: cache for all)", n_repos,
				     count_noun(n_repos, "repo", "repos"))
			 : xstrdup("");
	/* the trusted files are among the ok ones: "of them", never "more" */
	char *trust = !v.trusted ? xstrdup("")
		      : ok == 1  ? xstrdup("; trusted, unchanged since verified")
				 : xasprintf("; %zu of them trusted, unchanged since verified", v.trusted);
	if (bad)
		result_set(r, STATUS_FAIL, "%zu of %zu %s %s not match %s hash (%zu %s%s)", bad, v.count,
			   count_noun(v.count, "file", "files"), count_noun(v.count, "does", "do"),
			   count_noun(v.count, "its", "their"), ok, count_noun(ok, "matches", "match"),
			   unverified ? ", others unverified" : "");
	else if (v.timed_out) {
		char *where = hf_verify_stopped_text(&v);
		result_set(r, STATUS_FAIL, "not finished before the deadline: %s", where);
		free(where);
		result_remedy(
			r,
			"raise --deadline, or run gpugate hf verify once (no deadline): what it verifies is trusted by later runs while unchanged");
	} else if (unverified)
		result_set(r, strict ? STATUS_FAIL : STATUS_WARN,
			   "%zu %s %s hash (%s hashed in %.1f s%s); %zu unverified (no hash to compare with)%s", ok,
			   count_noun(ok, "file matches", "files match"), count_noun(ok, "its", "their"), hashed,
			   v.seconds, trust, unverified, of);
	else
		result_set(r, STATUS_PASS, "%zu %s %s hash (%s hashed in %.1f s%s)%s", ok,
			   count_noun(ok, "file matches", "files match"), count_noun(ok, "its", "their"), hashed,
			   v.seconds, trust, of);
	free(of);
	free(trust);
	free(record);
	free_list(repos);
	hf_verify_free(&v);
}

static const struct check_def hf_checks[] = {
	{ "hf.location",
	  "the hub cache path resolves (HF_HUB_CACHE, HF_HOME, ... as huggingface_hub does) to an absolute path", NULL,
	  false, run_location },
	{ "hf.mounted",
	  "the cache is on a mounted volume, not the container's root filesystem; HF_HOME not beside the mount", NULL,
	  false, run_mounted },
	{ "hf.writable", "the cache can be written (write test; healthcheck: mount options), or is read-only by design",
	  NULL, false, run_writable },
	{ "hf.space", "the cache's filesystem has at least min_free bytes free", NULL, false, run_space },
	{ "hf.locks", "the lock files under .locks are writable by this user", NULL, false, run_locks },
	{ "hf.layout", "repos, snapshots, links and refs are as huggingface_hub writes them; no partial downloads",
	  NULL, false, run_layout },
	{ "hf.models", "the models the spec lists are complete in the snapshot their revision names", NULL, false,
	  run_models },
	{ "hf.integrity", "every blob's content hashes to its name (sha256 or git sha1), offline", "hf.integrity", true,
	  run_integrity },
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group hf_group = {
	.name = "hf",
	.description =
		"the Hugging Face hub cache: location, mount, writability, space, locks, layout, models, integrity",
	.spec_keys = hf_keys,
	.validate = hf_validate,
	.prepare = hf_prepare,
	.release = hf_release,
	.checks = hf_checks,
};
