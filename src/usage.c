/* The one way every subcommand reports a usage error: one line, the hint, 3. */
#include <stdarg.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "lib/util.h"

/* The help that covers the command a message names by its first words
 * ("diff: ...", "stack fetch: ...", "spec freeze: ..."): the main --help
 * lists none of their options. */
static const char *help_for(const char *msg)
{
	static const struct {
		const char *prefix, *help;
	} topics[] = {
		{ "spec freeze", "gpugate spec freeze --help" },
		{ "spec", "gpugate spec freeze --help" },
		{ "hf fetch", "gpugate hf fetch --help" },
		{ "hf verify", "gpugate hf verify --help" },
		{ "hf scan", "gpugate hf scan --help" },
		{ "hf where", "gpugate hf where --help" },
		{ "stack", "gpugate stack --help" },
		{ "hf", "gpugate hf --help" },
		{ "bundle", "gpugate bundle --help" },
		{ "diff", "gpugate diff --help" },
		{ "serve", "gpugate serve --help" },
		{ "list", "gpugate list --help" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(topics); i++) {
		size_t n = strlen(topics[i].prefix);
		if (strncmp(msg, topics[i].prefix, n) == 0 && (msg[n] == ':' || msg[n] == ' '))
			return topics[i].help;
	}
	return "gpugate --help";
}

int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpugate: %s\nTry '%s' for usage.\n", n < 0 ? fmt : msg,
		n < 0 ? "gpugate --help" : help_for(msg));
	free(msg);
	return EXIT_USAGE;
}

/* The long option named by the n bytes at name: exactly, or by a prefix that
 * only one option has (getopt_long's rule); NULL when none or several do. */
static const struct option *long_named(const struct option *longopts, const char *name, size_t n, bool *several)
{
	const struct option *found = NULL;
	*several = false;
	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, name, n) != 0)
			continue;
		if (strlen(o->name) == n) {
			*several = false;
			return o;
		}
		*several = found != NULL;
		found = o;
	}
	return *several ? NULL : found;
}

int usage_bad_option(const char *command, char *const *argv, const char *optstring, const struct option *longopts)
{
	const char *sep = command ? ": " : ""; /* NULL: gpugate's own options */
	command = command ? command : "";
	/* a long option always moves optind past itself: it is argv[optind - 1]
	 * when that is one and the error was its own (optopt 0 or its val) */
	const char *last = argv[optind - 1];
	if (strncmp(last, "--", 2) == 0 && last[2]) {
		const char *name = last + 2;
		int n = (int)strcspn(name, "="); /* the value is not repeated: it may be a secret */
		bool several;
		const struct option *o = long_named(longopts, name, (size_t)n, &several);
		if (several && !optopt)
			return usage_error("%s%soption '--%.*s' is ambiguous", command, sep, n, name);
		if (!o && !optopt)
			return usage_error("%s%sunknown option '--%.*s'", command, sep, n, name);
		if (o && o->val == optopt)
			return usage_error("%s%soption '--%.*s' %s", command, sep, n, name,
					   name[n] == '=' ? "takes no argument" : "needs an argument");
	}
	if (!optopt) /* not reached with getopt_long: its unknown long options start with "--" */
		return usage_error("%s%sunknown option '%s'", command, sep, last);
	/* a short one: optopt is its letter, wherever in its cluster it stood */
	const char *spec = optopt && optopt != ':' ? strchr(optstring, optopt) : NULL;
	if (spec && spec[1] == ':')
		return usage_error("%s%soption '-%c' needs an argument", command, sep, optopt);
	return usage_error("%s%sunknown option '-%c'", command, sep, optopt);
}

int command_root_option(const char *command, const char *dir)
{
	/* the command's name first, so that the hint is its own --help */
	const char *sep = command ? ": " : "";
	command = command ? command : "";
	struct stat st;
	if (stat(dir, &st) < 0)
		return usage_error("%s%s--root %s: %s", command, sep, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return usage_error("%s%s--root %s: not a directory", command, sep, dir);
	return 0;
}

int check_root_option(const char *dir)
{
	return command_root_option(NULL, dir);
}
