/* Runs the devices group (prepare, every check, release) repeatedly in one
 * process against ROOT and prints the median: the group's cost once code,
 * heap and caches are warm, as in a process that checks more than once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "registry.h"

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 3;
	struct spec spec;
	struct spec_error err;
	static const char yaml[] = "devices:\n  by_path: require\n";
	if (spec_load_buffer(&spec, &registry_schema, "bench", yaml, sizeof(yaml) - 1, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 3;
	}
	const struct check_group *devices = NULL;
	for (const struct check_group *const *g = registry_groups; *g; g++)
		if (strcmp((*g)->name, "devices") == 0)
			devices = *g;
	if (!devices)
		return 3;
	struct context ctx = {
		.root = argv[1], .spec = &spec, .profile = "ci", .env = environ, .deadline = monotonic_seconds() + 60
	};
	int runs = atoi(argv[2]);
	double *ms = xcalloc((size_t)runs, sizeof(*ms));
	int failed = 0;
	for (int i = 0; i < runs; i++) {
		double t0 = monotonic_seconds();
		void *state = devices->prepare(&ctx);
		for (const struct check_def *c = devices->checks; c->id; c++) {
			struct result r = { .id = c->id };
			c->run(&ctx, state, &r);
			failed |= r.status == STATUS_FAIL;
			result_release(&r);
		}
		devices->release(state);
		ms[i] = (monotonic_seconds() - t0) * 1e3;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp);
	printf("%.3f %.3f\n", ms[runs / 2], ms[0]);
	free(ms);
	spec_free(&spec);
	return failed;
}
