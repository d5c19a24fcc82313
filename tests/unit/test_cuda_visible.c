/* CUDA_VISIBLE_DEVICES (src/vendor/cuda_visible.c) against what the real
 * driver showed under each value: tests/vectors/cuda-visible-devices.tsv,
 * recorded by tests/device/cuda_visible.py on a GPU host. Run from the
 * repository root (make test-unit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cuda_visible.h"

#define VECTORS "tests/vectors/cuda-visible-devices.tsv"

/* any UUIDs serve: the vectors name GPUs by placeholder */
static const char *const uuids[] = { "GPU-686087ce-283f-738c-4c42-2fe82422b5be",
				     "GPU-0b5a0c11-93d4-4c8e-9f1e-5a7d2c3b4e6f" };

/* {uuid0}, {UUID0}, {hex0}, {uuid0:N}: tests/device/cuda_visible.py */
static void expand(const char *t, char *out, size_t size)
{
	size_t o = 0;
	while (*t && o + 1 < size) {
		int gpu, cut = -1, used = 0;
		char kind[5];
		if (sscanf(t, "{%4[a-zA-Z]%d:%d}%n", kind, &gpu, &cut, &used) == 3 && used) {
		} else if (cut = -1, used = 0, sscanf(t, "{%4[a-zA-Z]%d}%n", kind, &gpu, &used) == 2 && used) {
		} else {
			out[o++] = *t++;
			continue;
		}
		assert_true(gpu >= 0 && gpu < 2);
		char u[64];
		snprintf(u, sizeof(u), "%s", strcmp(kind, "hex") == 0 ? uuids[gpu] + 4 : uuids[gpu]);
		if (strcmp(kind, "UUID") == 0)
			for (char *c = u + 4; *c; c++)
				*c = (char)(*c >= 'a' && *c <= 'f' ? *c - 32 : *c);
		if (cut >= 0 && (size_t)cut < strlen(u))
			u[cut] = '\0';
		o += (size_t)snprintf(out + o, size - o, "%s", u);
		t += used;
	}
	out[o < size ? o : size - 1] = '\0';
}

/* "\"0,1\"" -> 0,1 (the vectors' JSON strings hold no escapes but \") */
static void unquote(const char *q, size_t n, char *out, size_t size)
{
	assert_true(n >= 2 && q[0] == '"' && q[n - 1] == '"');
	size_t o = 0;
	for (size_t i = 1; i + 1 < n && o + 1 < size; i++) {
		if (q[i] == '\\')
			i++;
		out[o++] = q[i];
	}
	out[o] = '\0';
}

static void answer_text(const struct cuda_visible *p, char *out, size_t size)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t k = 0; k < p->count; k++)
		o += (size_t)snprintf(out + o, size - o, "%s%d", k ? "," : "", p->gpu[k]);
	if (!p->count)
		snprintf(out, size, "none");
}

static void driver_vectors(void **state)
{
	(void)state;
	FILE *f = fopen(VECTORS, "r");
	assert_non_null(f);
	char line[1024];
	size_t gpus = 0, cases = 0, wrong = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# gpus: %zu", &gpus) == 1 || line[0] == '#')
			continue;
		char *tab = strchr(line, '\t'), *tab2 = tab ? strchr(tab + 1, '\t') : NULL;
		assert_non_null(tab2);
		char tmpl[512], value[512], want[64], got[256];
		unquote(line, (size_t)(tab - line), tmpl, sizeof(tmpl));
		snprintf(want, sizeof(want), "%.*s", (int)(tab2 - tab - 1), tab + 1);
		expand(tmpl, value, sizeof(value));
		struct cuda_visible p;
		cuda_visible_parse(value, uuids, gpus, &p);
		answer_text(&p, got, sizeof(got));
		if (strcmp(got, want) != 0) {
			print_error("CUDA_VISIBLE_DEVICES='%s' (%s) on %zu GPU(s): driver shows %s, parser %s\n", value,
				    tmpl, gpus, want, got);
			wrong++;
		}
		cases++;
	}
	fclose(f);
	assert_int_equal(gpus, 1);
	print_message("cuda visible devices: %zu driver vectors, %zu disagree\n", cases, wrong);
	assert_true(cases >= 45); /* the file is there and whole: an empty one passes nothing */
	assert_int_equal(wrong, 0);
}

/* Without UUIDs (no /proc/driver/nvidia): each UUID entry counts once. */
static void unknown_uuids_count_entries(void **state)
{
	(void)state;
	struct cuda_visible p;
	cuda_visible_parse("GPU-aaaa,GPU-bbbb,GPU-cccc", NULL, 2, &p);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.gpu[0], -1);
	assert_string_not_equal(p.stop, "");
	cuda_visible_parse("GPU-aaaa,GPU-aaaa", NULL, 4, &p);
	assert_true(p.duplicate);
	assert_int_equal(p.count, 0);
}

/* The documented corner ("0,2,-1,1" shows 0 and 2) and N on N GPUs. */
static void several_gpus(void **state)
{
	(void)state;
	const char *three[] = { uuids[0], uuids[1], "GPU-11111111-2222-3333-4444-555555555555" };
	struct cuda_visible p;
	cuda_visible_parse("0,2,-1,1", three, 3, &p);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.gpu[0], 0);
	assert_int_equal(p.gpu[1], 2);
	cuda_visible_parse("3", three, 3, &p);
	assert_int_equal(p.count, 0);
	cuda_visible_parse("2", three, 3, &p);
	assert_int_equal(p.count, 1);
	cuda_visible_parse("GPU-0B5A,0", three, 3, &p);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.gpu[0], 1);
	/* "GPU-" with digits two GPUs share names neither */
	const char *twins[] = { "GPU-abcd0000-0000-0000-0000-000000000000",
				"GPU-abcd1111-0000-0000-0000-000000000000" };
	cuda_visible_parse("GPU-abcd", twins, 2, &p);
	assert_int_equal(p.count, 0);
	cuda_visible_parse("GPU-abcd1", twins, 2, &p);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.gpu[0], 1);
}

/* A MIG-<UUID> that is no GPU's names a MIG instance, whose UUID the
 * driver's /proc files do not list: counted, not the end of the list (the
 * recorded vectors come from a GPU without MIG instances). */
static void mig_instance_counted(void **state)
{
	(void)state;
	struct cuda_visible p;
	cuda_visible_parse("MIG-5c89a3a0-1234-5678-9abc-def012345678", uuids, 2, &p);
	assert_true(p.mig);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.gpu[0], -1);
	assert_string_equal(p.stop, "");
	/* case matters: "gpu-..." is no UUID list but an index that is not one */
	cuda_visible_parse("gpu-686087ce", uuids, 2, &p);
	assert_false(p.by_uuid);
	assert_int_equal(p.count, 0);
	assert_non_null(strstr(p.stop, "is not a device index"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_vectors),
		cmocka_unit_test(unknown_uuids_count_entries),
		cmocka_unit_test(several_gpus),
		cmocka_unit_test(mig_instance_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
