#include "hf_location.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hf/location.h"
#include "lib/util.h"

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

/* The token file's content, cleaned; *token NULL when it is missing or blank. */
static int read_token_file(const char *path, char **token, char *err, size_t err_size)
{
	char *content = NULL;
	size_t len = 0;
	int rc = read_file(path, &content, &len);
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

int hfloc_token(const struct hf_location *loc, char **token, char *err, size_t err_size)
{
	*token = NULL;
	/* As huggingface_hub: HF_TOKEN or HUGGING_FACE_HUB_TOKEN (an empty
	 * HF_TOKEN counts as unset), then cleaned; blank falls to the file. */
	const char *source = "HF_TOKEN";
	const char *v = getenv("HF_TOKEN");
	if (!v || !v[0]) {
		v = getenv("HUGGING_FACE_HUB_TOKEN");
		source = "HUGGING_FACE_HUB_TOKEN";
	}
	char *t = clean_token(v);
	if (!t) {
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
