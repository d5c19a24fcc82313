/* Where huggingface_hub keeps its files, by its own rules (constants.py):
 * the hub cache is HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else
 * $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
 * ~/.cache/huggingface/hub; the final values of HF_HOME and HF_HUB_CACHE go
 * through os.path.expanduser and then os.path.expandvars. A variable set to
 * the empty string counts as set. */
#ifndef GPUGATE_HF_LOCATION_H
#define GPUGATE_HF_LOCATION_H

#include <stdbool.h>
#include <stddef.h>

/* The environment and the user database the rules read. getenv returns NULL
 * for unset, "" for empty. home_of returns a malloc'd home folder for a user
 * name (NULL: the current user), or NULL when there is no such user. */
struct hf_env {
	const char *(*getenv)(void *arg, const char *name);
	char *(*home_of)(void *arg, const char *user);
	void *arg;
};

struct hf_location {
	char *hub_cache;        /* the hub cache folder, as huggingface_hub computes it */
	const char *hub_source; /* HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME, XDG_CACHE_HOME or "default" */
	char *hf_home;
	const char *home_source;  /* HF_HOME, XDG_CACHE_HOME or "default" */
	char *token_path;         /* HF_TOKEN_PATH or $HF_HOME/token (staging: ~/.cache/huggingface_staging/token) */
	const char *token_source; /* HF_TOKEN, HUGGING_FACE_HUB_TOKEN, the token file, or NULL: none */
	char *token_error; /* why huggingface_hub's get_token() raises, failing every download; NULL: it does not */
	char *endpoint;    /* HF_ENDPOINT without trailing '/', or https://huggingface.co (staging: hub-ci) */
	const char *endpoint_source; /* HF_ENDPOINT, HUGGINGFACE_CO_STAGING or "default" */
	bool staging;                /* HUGGINGFACE_CO_STAGING is true */
	bool offline;
	const char *offline_source; /* HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE or NULL */
	char *xet_cache, *assets_cache, *datasets_cache;
	const char *deprecated[4]; /* set variables that are deprecated, NULL-terminated */
};

/* Python's os.path.expanduser: "~" or "~user" at the start; unchanged when
 * the user is unknown. Returns a malloc'd string. */
char *hf_expanduser(const struct hf_env *env, const char *path);
/* Python's os.path.expandvars (posixpath): $NAME and ${NAME} with NAME of
 * [A-Za-z0-9_]; unknown variables are left as written. */
char *hf_expandvars(const struct hf_env *env, const char *path);
/* Python's os.path.join of two parts. */
char *hf_path_join(const char *a, const char *b);

/* What the token file gives huggingface_hub's _get_token_from_file()
 * (utils/_auth.py: Path(HF_TOKEN_PATH).read_text(), only FileNotFoundError
 * caught): HF_TOKEN_FILE_TOKEN, _NONE (missing, or nothing left once
 * cleaned), or _RAISES with why = the exception Python raises and its cause. */
enum hf_token_file { HF_TOKEN_FILE_NONE, HF_TOKEN_FILE_TOKEN, HF_TOKEN_FILE_RAISES };
typedef enum hf_token_file (*hf_token_file_fn)(void *arg, const char *path, char *why, size_t why_size);
/* Fills loc by the rules above. token_file is asked what the token file
 * holds only when no token variable gives one (may be NULL: not looked at). */
void hf_location_resolve(const struct hf_env *env, hf_token_file_fn token_file, struct hf_location *loc);

/* A token cleaned as huggingface_hub's _clean_token (utils/_auth.py): "\r"
 * and "\n" removed anywhere, then Python's str.strip() white space at both
 * ends; NULL when nothing is left. Caller frees (and should wipe). */
char *hf_clean_token(const char *raw, size_t len);
/* The token huggingface_hub would send (utils/_auth.py get_token, without
 * OIDC and Colab): HF_TOKEN, else HUGGING_FACE_HUB_TOKEN (an empty HF_TOKEN
 * counts as unset), cleaned; when that leaves nothing, the token file at
 * loc->token_path under root, cleaned. *token is NULL when there is none;
 * *source names where it came from. Returns 0, or -1 with err (never the
 * token) when the token file cannot be read. */
int hf_token_of_environ(char **environ_list, const char *root, const struct hf_location *loc, char **token,
			const char **source, char *err, size_t errsize);
void hf_location_free(struct hf_location *loc);

/* When loc's hub cache path is empty or relative (huggingface_hub would
 * read it under whatever the working folder is): the problem, naming the
 * variable it came from and whether that was set to the empty string, in
 * why, and the command that fixes it in fix; false when it is absolute.
 * environ_list holds the variables loc was computed from. The one wording
 * of hf.location and every hf command. */
bool hf_location_relative(char **environ_list, const struct hf_location *loc, char *why, size_t why_size, char *fix,
			  size_t fix_size);

/* True for the values huggingface_hub reads as true: 1, ON, YES, TRUE in any case. */
bool hf_is_true(const char *value);

/* An hf_env over a NAME=value array (the context's snapshot), reading the
 * user database under root ("" for the real one). */
struct hf_env_environ {
	char **environ;
	const char *root;
};
void hf_env_from_environ(struct hf_env *env, struct hf_env_environ *data);
/* hf_location_resolve over a NAME=value array under root ("" or NULL: the
 * real root); with look_for_token_file, whether the token file exists under
 * root decides token_source when no token variable is set. */
void hf_location_of_environ(char **environ_list, const char *root, bool look_for_token_file, struct hf_location *loc);

/* The repo folder for an id as a user writes it: "org/name" (a model, or
 * of type, a word or folder prefix), "datasets/x", "spaces/o/n", or the
 * folder name itself; the names are cache_format.h's. Caller frees. */
char *hf_repo_folder(const char *id, const char *type);
/* Why a repo as a user writes it (hf_repo_folder's forms, no type given)
 * names no repo: a folder name that is no repo folder's, or an id that
 * huggingface_hub refuses (hf_repo_id_problem); NULL when it is one. */
const char *hf_repo_arg_problem(const char *arg);

/* Lexically normalises an absolute path: "//", "." and ".." removed, no
 * trailing slash. Returns a malloc'd string. */
char *hf_path_normalize(const char *path);

#endif
