#include "hf_location.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/util.h"

static char *expand_user(const char *v)
{
	if (v[0] != '~')
		return xstrdup(v);
	const char *rest = v + 1 + strcspn(v + 1, "/");
	char *user = xstrndup(v + 1, (size_t)(rest - v - 1));
	const char *home = NULL;
	if (!user[0]) {
		home = getenv("HOME");
		if (!home) {
			struct passwd *pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
	} else {
		struct passwd *pw = getpwnam(user);
		home = pw ? pw->pw_dir : NULL;
	}
	free(user);
	if (!home)
		return xstrdup(v); /* as Python: unknown user, left as written */
	return xasprintf("%s%s", home, rest);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static char *expand_vars(const char *v)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = v; *p;) {
		if (*p != '$') {
			sb_add(&sb, p++, 1);
			continue;
		}
		const char *name = p + 1, *end;
		bool braced = *name == '{';
		if (braced) {
			name++;
			end = strchr(name, '}');
			if (!end) { /* no closing brace: literal */
				sb_add(&sb, p++, 1);
				continue;
			}
		} else {
			end = name;
			while (name_char(*end))
				end++;
		}
		if (end == name) {
			sb_add(&sb, p++, 1);
			continue;
		}
		char *var = xstrndup(name, (size_t)(end - name));
		const char *val = getenv(var);
		free(var);
		const char *after = braced ? end + 1 : end;
		if (val)
			sb_puts(&sb, val);
		else
			sb_add(&sb, p, (size_t)(after - p));
		p = after;
	}
	return sb_detach(&sb);
}

char *hfloc_expand(const char *v)
{
	char *u = expand_user(v);
	char *r = expand_vars(u);
	free(u);
	return r;
}

static char *xdg_cache(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	return x ? xstrdup(x) : xstrdup("~/.cache");
}

char *hfloc_home(void)
{
	const char *h = getenv("HF_HOME");
	char *raw;
	if (h) {
		raw = xstrdup(h);
	} else {
		char *x = xdg_cache();
		raw = xasprintf("%s/huggingface", x);
		free(x);
	}
	char *r = hfloc_expand(raw);
	free(raw);
	return r;
}

char *hfloc_hub_cache(void)
{
	const char *v = getenv("HF_HUB_CACHE");
	if (!v)
		v = getenv("HUGGINGFACE_HUB_CACHE");
	if (v)
		return hfloc_expand(v);
	char *home = hfloc_home();
	char *r = xasprintf("%s/hub", home);
	free(home);
	return r;
}

static bool truthy(const char *v)
{
	return v && (strcasecmp(v, "1") == 0 || strcasecmp(v, "on") == 0 || strcasecmp(v, "yes") == 0 ||
		     strcasecmp(v, "true") == 0);
}

bool hfloc_offline(void)
{
	const char *v = getenv("HF_HUB_OFFLINE");
	if (v && v[0])
		return truthy(v);
	return truthy(getenv("TRANSFORMERS_OFFLINE"));
}

char *hfloc_endpoint(void)
{
	const char *v = getenv("HF_ENDPOINT");
	char *e = xstrdup(v && v[0] ? v : "https://huggingface.co");
	size_t n = strlen(e);
	while (n > 0 && e[n - 1] == '/')
		e[--n] = '\0';
	return e;
}

/* Strips surrounding white space; NULL when nothing is left. */
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

int hfloc_token(char **token, char *err, size_t err_size)
{
	*token = NULL;
	const char *source = "HF_TOKEN";
	const char *v = getenv("HF_TOKEN");
	if (!v || !v[0]) {
		v = getenv("HUGGING_FACE_HUB_TOKEN");
		source = "HUGGING_FACE_HUB_TOKEN";
	}
	char *t = clean_token(v);
	char *path = NULL;
	if (!t) {
		const char *p = getenv("HF_TOKEN_PATH");
		if (p) {
			path = hfloc_expand(p);
		} else {
			char *home = hfloc_home();
			path = xasprintf("%s/token", home);
			free(home);
		}
		char *content = NULL;
		size_t len = 0;
		int rc = read_file(path, &content, &len);
		if (rc < 0 && rc != -ENOENT) {
			snprintf(err, err_size, "token file %s: %s", path, strerror(-rc));
			free(path);
			return -1;
		}
		if (rc == 0) {
			if (memchr(content, '\0', len)) {
				snprintf(err, err_size, "token file %s: contains a NUL byte", path);
				free(content);
				free(path);
				return -1;
			}
			t = clean_token(content);
			free(content);
		}
		source = path;
	}
	if (t) {
		for (const char *c = t; *c; c++) {
			if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) {
				snprintf(err, err_size, "the token from %s contains a space or control character;"
					 " it cannot go into an HTTP header", source);
				free(t);
				free(path);
				return -1;
			}
		}
	}
	free(path);
	*token = t;
	return 0;
}
