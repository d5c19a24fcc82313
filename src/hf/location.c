#include "location.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"

static const char *env_get(const struct hf_env *env, const char *name)
{
	return env->getenv(env->arg, name);
}

char *hf_expanduser(const struct hf_env *env, const char *path)
{
	if (path[0] != '~')
		return xstrdup(path);
	const char *slash = strchr(path, '/');
	size_t i = slash ? (size_t)(slash - path) : strlen(path);
	char *home;
	if (i == 1) {
		const char *h = env_get(env, "HOME");
		home = h ? xstrdup(h) : env->home_of(env->arg, NULL);
	} else {
		char *user = xstrndup(path + 1, i - 1);
		home = env->home_of(env->arg, user);
		free(user);
	}
	if (!home)
		return xstrdup(path);
	size_t n = strlen(home);
	while (n > 0 && home[n - 1] == '/')
		n--;
	char *out = xasprintf("%.*s%s", (int)n, home, path + i);
	free(home);
	if (!*out) {
		free(out);
		return xstrdup("/");
	}
	return out;
}

static bool is_word(char c)
{
	return isascii((unsigned char)c) && (isalnum((unsigned char)c) || c == '_');
}

char *hf_expandvars(const struct hf_env *env, const char *path)
{
	struct strbuf out = STRBUF_INIT;
	sb_puts(&out, "");
	const char *p = path;
	while (*p) {
		const char *dollar = strchr(p, '$');
		if (!dollar) {
			sb_puts(&out, p);
			break;
		}
		sb_add(&out, p, (size_t)(dollar - p));
		const char *name = dollar + 1, *end;
		size_t name_len;
		if (*name == '{') {
			const char *close = strchr(name + 1, '}');
			if (!close) { /* no match here: the '$' stays, search on after it */
				sb_add(&out, "$", 1);
				p = dollar + 1;
				continue;
			}
			name++;
			name_len = (size_t)(close - name);
			end = close + 1;
		} else {
			end = name;
			while (is_word(*end))
				end++;
			name_len = (size_t)(end - name);
			if (!name_len) {
				sb_add(&out, "$", 1);
				p = dollar + 1;
				continue;
			}
		}
		char *var = xstrndup(name, name_len);
		const char *value = name_len ? env_get(env, var) : NULL;
		free(var);
		if (value)
			sb_puts(&out, value);
		else
			sb_add(&out, dollar, (size_t)(end - dollar));
		p = end;
	}
	return sb_detach(&out);
}

char *hf_path_join(const char *a, const char *b)
{
	if (b[0] == '/')
		return xstrdup(b);
	if (!*a || a[strlen(a) - 1] == '/')
		return xasprintf("%s%s", a, b);
	return xasprintf("%s/%s", a, b);
}

static char *expand(const struct hf_env *env, const char *value)
{
	char *user = hf_expanduser(env, value);
	char *vars = hf_expandvars(env, user);
	free(user);
	return vars;
}

bool hf_is_true(const char *value)
{
	if (!value)
		return false;
	static const char *const yes[] = { "1", "ON", "YES", "TRUE" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (strcasecmp(value, yes[i]) == 0)
			return true;
	return false;
}

/* Strips surrounding white space; NULL when nothing is left
 * (huggingface_hub utils/_auth.py, _clean_token). */
static char *clean_token(const char *v)
{
	if (!v)
		return NULL;
	while (isspace((unsigned char)*v))
		v++;
	size_t n = strlen(v);
	while (n > 0 && isspace((unsigned char)v[n - 1]))
		n--;
	return n ? xstrndup(v, n) : NULL;
}

/* utils/_auth.py, _get_token_from_environment: _clean_token(HF_TOKEN or
 * HUGGING_FACE_HUB_TOKEN), Python's "or": an empty HF_TOKEN falls to the
 * second; a blank one does not, and cleans to nothing (then the token file
 * counts). Returns the variable's name with *value, or NULL. */
static const char *token_from_env(const struct hf_env *env, char **value)
{
	const char *source = "HF_TOKEN", *v = env_get(env, "HF_TOKEN");
	if (!v || !*v) {
		source = "HUGGING_FACE_HUB_TOKEN";
		v = env_get(env, "HUGGING_FACE_HUB_TOKEN");
	}
	*value = clean_token(v);
	return *value ? source : NULL;
}

void hf_location_resolve(const struct hf_env *env, bool (*token_file_exists)(void *arg, const char *path),
			 struct hf_location *loc)
{
	memset(loc, 0, sizeof(*loc));
	/* HF_HOME = expandvars(expanduser(HF_HOME or join(XDG_CACHE_HOME or ~/.cache, "huggingface"))) */
	const char *v = env_get(env, "HF_HOME");
	char *raw_home;
	if (v) {
		raw_home = xstrdup(v);
		loc->home_source = "HF_HOME";
	} else {
		const char *xdg = env_get(env, "XDG_CACHE_HOME");
		char *base;
		if (xdg) {
			base = xstrdup(xdg);
			loc->home_source = "XDG_CACHE_HOME";
		} else {
			char *home = hf_expanduser(env, "~");
			base = hf_path_join(home, ".cache");
			free(home);
			loc->home_source = "default";
		}
		raw_home = hf_path_join(base, "huggingface");
		free(base);
	}
	loc->hf_home = expand(env, raw_home);
	free(raw_home);

	/* HF_HUB_CACHE = expand(HF_HUB_CACHE or HUGGINGFACE_HUB_CACHE or join(HF_HOME, "hub")) */
	char *raw_hub;
	if ((v = env_get(env, "HF_HUB_CACHE"))) {
		raw_hub = xstrdup(v);
		loc->hub_source = "HF_HUB_CACHE";
	} else if ((v = env_get(env, "HUGGINGFACE_HUB_CACHE"))) {
		raw_hub = xstrdup(v);
		loc->hub_source = "HUGGINGFACE_HUB_CACHE";
	} else {
		raw_hub = hf_path_join(loc->hf_home, "hub");
		loc->hub_source = loc->home_source;
	}
	loc->hub_cache = expand(env, raw_hub);
	free(raw_hub);

	struct {
		const char *var, *leaf;
		char **out;
	} related[] = {
		{ "HF_TOKEN_PATH", "token", &loc->token_path },
		{ "HF_XET_CACHE", "xet", &loc->xet_cache },
		{ "HF_ASSETS_CACHE", "assets", &loc->assets_cache },
		{ "HF_DATASETS_CACHE", "datasets", &loc->datasets_cache },
	};
	for (size_t i = 0; i < ARRAY_SIZE(related); i++) {
		v = env_get(env, related[i].var);
		char *raw = v ? xstrdup(v) : hf_path_join(loc->hf_home, related[i].leaf);
		*related[i].out = expand(env, raw);
		free(raw);
	}

	const char *off = env_get(env, "HF_HUB_OFFLINE");
	if (off && *off) {
		loc->offline_source = "HF_HUB_OFFLINE";
	} else if ((off = env_get(env, "TRANSFORMERS_OFFLINE")) && *off) {
		loc->offline_source = "TRANSFORMERS_OFFLINE";
	} else {
		off = NULL;
	}
	loc->offline = hf_is_true(off);

	char *t = NULL;
	loc->token_source = token_from_env(env, &t);
	free(t);
	if (!loc->token_source && token_file_exists && token_file_exists(env->arg, loc->token_path))
		loc->token_source = "the token file";

	size_t n = 0;
	static const char *const deprecated[] = { "TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE",
						  "PYTORCH_TRANSFORMERS_CACHE" };
	for (size_t i = 0; i < ARRAY_SIZE(deprecated); i++)
		if (env_get(env, deprecated[i]))
			loc->deprecated[n++] = deprecated[i];
	loc->deprecated[n] = NULL;
}

void hf_location_free(struct hf_location *loc)
{
	free(loc->hub_cache);
	free(loc->hf_home);
	free(loc->token_path);
	free(loc->xet_cache);
	free(loc->assets_cache);
	free(loc->datasets_cache);
	memset(loc, 0, sizeof(*loc));
}

static const char *environ_getenv(void *arg, const char *name)
{
	struct hf_env_environ *d = arg;
	size_t n = strlen(name);
	for (char **e = d->environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* The home folder from the passwd file under root, or the system's user
 * database for the real root. */
static char *environ_home_of(void *arg, const char *user)
{
	struct hf_env_environ *d = arg;
	if (root_is_real(d->root)) {
		struct passwd pw, *found = NULL;
		char buf[4096];
		int rc = user ? getpwnam_r(user, &pw, buf, sizeof(buf), &found)
			      : getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found);
		return rc == 0 && found && found->pw_dir ? xstrdup(found->pw_dir) : NULL;
	}
	char *path = root_path(d->root, "/etc/passwd");
	FILE *f = fopen(path, "re");
	free(path);
	if (!f)
		return NULL;
	char *home = NULL;
	struct passwd *pw;
	while (!home && (pw = fgetpwent(f)))
		if (user ? strcmp(pw->pw_name, user) == 0 : pw->pw_uid == getuid())
			home = xstrdup(pw->pw_dir ? pw->pw_dir : "");
	fclose(f);
	return home;
}

void hf_env_from_environ(struct hf_env *env, struct hf_env_environ *data)
{
	env->getenv = environ_getenv;
	env->home_of = environ_home_of;
	env->arg = data;
}

static bool token_file_under_root(void *arg, const char *path)
{
	struct hf_env_environ *d = arg;
	char *p = root_path(d->root, path);
	bool yes = access(p, F_OK) == 0;
	free(p);
	return yes;
}

void hf_location_of_environ(char **environ_list, const char *root, bool look_for_token_file, struct hf_location *loc)
{
	struct hf_env_environ data = { environ_list, root ? root : "" };
	struct hf_env env;
	hf_env_from_environ(&env, &data);
	hf_location_resolve(&env, look_for_token_file ? token_file_under_root : NULL, loc);
}

char *hf_path_normalize(const char *path)
{
	struct strbuf out = STRBUF_INIT;
	sb_puts(&out, "");
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *last = strrchr(out.buf, '/');
			if (last) {
				out.len = (size_t)(last - out.buf);
				out.buf[out.len] = '\0';
			}
		} else {
			sb_add(&out, "/", 1);
			sb_add(&out, p, n);
		}
		p = end;
	}
	if (!out.len)
		sb_puts(&out, "/");
	return sb_detach(&out);
}

char *hf_repo_folder(const char *id, const char *type)
{
	if (strstr(id, "--") && !strchr(id, '/'))
		return xstrdup(id);
	const char *prefix = "models";
	static const struct { const char *word; const char *prefix; } types[] = {
		{ "model", "models" }, { "dataset", "datasets" }, { "space", "spaces" }, { "kernel", "kernels" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		size_t n = strlen(types[i].prefix);
		if (type && (strcmp(type, types[i].word) == 0 || strcmp(type, types[i].prefix) == 0))
			prefix = types[i].prefix;
		else if (!type && strncmp(id, types[i].prefix, n) == 0 && id[n] == '/') {
			prefix = types[i].prefix;
			id += n + 1;
		}
	}
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "%s--", prefix);
	for (const char *p = id; *p; p++) {
		if (*p == '/')
			sb_puts(&sb, "--");
		else
			sb_add(&sb, p, 1);
	}
	return sb_detach(&sb);
}

char *hf_endpoint(const struct hf_env *env)
{
	const char *v = env_get(env, "HF_ENDPOINT");
	char *e = xstrdup(v && v[0] ? v : "https://huggingface.co");
	size_t n = strlen(e);
	while (n > 0 && e[n - 1] == '/')
		e[--n] = '\0';
	return e;
}

/* The token file's content, cleaned; *token NULL when it is missing or blank. */
static int read_token_file(const char *path, char **token, char *err, size_t err_size)
{
	char *content = NULL;
	size_t len = 0;
	int rc = read_file_max(path, 64 << 10, &content, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, err_size, "token file %s: %s", path, strerror(-rc));
		return -1;
	}
	if (memchr(content, '\0', len)) {
		snprintf(err, err_size, "token file %s: contains a NUL byte", path);
		free(content);
		return -1;
	}
	*token = clean_token(content);
	free(content);
	return 0;
}

int hf_token_value(const struct hf_env *env, const struct hf_location *loc, char **token, char *err, size_t err_size)
{
	*token = NULL;
	char *t = NULL;
	const char *source = token_from_env(env, &t);
	if (!source) {
		source = loc->token_path;
		if (read_token_file(loc->token_path, &t, err, err_size) < 0)
			return -1;
	}
	for (const char *c = t; c && *c; c++) {
		if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) {
			snprintf(err, err_size, "the token from %s contains a space or control character;"
				 " it cannot go into an HTTP header", source);
			free(t);
			return -1;
		}
	}
	*token = t;
	return 0;
}
