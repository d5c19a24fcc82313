#include "context.h"

#include <string.h>
#include <unistd.h>

#include "lib/util.h"

const char *ctx_getenv(const struct context *ctx, const char *name)
{
	return env_lookup(ctx->env, name);
}

char *ctx_path(const struct context *ctx, const char *abs_path)
{
	return root_path(ctx->root, abs_path);
}

double ctx_remaining(const struct context *ctx)
{
	double left = ctx->deadline - monotonic_seconds();
	return left > 0 ? left : 0;
}

bool ctx_is_healthcheck(const struct context *ctx)
{
	return ctx->profile && strcmp(ctx->profile, "healthcheck") == 0;
}

const char *ctx_self_exe(const struct context *ctx)
{
	static char self[4096];
	if (!self[0]) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
	}
	return self[0] ? self : ctx->argv0;
}
