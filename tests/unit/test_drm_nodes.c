/* The sysfs GPU reader against trees built here: the kernel's layout (class
 * links into devices/, uevent, dev/char links), the simpler layout with
 * attribute files, and hostile entries (a FIFO, garbage, connectors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/drm_nodes.h"
#include "lib/util.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (text) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	} else {
		mkdir(path, 0755);
	}
}

static void link_at(const char *target, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", path + strlen(root) + 1);
	put(dir, NULL);
	*slash = '/';
	assert_int_equal(symlink(target, path), 0);
}

/* A GPU as the kernel shows it. */
static void kernel_gpu(const char *bdf, const char *driver, const char *id, unsigned card, unsigned render)
{
	char rel[512], text[512], target[512];
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/uevent", bdf);
	snprintf(text, sizeof(text), "%s%s%sPCI_CLASS=38000\nPCI_ID=%s\nPCI_SLOT_NAME=%s\n", driver ? "DRIVER=" : "",
		 driver ? driver : "", driver ? "\n" : "", id, bdf);
	put(rel, text);
	const char *names[2] = { "card", "renderD" };
	unsigned nums[2] = { card, render };
	for (int i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "sys/class/drm/%s%u", names[i], nums[i]);
		snprintf(target, sizeof(target), "../../devices/pci0000:00/%s/drm/%s%u", bdf, names[i], nums[i]);
		link_at(target, rel);
		snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/drm/%s%u/device", bdf, names[i], nums[i]);
		char up[64];
		snprintf(up, sizeof(up), "../../../%s", bdf);
		link_at(up, rel);
		snprintf(rel, sizeof(rel), "sys/dev/char/226:%u", nums[i]);
		link_at(target, rel);
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/gpugate-drm-XXXXXX");
	assert_non_null(mkdtemp(root));
	put("sys/class/drm", NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void bdf_shapes(void **state)
{
	(void)state;
	assert_true(pci_bdf_valid("0000:03:00.0"));
	assert_true(pci_bdf_valid("10000:00:00.0") == false);
	assert_false(pci_bdf_valid("0000:03:00.8"));
	assert_false(pci_bdf_valid("0000:03:00"));
	assert_false(pci_bdf_valid("0000:3:00.0"));
	assert_false(pci_bdf_valid("0000:03:00.0 "));
	assert_false(pci_bdf_valid("0000:0G:00.0"));
	assert_false(pci_bdf_valid("vgem"));
}

static void kernel_layout_sorted_by_address(void **state)
{
	(void)state;
	kernel_gpu("0000:c3:00.0", "xe", "8086:E20B", 1, 129);
	kernel_gpu("0000:03:00.0", "i915", "8086:56C0", 0, 128);
	put("sys/class/drm/card0-DP-1/status", "disconnected\n"); /* a connector, not a node */
	put("sys/class/drm/version", "drm 1.1.0 20060810\n");
	struct drm_scan s;
	drm_scan(root, &s);
	assert_int_equal(s.error, 0);
	for (size_t i = 0; i < s.problem_count; i++)
		print_message("problem: %s\n", s.problems[i]);
	assert_int_equal(s.problem_count, 0);
	assert_int_equal(s.count, 2);
	assert_string_equal(s.gpus[0].bdf, "0000:03:00.0");
	assert_int_equal(s.gpus[0].vendor, 0x8086);
	assert_int_equal(s.gpus[0].device, 0x56c0);
	assert_int_equal(s.gpus[0].class, 0x038000);
	assert_string_equal(s.gpus[0].driver, "i915");
	assert_string_equal(s.gpus[0].render.name, "renderD128");
	assert_int_equal(s.gpus[0].render.minor, 128);
	assert_int_equal(s.gpus[0].render.char_link, 0);
	assert_string_equal(s.gpus[1].driver, "xe");
	assert_string_equal(s.gpus[1].card.name, "card1");
	assert_int_equal(s.gpus[1].card.minor, 1);
	drm_scan_free(&s);
}

static void unbound_gpu_and_wrong_char_link(void **state)
{
	(void)state;
	kernel_gpu("0000:03:00.0", NULL, "8086:56C0", 0, 128);
	char path[512];
	snprintf(path, sizeof(path), "%s/sys/dev/char/226:128", root);
	unlink(path);
	assert_int_equal(symlink("../../devices/pci0000:00/0000:99:00.0/drm/renderD128", path), 0);
	struct drm_scan s;
	drm_scan(root, &s);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.gpus[0].driver, "");
	assert_int_equal(s.gpus[0].render.char_link, 1);
	assert_non_null(strstr(s.gpus[0].render.char_target, "0000:99:00.0"));
	assert_int_equal(s.gpus[0].card.char_link, 0);
	drm_scan_free(&s);
}

static void folder_layout_with_attribute_files(void **state)
{
	(void)state;
	put("sys/devices/pci0000:00/0000:03:00.0/vendor", "0x8086\n");
	put("sys/devices/pci0000:00/0000:03:00.0/device", "0x0bd5\n");
	put("sys/devices/pci0000:00/0000:03:00.0/class", "0x038000\n");
	put("sys/bus/pci/drivers/i915", NULL);
	link_at("../../../bus/pci/drivers/i915", "sys/devices/pci0000:00/0000:03:00.0/driver");
	put("sys/class/drm/renderD130/dev", "226:130\n");
	link_at("../../../devices/pci0000:00/0000:03:00.0", "sys/class/drm/renderD130/device");
	put("sys/class/drm/card7/dev", "226:7\n"); /* a virtual device: no device link */
	struct drm_scan s;
	drm_scan(root, &s);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.gpus[0].device, 0x0bd5);
	assert_string_equal(s.gpus[0].driver, "i915");
	assert_int_equal(s.gpus[0].render.minor, 130);
	assert_int_equal(s.gpus[0].render.char_link, -ENOENT); /* no sys/dev/char here */
	assert_string_equal(s.gpus[0].card.name, "");
	drm_scan_free(&s);
}

static void hostile_attributes_are_problems_not_hangs(void **state)
{
	(void)state;
	char path[512];
	put("sys/devices/pci0000:00/0000:03:00.0/device", "0x56c0\n");
	put("sys/devices/pci0000:00/0000:03:00.0/class", "0x030000\n");
	put("sys/devices/pci0000:00/0000:03:00.0", NULL);
	snprintf(path, sizeof(path), "%s/sys/devices/pci0000:00/0000:03:00.0/vendor", root);
	assert_int_equal(mkfifo(path, 0644), 0); /* nobody writes it: a plain read would block forever */
	put("sys/class/drm/renderD128", NULL);
	link_at("../../../devices/pci0000:00/0000:03:00.0", "sys/class/drm/renderD128/device");
	put("sys/devices/pci0000:00/0000:04:00.0/uevent", "PCI_ID=zzzz\nPCI_CLASS=30000\n");
	put("sys/class/drm/renderD129", NULL);
	link_at("../../../devices/pci0000:00/0000:04:00.0", "sys/class/drm/renderD129/device");
	struct drm_scan s;
	drm_scan(root, &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(s.problem_count, 2);
	bool fifo = false, garbage = false;
	for (size_t i = 0; i < s.problem_count; i++) {
		fifo |= strstr(s.problems[i], "vendor: cannot read") !=
			NULL; /* a FIFO is refused at open (lib/safe_io.h) */
		garbage |= strstr(s.problems[i], "no PCI_ID line") != NULL;
	}
	assert_true(fifo);
	assert_true(garbage);
	drm_scan_free(&s);
}

static void missing_class_folder(void **state)
{
	(void)state;
	struct drm_scan s;
	drm_scan("/nonexistent-gpugate-root", &s);
	assert_int_equal(s.error, ENOENT);
	assert_int_equal(s.count, 0);
	assert_string_equal(s.class_dir, "/nonexistent-gpugate-root/sys/class/drm");
	drm_scan_free(&s);
}

static void tiles(void **state)
{
	(void)state;
	kernel_gpu("0000:03:00.0", "i915", "8086:0BD5", 0, 128);
	put("sys/devices/pci0000:00/0000:03:00.0/drm/card0/gt/gt0", NULL);
	put("sys/devices/pci0000:00/0000:03:00.0/drm/card0/gt/gt1", NULL);
	struct drm_scan s;
	drm_scan(root, &s);
	assert_int_equal(drm_gpu_tiles(root, &s.gpus[0]), 2);
	drm_scan_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bdf_shapes),
		cmocka_unit_test_setup_teardown(kernel_layout_sorted_by_address, setup, teardown),
		cmocka_unit_test_setup_teardown(unbound_gpu_and_wrong_char_link, setup, teardown),
		cmocka_unit_test_setup_teardown(folder_layout_with_attribute_files, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_attributes_are_problems_not_hangs, setup, teardown),
		cmocka_unit_test(missing_class_folder),
		cmocka_unit_test_setup_teardown(tiles, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
