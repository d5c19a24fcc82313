#include "context.h"

#include <string.h>

#include "lib/util.h"

const char *ctx_getenv(const struct context *ctx, const char *name)
{
	size_t n = strlen(name);
	for (char **e = ctx->env; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
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
