#include "location.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_format.h"
#include "../lib/safe_io.h"
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
	size_t na = strlen(a), nb = strlen(b);
	bool slash = na && a[na - 1] != '/';
	char *out = xmalloc(na + slash + nb + 1);
	memcpy(out, a, na);
	if (slash)
		out[na] = '/';
	memcpy(out + na + slash, b, nb + 1);
	return out;
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

/* utils/_auth.py: os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"):
 * an empty HF_TOKEN falls through, a blank one does not (it is cleaned to none). */
static const char *token_variable(const struct hf_env *env, const char **source)
{
	const char *t = env_get(env, "HF_TOKEN");
	*source = "HF_TOKEN";
	if (!t || !*t) {
		t = env_get(env, "HUGGING_FACE_HUB_TOKEN");
		*source = "HUGGING_FACE_HUB_TOKEN";
	}
	return t && *t ? t : NULL;
}

/* Python's str.isspace() for the character at s (UTF-8), giving its length. */
static size_t py_space_at(const char *s, size_t left)
{
	unsigned char c = (unsigned char)s[0];
	if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f))
		return 1;
	static const char *const wide[] = { "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\xa8",
					    "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80" };
	for (size_t i = 0; i < ARRAY_SIZE(wide); i++) {
		size_t n = strlen(wide[i]);
		if (left >= n && memcmp(s, wide[i], n) == 0)
			return n;
	}
	if (left >= 3 && (unsigned char)s[0] == 0xe2 && (unsigned char)s[1] == 0x80 && (unsigned char)s[2] >= 0x80 &&
	    (unsigned char)s[2] <= 0x8a)
		return 3; /* U+2000..U+200A */
	return 0;
}

char *hf_clean_token(const char *raw, size_t len)
{
	char *t = xmalloc(len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (raw[i] != '\r' && raw[i] != '\n')
			t[n++] = raw[i];
	t[n] = '\0';
	size_t start = 0, k;
	while (start < n && (k = py_space_at(t + start, n - start)))
		start += k;
	size_t end = n;
	for (bool trimmed = true; trimmed && end > start;) {
		trimmed = false;
		for (size_t back = 1; back <= 3 && back <= end - start; back++)
			if (py_space_at(t + end - back, back) == back) {
				end -= back;
				trimmed = true;
				break;
			}
	}
	char *out = end > start ? xstrndup(t + start, end - start) : NULL;
	explicit_bzero(t, len + 1);
	free(t);
	return out;
}

/* Python's exception for an errno from open() or read() (the OSError
 * subclasses of PEP 3151). */
static const char *py_exception(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
		return "PermissionError";
	case EISDIR:
		return "IsADirectoryError";
	case ENOTDIR:
		return "NotADirectoryError";
	case ENOENT:
		return "FileNotFoundError";
	default:
		return "OSError";
	}
}

/* Whether buf is text Python's strict UTF-8 decoder takes (no overlong
 * forms, no surrogates, nothing past U+10FFFF): read_text() decodes the
 * file so (the locale's encoding, UTF-8 here and in Python's UTF-8 mode). */
static bool py_utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t len = c < 0x80                 ? 1
			     : c >= 0xc2 && c <= 0xdf ? 2
			     : c >= 0xe0 && c <= 0xef ? 3
			     : c >= 0xf0 && c <= 0xf4 ? 4
						      : 0;
		if (!len || i + len > n)
			return false;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] > 0x9f) ||
		    (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] > 0x8f))
			return false;
		i += len;
	}
	return true;
}

/* The token file, opened as fd (path names it in messages), as
 * _get_token_from_file() reads it (utils/_auth.py): bounded and never
 * blocking on a FIFO; anything that stops Path.read_text() raises, and the
 * raise reaches every download. Closes fd. */
static int read_token_fd(int fd, const char *path, char **token, char *err, size_t errsize)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 65536) {
		snprintf(err, errsize, "token file %s: %s", path,
			 S_ISDIR(st.st_mode)   ? "a folder, Path.read_text() raises IsADirectoryError"
			 : S_ISREG(st.st_mode) ? "larger than 64 KiB: not a token"
					       : "not a regular file: Path.read_text() would block or read endlessly");
		close(fd);
		return -1;
	}
	char buf[65537];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errsize, "token file %s: %s raises %s", path, strerror(e), py_exception(e));
		return -1;
	}
	if (!py_utf8_ok((const unsigned char *)buf, (size_t)n)) {
		explicit_bzero(buf, (size_t)n);
		snprintf(err, errsize, "token file %s: not UTF-8 text, Path.read_text() raises UnicodeDecodeError",
			 path);
		return -1;
	}
	*token = hf_clean_token(buf, (size_t)n);
	explicit_bzero(buf, (size_t)n);
	return 0;
}

/* The token file at path as seen inside root: a missing file is no token
 * (FileNotFoundError is caught). Opened by the kernel's lookup under root
 * (root_open), and named ROOT/... (root_path) only where a message or the
 * read needs the name: the usual missing file costs one system call. */
static int read_token_file(const char *root, const char *path, char **token, char *err, size_t errsize)
{
	*token = NULL;
	if (!*path) { /* Path("") is ".": the working folder */
		snprintf(
			err, errsize,
			"HF_TOKEN_PATH is empty: Path('').read_text() reads '.', the working folder, and raises IsADirectoryError");
		return -1;
	}
	int fd = root_open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd == -ENOENT)
		return 0; /* FileNotFoundError: no token */
	char *shown = root_path(root, path);
	int rc;
	if (fd < 0) {
		snprintf(err, errsize, "token file %s: %s raises %s", shown, strerror(-fd), py_exception(-fd));
		rc = -1;
	} else {
		rc = read_token_fd(fd, shown, token, err, errsize);
	}
	free(shown);
	return rc;
}

void hf_location_resolve(const struct hf_env *env, hf_token_file_fn token_file, struct hf_location *loc)
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

	/* constants.py: HF_TOKEN_PATH and HF_ASSETS_CACHE (HUGGINGFACE_ASSETS_CACHE
	 * its legacy name) are expanded; HF_XET_CACHE is taken as written */
	v = env_get(env, "HF_TOKEN_PATH");
	char *raw = v ? xstrdup(v) : hf_path_join(loc->hf_home, "token");
	loc->token_path = expand(env, raw);
	free(raw);
	if ((v = env_get(env, "HF_ASSETS_CACHE")) || (v = env_get(env, "HUGGINGFACE_ASSETS_CACHE")))
		raw = xstrdup(v);
	else
		raw = hf_path_join(loc->hf_home, "assets");
	loc->assets_cache = expand(env, raw);
	free(raw);
	v = env_get(env, "HF_XET_CACHE");
	loc->xet_cache = v ? xstrdup(v) : hf_path_join(loc->hf_home, "xet");
	/* the datasets library's own rule (datasets config.py): unexpanded too */
	v = env_get(env, "HF_DATASETS_CACHE");
	loc->datasets_cache = v ? xstrdup(v) : hf_path_join(loc->hf_home, "datasets");

	/* constants.py: ENDPOINT = os.getenv("HF_ENDPOINT", default).rstrip("/");
	 * HUGGINGFACE_CO_STAGING overrides it and the token path (not the cache:
	 * HF_HUB_CACHE is computed before the staging block) */
	loc->staging = hf_is_true(env_get(env, "HUGGINGFACE_CO_STAGING"));
	if (loc->staging) {
		loc->endpoint = xstrdup("https://hub-ci.huggingface.co");
		loc->endpoint_source = "HUGGINGFACE_CO_STAGING";
		char *home = hf_expanduser(env, "~");
		char *a = hf_path_join(home, ".cache");
		char *b = hf_path_join(a, "huggingface_staging");
		free(loc->token_path);
		loc->token_path = hf_path_join(b, "token");
		free(home);
		free(a);
		free(b);
	} else {
		v = env_get(env, "HF_ENDPOINT");
		loc->endpoint = xstrdup(v ? v : "https://huggingface.co");
		loc->endpoint_source = v ? "HF_ENDPOINT" : "default";
		size_t n = strlen(loc->endpoint);
		while (n > 0 && loc->endpoint[n - 1] == '/')
			loc->endpoint[--n] = '\0';
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

	const char *raw_source = NULL;
	const char *t = token_variable(env, &raw_source);
	char *clean = t ? hf_clean_token(t, strlen(t)) : NULL;
	const char *oidc = env_get(env, "HF_OIDC_RESOURCE");
	if (oidc && *oidc) {
		/* get_token() asks an OIDC exchange first (utils/_auth.py
		 * _get_token_from_oidc): the variables and the file come after */
		loc->token_source = "HF_OIDC_RESOURCE (an OIDC token exchange)";
	} else if (clean) {
		loc->token_source = raw_source;
	} else if (token_file && !hf_is_true(env_get(env, "HF_HUB_DISABLE_IMPLICIT_TOKEN"))) {
		/* utils/_headers.py get_token_to_send: with the implicit token
		 * disabled, a download never calls get_token() (since 1.20) */
		char why[PATH_MAX + 200];
		enum hf_token_file f = token_file(env->arg, loc->token_path, why, sizeof(why));
		if (f == HF_TOKEN_FILE_TOKEN)
			loc->token_source = "the token file";
		else if (f == HF_TOKEN_FILE_RAISES)
			loc->token_error = xstrdup(why);
	}
	if (clean) {
		explicit_bzero(clean, strlen(clean));
		free(clean);
	}

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
	free(loc->token_error);
	free(loc->xet_cache);
	free(loc->assets_cache);
	free(loc->datasets_cache);
	free(loc->endpoint);
	memset(loc, 0, sizeof(*loc));
}

static const char *environ_getenv(void *arg, const char *name)
{
	struct hf_env_environ *d = arg;
	return env_lookup(d->environ, name);
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
	/* a FIFO or /dev/zero planted in the image: no passwd file, not a hang */
	FILE *f = safe_fopen_read(path, SAFE_MAX_TEXT);
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

static enum hf_token_file token_file_under_root(void *arg, const char *path, char *why, size_t why_size)
{
	struct hf_env_environ *d = arg;
	char *token = NULL;
	int rc = read_token_file(d->root, path, &token, why, why_size);
	bool yes = rc == 0 && token;
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	return rc < 0 ? HF_TOKEN_FILE_RAISES : yes ? HF_TOKEN_FILE_TOKEN : HF_TOKEN_FILE_NONE;
}

bool hf_location_relative(char **environ_list, const struct hf_location *loc, char *why, size_t why_size, char *fix,
			  size_t fix_size)
{
	if (loc->hub_cache[0] == '/')
		return false;
	const char *var = strcmp(loc->hub_source, "default") == 0 ? "HOME" : loc->hub_source;
	struct hf_env_environ data = { environ_list, "" };
	const char *value = environ_getenv(&data, var);
	if (!*loc->hub_cache)
		snprintf(why, why_size, "the hub cache path is empty (%s is set to the empty string)", var);
	else /* HF_HOME= makes the cache "hub": say that the variable is empty */
		snprintf(
			why, why_size,
			"the hub cache path '%s' (from %s%s) is relative: huggingface_hub would use a folder under whatever the working folder is",
			loc->hub_cache, var, value && !*value ? ", set to the empty string" : "");
	if (strcmp(var, "HOME") == 0) /* unsetting HOME is no fix */
		snprintf(fix, fix_size, "export HOME=/absolute/path   (the user's home folder)");
	else
		snprintf(fix, fix_size, "unset %s   (or export %s=/absolute/path)", var, var);
	return true;
}

int hf_token_of_environ(char **environ_list, const char *root, const struct hf_location *loc, char **token,
			const char **source, char *err, size_t errsize)
{
	struct hf_env_environ data = { environ_list, root ? root : "" };
	struct hf_env env;
	hf_env_from_environ(&env, &data);
	*token = NULL;
	*source = NULL;
	const char *raw_source = NULL;
	const char *t = token_variable(&env, &raw_source);
	if (t && (*token = hf_clean_token(t, strlen(t)))) {
		*source = raw_source;
		return 0;
	}
	int rc = read_token_file(data.root, loc->token_path, token, err, errsize);
	if (*token)
		*source = "the token file";
	return rc;
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

const char *hf_repo_arg_problem(const char *arg)
{
	if (strstr(arg, HF_REPO_ID_SEPARATOR) && !strchr(arg, '/')) { /* the folder name itself */
		struct hf_folder f;
		enum hf_folder_status st = hf_folder_parse(arg, &f);
		hf_folder_free(&f);
		return st == HF_FOLDER_OK ? NULL
		       : st == HF_FOLDER_UNKNOWN_TYPE
			       ? "a repo folder starts models--, datasets--, spaces-- or kernels--"
			       : "a repo folder names an id after its type: models--ORG--NAME";
	}
	const char *slash = strchr(arg, '/');
	if (slash && hf_repo_type_of_prefix(arg, (size_t)(slash - arg))) /* "datasets/glue" */
		arg = slash + 1;
	return hf_repo_id_problem(arg);
}

char *hf_repo_folder(const char *id, const char *type)
{
	if (strstr(id, HF_REPO_ID_SEPARATOR) && !strchr(id, '/'))
		return xstrdup(id); /* the folder name itself */
	const char *word = type;
	if (!type) { /* "datasets/glue": the type as hf.co's addresses spell it */
		const char *slash = strchr(id, '/');
		word = slash ? hf_repo_type_of_prefix(id, (size_t)(slash - id)) : NULL;
		if (word)
			id = slash + 1;
	}
	return hf_folder_name(word && hf_repo_type_prefix(word) ? word : "model", id);
}
