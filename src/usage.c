/* The one way every subcommand reports a usage error: one line, the hint, 3. */
#include <stdarg.h>
#include <errno.h>
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
