/* `gpugate hf fetch`, `gpugate stack` and `gpugate bundle` run in a separate
 * executable, gpugate-provision, because libcurl and libarchive cost about
 * 4 ms per process start (measured with hyperfine, tests/bench/RESULTS.md):
 * the health check must
 * not pay for them. `gpugate serve` runs in gpugate-serve for the same
 * reason (libmicrohttpd). This file finds those executables and exec()s them. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "lib/util.h"

#ifndef GPUGATE_LIBEXECDIR
#define GPUGATE_LIBEXECDIR "/usr/local/libexec/gpugate"
#endif

static bool is_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Beside the running binary (the build folder), then ../libexec/gpugate
 * (an installed tree moved as a whole), then the configured PREFIX. */
static char *find_helper(const char *self, const char *name)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		char *beside = xasprintf("%s/%s", dir, name);
		if (is_executable(beside))
			return beside;
		free(beside);
		char *libexec = xasprintf("%s/../libexec/gpugate/%s", dir, name);
		if (is_executable(libexec))
			return libexec;
		free(libexec);
	}
	char *configured = xasprintf(GPUGATE_LIBEXECDIR "/%s", name);
	if (is_executable(configured))
		return configured;
	free(configured);
	return NULL;
}

/* argv[0] is the subcommand's own name; the rest are its arguments. */
static int exec_helper(const char *name, const char *verb, int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "gpugate: /proc/self/exe: %s\n", n < 0 ? strerror(errno) : "empty link");
		return EXIT_USAGE;
	}
	self[n] = '\0';
	char *prov = find_helper(self, name);
	if (!prov) {
		fprintf(stderr,
			"gpugate: %s needs %s, which is neither beside %s nor in " GPUGATE_LIBEXECDIR
			" (run 'make install', or 'make' in the source tree)\n",
			verb, name, self);
		return EXIT_USAGE;
	}
	char **args = xcalloc((size_t)argc + 5, sizeof(*args));
	size_t k = 0;
	args[k++] = prov;
	args[k++] = "--gpugate";
	args[k++] = self;
	args[k++] = (char *)verb;
	for (int i = 1; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	fflush(NULL);
	execv(prov, args);
	fprintf(stderr, "gpugate: cannot run %s: %s\n", prov, strerror(errno));
	free(args);
	free(prov);
	return EXIT_USAGE;
}

int cmd_hf_fetch(int argc, char **argv)
{
	return exec_helper("gpugate-provision", "hf-fetch", argc, argv);
}

int cmd_stack(int argc, char **argv)
{
	return exec_helper("gpugate-provision", "stack", argc, argv);
}

int cmd_bundle(int argc, char **argv)
{
	return exec_helper("gpugate-provision", "bundle", argc, argv);
}

int cmd_serve(int argc, char **argv)
{
	return exec_helper("gpugate-serve", "serve", argc, argv);
}
