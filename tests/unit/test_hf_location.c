/* huggingface_hub's cache location rules as a table: precedence of the
 * variables, empty values counting as set, ~ and $VAR expansion in the final
 * values (Python's os.path.expanduser, then os.path.expandvars), offline and
 * token sources. Expected values follow constants.py and posixpath. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hf/location.h"
#include "lib/util.h"

/* A fake environment: "NAME=value" strings; users root (/root) and bob
 * (/home/bob/); the current user's passwd home is /pw/me. */
struct fake {
	const char *const *vars;
};

static const char *fake_getenv(void *arg, const char *name)
{
	struct fake *f = arg;
	size_t n = strlen(name);
	for (const char *const *v = f->vars; v && *v; v++)
		if (strncmp(*v, name, n) == 0 && (*v)[n] == '=')
			return *v + n + 1;
	return NULL;
}

static char *fake_home_of(void *arg, const char *user)
{
	(void)arg;
	if (!user)
		return xstrdup("/pw/me");
	if (strcmp(user, "bob") == 0)
		return xstrdup("/home/bob/");
	if (strcmp(user, "root") == 0)
		return xstrdup("/root");
	return NULL;
}

static enum hf_token_file no_token_file(void *arg, const char *path, char *why, size_t why_size)
{
	(void)arg;
	(void)path;
	(void)why;
	(void)why_size;
	return HF_TOKEN_FILE_NONE;
}

#define ENV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_hub_cache_table(void **state)
{
	(void)state;
	struct {
		const char *const *vars;
		const char *hub, *source, *home;
	} cases[] = {
		{ ENV("HOME=/home/u"), "/home/u/.cache/huggingface/hub", "default", "/home/u/.cache/huggingface" },
		{ ENV("OTHER=1"), "/pw/me/.cache/huggingface/hub", "default",
		  "/pw/me/.cache/huggingface" }, /* HOME unset: passwd */
		{ ENV("HOME=/home/u/"), "/home/u/.cache/huggingface/hub", "default",
		  "/home/u/.cache/huggingface" }, /* rstrip('/') */
		{ ENV("HOME="), "/.cache/huggingface/hub", "default",
		  "/.cache/huggingface" }, /* empty HOME counts as set */
		{ ENV("HOME=/h", "XDG_CACHE_HOME=/xdg"), "/xdg/huggingface/hub", "XDG_CACHE_HOME", "/xdg/huggingface" },
		{ ENV("HOME=/h", "XDG_CACHE_HOME="), "huggingface/hub", "XDG_CACHE_HOME",
		  "huggingface" }, /* relative */
		{ ENV("HOME=/h", "XDG_CACHE_HOME=~/c"), "/h/c/huggingface/hub", "XDG_CACHE_HOME", "/h/c/huggingface" },
		{ ENV("HOME=/h", "HF_HOME=/hf", "XDG_CACHE_HOME=/xdg"), "/hf/hub", "HF_HOME", "/hf" },
		{ ENV("HOME=/h", "HF_HOME="), "hub", "HF_HOME", "" }, /* empty HF_HOME counts */
		{ ENV("HOME=/h", "HF_HOME=~"), "/h/hub", "HF_HOME", "/h" },
		{ ENV("HOME=/h", "HF_HOME=~/"), "/h/hub", "HF_HOME", "/h/" },
		{ ENV("HOME=/h", "HF_HOME=~bob/hf"), "/home/bob/hf/hub", "HF_HOME", "/home/bob/hf" },
		{ ENV("HOME=/h", "HF_HOME=~nobody/hf"), "~nobody/hf/hub", "HF_HOME",
		  "~nobody/hf" }, /* unknown user: as is */
		{ ENV("HOME=/h", "HF_HOME=$HOME/x"), "/h/x/hub", "HF_HOME", "/h/x" },
		{ ENV("HOME=/h", "D=/d", "HF_HOME=${D}/x"), "/d/x/hub", "HF_HOME", "/d/x" },
		{ ENV("HOME=/h", "HF_HOME=$NOPE/x"), "$NOPE/x/hub", "HF_HOME", "$NOPE/x" }, /* unknown: left */
		{ ENV("HOME=/h", "HF_HOME=/a/${}/b"), "/a/${}/b/hub", "HF_HOME", "/a/${}/b" },
		{ ENV("HOME=/h", "HF_HOME=/a/${OPEN"), "/a/${OPEN/hub", "HF_HOME", "/a/${OPEN" },
		{ ENV("HOME=/h", "E=", "HF_HOME=/a$E/b"), "/a/b/hub", "HF_HOME", "/a/b" }, /* empty var expands */
		{ ENV("HOME=/h", "U=me", "HF_HOME=/a/$U-x/$U.y"), "/a/me-x/me.y/hub", "HF_HOME", "/a/me-x/me.y" },
		{ ENV("HOME=/h", "HF_HOME=/a/$"), "/a/$/hub", "HF_HOME", "/a/$" },
		{ ENV("HOME=/h", "HF_HOME=$HOME"), "/h/hub", "HF_HOME", "/h" },
		{ ENV("HOME=/h", "HF_HOME=/hf", "HUGGINGFACE_HUB_CACHE=/legacy"), "/legacy", "HUGGINGFACE_HUB_CACHE",
		  "/hf" },
		{ ENV("HOME=/h", "HF_HOME=/hf", "HUGGINGFACE_HUB_CACHE=~/legacy"), "/h/legacy", "HUGGINGFACE_HUB_CACHE",
		  "/hf" },
		{ ENV("HOME=/h", "HF_HUB_CACHE=/new", "HUGGINGFACE_HUB_CACHE=/legacy"), "/new", "HF_HUB_CACHE",
		  "/h/.cache/huggingface" },
		{ ENV("HOME=/h", "HF_HUB_CACHE=", "HF_HOME=/hf"), "", "HF_HUB_CACHE", "/hf" }, /* empty counts as set */
		{ ENV("HOME=/h", "HF_HUB_CACHE=$HOME/hub2"), "/h/hub2", "HF_HUB_CACHE", "/h/.cache/huggingface" },
		{ ENV("HOME=/h", "HF_HUB_CACHE=rel/hub"), "rel/hub", "HF_HUB_CACHE", "/h/.cache/huggingface" },
		/* HF_HOME is expanded once, then join(HF_HOME, "hub") again as the default of HF_HUB_CACHE */
		{ ENV("HOME=/h", "V=$HOME", "HF_HOME=/x/$V"), "/x//h/hub", "HF_HOME", "/x/$HOME" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct fake f = { cases[i].vars };
		struct hf_env env = { fake_getenv, fake_home_of, &f };
		struct hf_location loc;
		hf_location_resolve(&env, no_token_file, &loc);
		if (strcmp(loc.hub_cache, cases[i].hub) != 0 || strcmp(loc.hub_source, cases[i].source) != 0 ||
		    strcmp(loc.hf_home, cases[i].home) != 0)
			fail_msg("case %zu (%s ...): hub '%s' from %s, home '%s'; expected '%s' from %s, home '%s'", i,
				 cases[i].vars[1] ? cases[i].vars[1] : cases[i].vars[0], loc.hub_cache, loc.hub_source,
				 loc.hf_home, cases[i].hub, cases[i].source, cases[i].home);
		hf_location_free(&loc);
	}
}

static void test_expanduser(void **state)
{
	(void)state;
	struct fake f = { ENV("HOME=/h") };
	struct hf_env env = { fake_getenv, fake_home_of, &f };
	struct {
		const char *in, *out;
	} cases[] = {
		{ "~", "/h" },
		{ "~/a", "/h/a" },
		{ "a/~", "a/~" },
		{ "~root", "/root" },
		{ "~root/x", "/root/x" },
		{ "~bob", "/home/bob" },
		{ "~zz/x", "~zz/x" },
		{ "", "" },
		{ "/abs", "/abs" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = hf_expanduser(&env, cases[i].in);
		if (strcmp(got, cases[i].out) != 0)
			fail_msg("expanduser('%s') = '%s', expected '%s'", cases[i].in, got, cases[i].out);
		free(got);
	}
	struct fake root_home = { ENV("HOME=/") };
	struct hf_env env2 = { fake_getenv, fake_home_of, &root_home };
	char *got = hf_expanduser(&env2, "~");
	assert_string_equal(got, "/"); /* "" after rstrip becomes "/" */
	free(got);
	got = hf_expanduser(&env2, "~/x");
	assert_string_equal(got, "/x");
	free(got);
}

static void test_offline_and_token(void **state)
{
	(void)state;
	struct {
		const char *const *vars;
		bool offline;
		const char *source;
	} cases[] = {
		{ ENV("HF_HUB_OFFLINE=1"), true, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=yes"), true, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=On"), true, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=TRUE"), true, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=2"), false, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=0", "TRANSFORMERS_OFFLINE=1"), false, "HF_HUB_OFFLINE" },
		{ ENV("HF_HUB_OFFLINE=", "TRANSFORMERS_OFFLINE=1"), true, "TRANSFORMERS_OFFLINE" },
		{ ENV("TRANSFORMERS_OFFLINE=1"), true, "TRANSFORMERS_OFFLINE" },
		{ ENV("X=1"), false, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct fake f = { cases[i].vars };
		struct hf_env env = { fake_getenv, fake_home_of, &f };
		struct hf_location loc;
		hf_location_resolve(&env, no_token_file, &loc);
		if (loc.offline != cases[i].offline ||
		    (cases[i].source ? !loc.offline_source || strcmp(loc.offline_source, cases[i].source)
				     : loc.offline_source != NULL))
			fail_msg("offline case %zu: %d from %s", i, loc.offline,
				 loc.offline_source ? loc.offline_source : "-");
		hf_location_free(&loc);
	}
	struct fake f = { ENV("HOME=/h", "HUGGING_FACE_HUB_TOKEN=hf_secret", "TRANSFORMERS_CACHE=/t",
			      "HF_TOKEN_PATH=~/tok") };
	struct hf_env env = { fake_getenv, fake_home_of, &f };
	struct hf_location loc;
	hf_location_resolve(&env, no_token_file, &loc);
	assert_string_equal(loc.token_source, "HUGGING_FACE_HUB_TOKEN");
	assert_string_equal(loc.token_path, "/h/tok");
	assert_string_equal(loc.deprecated[0], "TRANSFORMERS_CACHE");
	assert_null(loc.deprecated[1]);
	assert_string_equal(loc.xet_cache, "/h/.cache/huggingface/xet");
	hf_location_free(&loc);
}

/* constants.py and utils/_auth.py of huggingface_hub (commit
 * ee0a4510f4bc15e26cb722be2efc2bdb01383ca0): the legacy assets variable, the
 * unexpanded xet cache, staging mode, the endpoint, and token cleaning. */
static enum hf_token_file token_file_yes(void *arg, const char *path, char *why, size_t why_size)
{
	(void)arg;
	(void)path;
	(void)why;
	(void)why_size;
	return HF_TOKEN_FILE_TOKEN;
}

static void test_related_paths_and_endpoint(void **state)
{
	(void)state;
	struct {
		const char *const *vars;
		const char *assets, *xet, *token_path, *endpoint, *endpoint_source;
	} cases[] = {
		{ ENV("HOME=/h"), "/h/.cache/huggingface/assets", "/h/.cache/huggingface/xet",
		  "/h/.cache/huggingface/token", "https://huggingface.co", "default" },
		{ ENV("HOME=/h", "HUGGINGFACE_ASSETS_CACHE=~/old"), "/h/old", "/h/.cache/huggingface/xet",
		  "/h/.cache/huggingface/token", "https://huggingface.co", "default" },
		{ ENV("HOME=/h", "HF_ASSETS_CACHE=/new", "HUGGINGFACE_ASSETS_CACHE=/old"), "/new",
		  "/h/.cache/huggingface/xet", "/h/.cache/huggingface/token", "https://huggingface.co", "default" },
		{ ENV("HOME=/h", "HF_XET_CACHE=~/x/$HOME"), "/h/.cache/huggingface/assets", "~/x/$HOME",
		  "/h/.cache/huggingface/token", "https://huggingface.co", "default" },
		{ ENV("HOME=/h", "HF_ENDPOINT=http://hub.local:8080//"), "/h/.cache/huggingface/assets",
		  "/h/.cache/huggingface/xet", "/h/.cache/huggingface/token", "http://hub.local:8080", "HF_ENDPOINT" },
		{ ENV("HOME=/h", "HF_ENDPOINT="), "/h/.cache/huggingface/assets", "/h/.cache/huggingface/xet",
		  "/h/.cache/huggingface/token", "", "HF_ENDPOINT" }, /* set to empty counts as set */
		{ ENV("HOME=/h", "HUGGINGFACE_CO_STAGING=yes", "HF_ENDPOINT=http://x", "HF_TOKEN_PATH=/t"),
		  "/h/.cache/huggingface/assets", "/h/.cache/huggingface/xet", "/h/.cache/huggingface_staging/token",
		  "https://hub-ci.huggingface.co", "HUGGINGFACE_CO_STAGING" },
		{ ENV("HOME=/h", "HUGGINGFACE_CO_STAGING=0", "HF_TOKEN_PATH=$HOME/t"), "/h/.cache/huggingface/assets",
		  "/h/.cache/huggingface/xet", "/h/t", "https://huggingface.co", "default" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct fake f = { cases[i].vars };
		struct hf_env env = { fake_getenv, fake_home_of, &f };
		struct hf_location loc;
		hf_location_resolve(&env, no_token_file, &loc);
		if (strcmp(loc.assets_cache, cases[i].assets) || strcmp(loc.xet_cache, cases[i].xet) ||
		    strcmp(loc.token_path, cases[i].token_path) || strcmp(loc.endpoint, cases[i].endpoint) ||
		    strcmp(loc.endpoint_source, cases[i].endpoint_source))
			fail_msg("case %zu: assets %s xet %s token %s endpoint %s (%s)", i, loc.assets_cache,
				 loc.xet_cache, loc.token_path, loc.endpoint, loc.endpoint_source);
		if (strcmp(loc.hub_cache, "/h/.cache/huggingface/hub") != 0) /* staging leaves HF_HUB_CACHE alone */
			fail_msg("case %zu: hub %s", i, loc.hub_cache);
		hf_location_free(&loc);
	}
}

static void test_token_cleaning(void **state)
{
	(void)state;
	struct {
		const char *raw, *clean;
	} cases[] = {
		{ "hf_abc", "hf_abc" },
		{ "  hf_abc\n", "hf_abc" },
		{ "hf_\r\nabc", "hf_abc" },
		{ " \t\n ", NULL },
		{ "", NULL },
		{ "\x1fhf\x0b", "hf" },
		{ "\xc2\xa0hf\xe3\x80\x80", "hf" },
		{ "a b", "a b" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = hf_clean_token(cases[i].raw, strlen(cases[i].raw));
		if (cases[i].clean ? !got || strcmp(got, cases[i].clean) : got != NULL)
			fail_msg("clean case %zu: '%s'", i, got ? got : "(none)");
		free(got);
	}
	/* HF_TOKEN or HUGGING_FACE_HUB_TOKEN, cleaned; blank means the file */
	struct {
		const char *const *vars;
		bool file_has_token;
		const char *source;
	} src[] = {
		{ ENV("HF_TOKEN=hf_x"), false, "HF_TOKEN" },
		{ ENV("HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=hf_y"), false, "HUGGING_FACE_HUB_TOKEN" },
		{ ENV("HF_TOKEN=  ", "HUGGING_FACE_HUB_TOKEN=hf_y"), false,
		  NULL }, /* blank HF_TOKEN wins, then is none */
		{ ENV("HF_TOKEN=  ", "HUGGING_FACE_HUB_TOKEN=hf_y"), true, "the token file" },
		{ ENV("HUGGING_FACE_HUB_TOKEN=\n"), true, "the token file" },
		{ ENV("X=1"), false, NULL },
	};
	for (size_t i = 0; i < sizeof(src) / sizeof(*src); i++) {
		struct fake f = { src[i].vars };
		struct hf_env env = { fake_getenv, fake_home_of, &f };
		struct hf_location loc;
		hf_location_resolve(&env, src[i].file_has_token ? token_file_yes : no_token_file, &loc);
		if (src[i].source ? !loc.token_source || strcmp(loc.token_source, src[i].source)
				  : loc.token_source != NULL)
			fail_msg("token case %zu: %s", i, loc.token_source ? loc.token_source : "(none)");
		hf_location_free(&loc);
	}
}

static void test_normalize_and_join(void **state)
{
	(void)state;
	struct {
		const char *in, *out;
	} cases[] = {
		{ "/a//b/./c/", "/a/b/c" }, { "/a/b/../c", "/a/c" }, { "/..", "/" }, { "/", "/" }, { "//x", "/x" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = hf_path_normalize(cases[i].in);
		assert_string_equal(got, cases[i].out);
		free(got);
	}
	char *j = hf_path_join("", "hub");
	assert_string_equal(j, "hub");
	free(j);
	j = hf_path_join("/a/", "hub");
	assert_string_equal(j, "/a/hub");
	free(j);
	j = hf_path_join("/a", "/abs");
	assert_string_equal(j, "/abs");
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hub_cache_table),
		cmocka_unit_test(test_expanduser),
		cmocka_unit_test(test_offline_and_token),
		cmocka_unit_test(test_normalize_and_join),
		cmocka_unit_test(test_related_paths_and_endpoint),
		cmocka_unit_test(test_token_cleaning),
	};
	return cmocka_run_group_tests_name("hf_location", tests, NULL, NULL);
}
