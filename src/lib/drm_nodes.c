#include "drm_nodes.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirents.h"
#include "util.h"

bool pci_bdf_valid(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.x";
	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		char c = s[i];
		if (shape[i] == 'x' ? !(isdigit((unsigned char)c) || (c >= 'a' && c <= 'f')) : c != shape[i])
			return false;
	}
	return s[sizeof(shape) - 1] == '\0' && s[11] >= '0' && s[11] <= '7';
}

/* "0x1234" -> 0x1234; -1 for anything else. */
static long parse_hex_attr(const char *s)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !isxdigit((unsigned char)s[2]))
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s + 2, &end, 16);
	if (errno || *end || v > 0xffffff)
		return -1;
	return (long)v;
}

static void add_problem(struct drm_scan *scan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_problem(struct drm_scan *scan, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	scan->problems = xrealloc(scan->problems, (scan->problem_count + 1) * sizeof(*scan->problems));
	scan->problems[scan->problem_count++] = line;
}

/* "cardN" or "renderDN" with N decimal; connectors ("card0-DP-1") and
 * "version" are not nodes. */
static bool node_name(const char *name, bool *render, unsigned *number)
{
	const char *digits;
	if (strncmp(name, "renderD", 7) == 0) {
		digits = name + 7;
		*render = true;
	} else if (strncmp(name, "card", 4) == 0) {
		digits = name + 4;
		*render = false;
	} else {
		return false;
	}
	if (!*digits || strlen(name) >= sizeof(((struct drm_node *)0)->name))
		return false;
	unsigned long v = 0;
	for (const char *p = digits; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 0xfffff)
			return false;
	}
	*number = (unsigned)v;
	return true;
}

static struct drm_gpu *find_gpu(struct drm_scan *scan, const char *bdf)
{
	for (size_t i = 0; i < scan->count; i++)
		if (strcmp(scan->gpus[i].bdf, bdf) == 0)
			return &scan->gpus[i];
	return NULL;
}

/* Reads ROOT/sys/class/drm/REL: REL goes through the class entry's link and
 * the device link ("../../devices/pci0000:00/..."), which are followed inside
 * the root as the kernel follows them (read_attr_in_root), never relative to
 * the class folder's descriptor, where a link with one ".." too many, or an
 * absolute one, would read the host's sysfs. */
static int read_in_class(const char *root, const char *rel, char *buf, size_t size)
{
	static const char class[] = "/sys/class/drm/";
	char path[192];
	size_t n = strnlen(rel, sizeof(path) - sizeof(class));
	memcpy(path, class, sizeof(class) - 1);
	memcpy(path + sizeof(class) - 1, rel, n);
	path[sizeof(class) - 1 + n] = '\0';
	return read_attr_in_root(root, path, buf, size);
}

/* The identity from the PCI device's uevent (one read: "DRIVER=xe",
 * "PCI_CLASS=30000", "PCI_ID=8086:56C0"; no DRIVER line when none is bound).
 * 1 when read, 0 when there is no uevent file, -1 after recording a problem. */
static int read_pci_uevent(struct drm_scan *scan, const char *root, const char *entry, struct drm_gpu *g)
{
	char path[128], buf[1024];
	size_t n = strnlen(entry, sizeof(path) - sizeof("/device/uevent")); /* a node name: under 32 bytes */
	memcpy(path, entry, n);
	memcpy(path + n, "/device/uevent", sizeof("/device/uevent"));
	int err = read_in_class(root, path, buf, sizeof(buf));
	if (err == -ENOENT)
		return 0;
	if (err) {
		add_problem(scan, "%s/%s: cannot read: %s", scan->class_dir, path, strerror(-err));
		return -1;
	}
	bool have_id = false, have_class = false;
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *end;
		if (strncmp(line, "PCI_ID=", 7) == 0) {
			unsigned long v = strtoul(line + 7, &end, 16);
			unsigned long d = *end == ':' ? strtoul(end + 1, &end, 16) : 0x10000;
			if (!*end && v <= 0xffff && d <= 0xffff) {
				g->vendor = (unsigned)v;
				g->device = (unsigned)d;
				have_id = true;
			}
		} else if (strncmp(line, "PCI_CLASS=", 10) == 0) {
			unsigned long c = strtoul(line + 10, &end, 16);
			if (!*end && end != line + 10 && c <= 0xffffff) {
				g->class = (unsigned)c;
				have_class = true;
			}
		} else if (strncmp(line, "DRIVER=", 7) == 0) {
			size_t len = strnlen(line + 7, sizeof(g->driver) - 1);
			memcpy(g->driver, line + 7, len);
			g->driver[len] = '\0';
			text_sanitize(g->driver);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!have_id || !have_class) {
		add_problem(scan, "%s/%s: no %s line", scan->class_dir, path, have_id ? "PCI_CLASS" : "PCI_ID");
		return -1;
	}
	return 1;
}

/* The same from the separate attribute files and the driver link, for a
 * tree without uevent files. 0, or -1 after recording a problem. */
static int read_pci_attrs(struct drm_scan *scan, const char *root, const char *entry, struct drm_gpu *g)
{
	char path[128], full[160];
	snprintf(path, sizeof(path), "%s/device", entry);
	snprintf(full, sizeof(full), "/sys/class/drm/%s", path);
	int dfd = root_open(root, full, O_PATH | O_DIRECTORY);
	if (dfd < 0) {
		add_problem(scan, "%s/%s: cannot open: %s", scan->class_dir, path, strerror(-dfd));
		return -1;
	}
	static const char *const attrs[] = { "vendor", "device", "class" };
	unsigned *fields[] = { &g->vendor, &g->device, &g->class };
	int rc = 0;
	for (size_t i = 0; i < ARRAY_SIZE(attrs) && rc == 0; i++) {
		char buf[64], attr[160];
		snprintf(attr, sizeof(attr), "%s/%s", path, attrs[i]);
		int err = read_in_class(root, attr, buf, sizeof(buf));
		long v = err ? -1 : parse_hex_attr(buf);
		if (err) {
			add_problem(scan, "%s/%s/%s: cannot read: %s", scan->class_dir, path, attrs[i], strerror(-err));
			rc = -1;
		} else if (v < 0) {
			text_sanitize(buf);
			add_problem(scan, "%s/%s/%s: '%s' is not a hex id such as 0x1234", scan->class_dir, path,
				    attrs[i], buf);
			rc = -1;
		} else {
			*fields[i] = (unsigned)v;
		}
	}
	char target[512];
	ssize_t n = rc == 0 ? readlinkat(dfd, "driver", target, sizeof(target) - 1) : -1;
	if (n > 0) {
		target[n] = '\0';
		const char *base = strrchr(target, '/');
		base = base ? base + 1 : target;
		size_t len = strnlen(base, sizeof(g->driver) - 1);
		memcpy(g->driver, base, len);
		g->driver[len] = '\0';
		text_sanitize(g->driver);
	}
	close(dfd);
	return rc;
}

/* Reads ENTRY/dev ("226:128") into node: used when /sys/dev/char does not
 * confirm the numbers the node's name carries. */
static void read_dev_numbers(struct drm_scan *scan, const char *root, const char *entry, struct drm_node *node)
{
	char path[128], buf[64];
	snprintf(path, sizeof(path), "%s/dev", entry);
	int err = read_in_class(root, path, buf, sizeof(buf));
	unsigned major, minor;
	char extra;
	if (err == -ENOENT) {
		return; /* keep the numbers from the name */
	} else if (err) {
		add_problem(scan, "%s/%s: cannot read: %s", scan->class_dir, path, strerror(-err));
	} else if (sscanf(buf, "%u:%u%c", &major, &minor, &extra) != 2) {
		text_sanitize(buf);
		add_problem(scan, "%s/%s: '%s' is not MAJOR:MINOR", scan->class_dir, path, buf);
	} else {
		node->major = major;
		node->minor = minor;
	}
}

/* The PCI address of a class entry: the kernel's class link reads
 * "../../devices/pci0000:00/0000:03:00.0/drm/renderD128"; a tree whose entry
 * is a plain folder names the device through ENTRY/device instead. */
static bool entry_bdf(struct drm_scan *scan, int classfd, const char *entry, char bdf[16])
{
	char target[512];
	ssize_t n = readlinkat(classfd, entry, target, sizeof(target) - 1);
	const char *base;
	if (n > 0) {
		target[n] = '\0';
		size_t elen = strlen(entry), tlen = (size_t)n;
		if (tlen < elen + 5 || strcmp(target + tlen - elen, entry) != 0 ||
		    strncmp(target + tlen - elen - 5, "/drm/", 5) != 0)
			return false; /* not a node under a device's drm/ folder */
		target[tlen - elen - 5] = '\0';
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
	} else if (n < 0 && errno == EINVAL) {
		char path[128];
		snprintf(path, sizeof(path), "%s/device", entry);
		n = readlinkat(classfd, path, target, sizeof(target) - 1);
		if (n < 0) {
			/* a virtual DRM device (vgem, vkms) has no parent device: not a GPU */
			if (errno != ENOENT)
				add_problem(scan, "%s/%s: cannot read the link: %s", scan->class_dir, path,
					    strerror(errno));
			return false;
		}
		target[n] = '\0';
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
	} else {
		add_problem(scan, "%s/%s: cannot read the link: %s", scan->class_dir, entry, strerror(errno));
		return false;
	}
	/* a platform device (simple-framebuffer, a display engine) is not a PCI GPU */
	if (!pci_bdf_valid(base))
		return false;
	memcpy(bdf, base, 13);
	return true;
}

/* /sys/dev/char/MAJOR:MINOR must lead to this very node of this device: the
 * Intel driver maps an opened node to its GPU through it. */
/* Whether target ends in "/BDF/drm/NAME". */
static bool leads_to_node(const char *target, size_t len, const char *bdf, const char *name)
{
	size_t nb = strlen(bdf), nn = strlen(name);
	if (len < 1 + nb + 5 + nn)
		return false;
	const char *p = target + len - (1 + nb + 5 + nn);
	return p[0] == '/' && memcmp(p + 1, bdf, nb) == 0 && memcmp(p + 1 + nb, "/drm/", 5) == 0 &&
	       memcmp(p + 1 + nb + 5, name, nn) == 0;
}

/* "MAJOR:MINOR", as /sys/dev/char names a node, into name (24 bytes). */
static void dev_name(unsigned major, unsigned minor, char name[24])
{
	char digits[24];
	size_t k = 0, n = 0;
	do
		digits[k++] = (char)('0' + minor % 10);
	while ((minor /= 10));
	digits[k++] = ':';
	do
		digits[k++] = (char)('0' + major % 10);
	while ((major /= 10));
	while (k)
		name[n++] = digits[--k];
	name[n] = '\0';
}

static void check_char_link(int charfd, const char *bdf, struct drm_node *node)
{
	char name[24], target[512];
	dev_name(node->major, node->minor, name);
	ssize_t n = charfd < 0 ? (errno = ENOENT, -1) : readlinkat(charfd, name, target, sizeof(target) - 1);
	if (n < 0) {
		node->char_link = -errno;
		return;
	}
	target[n] = '\0';
	node->char_link = leads_to_node(target, (size_t)n, bdf, node->name) ? 0 : 1;
	if (node->char_link) {
		free(node->char_target);
		node->char_target = xstrdup(target);
		text_sanitize(node->char_target);
	}
}

static void scan_entry(struct drm_scan *scan, const char *root, int classfd, int charfd, const char *entry, bool render,
		       unsigned number)
{
	char bdf[16];
	if (!entry_bdf(scan, classfd, entry, bdf))
		return;
	struct drm_gpu *g = find_gpu(scan, bdf);
	if (!g) {
		struct drm_gpu fresh;
		memset(&fresh, 0, sizeof(fresh));
		memcpy(fresh.bdf, bdf, 13);
		int rc = read_pci_uevent(scan, root, entry, &fresh);
		if (rc == 0)
			rc = read_pci_attrs(scan, root, entry, &fresh);
		if (rc < 0)
			return;
		if (scan->count % 16 == 0)
			scan->gpus = xrealloc(scan->gpus, (scan->count + 16) * sizeof(*scan->gpus));
		scan->gpus[scan->count] = fresh;
		g = &scan->gpus[scan->count++];
	}
	struct drm_node *node = render ? &g->render : &g->card;
	if (node->name[0]) {
		add_problem(scan, "%s: %s and %s both claim to be the %s node of %s", scan->class_dir, node->name,
			    entry, render ? "render" : "card", bdf);
		return;
	}
	snprintf(node->name, sizeof(node->name), "%s", entry);
	/* the kernel names each node after its minor: cardN and renderDN are 226:N */
	node->has_dev = true;
	node->major = DRM_MAJOR;
	node->minor = number;
	if (!render)
		return; /* the driver maps render nodes through /sys/dev/char; card nodes it never opens */
	check_char_link(charfd, bdf, node);
	if (node->char_link) {
		read_dev_numbers(scan, root, entry, node);
		if (node->major != DRM_MAJOR || node->minor != number)
			check_char_link(charfd, bdf, node);
	}
}

static int by_bdf(const void *a, const void *b)
{
	return strcmp(((const struct drm_gpu *)a)->bdf, ((const struct drm_gpu *)b)->bdf);
}

void drm_scan(const char *root, struct drm_scan *out)
{
	memset(out, 0, sizeof(*out));
	out->class_dir = root_path(root, "/sys/class/drm");
	struct dirents dir;
	int err = dirents_open(&dir, AT_FDCWD, out->class_dir, 0);
	if (err) {
		out->error = -err;
		return;
	}
	char *char_dir = root_path(root, "/sys/dev/char");
	int charfd = open(char_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(char_dir);
	const char *name;
	while ((name = dirents_next(&dir, NULL))) {
		bool render;
		unsigned number;
		if (node_name(name, &render, &number))
			scan_entry(out, root, dir.fd, charfd, name, render, number);
	}
	if (dir.error)
		add_problem(out, "%s: cannot list: %s", out->class_dir, strerror(dir.error));
	dirents_close(&dir);
	if (charfd >= 0)
		close(charfd);
	if (out->count > 1)
		qsort(out->gpus, out->count, sizeof(*out->gpus), by_bdf);
}

void drm_scan_free(struct drm_scan *scan)
{
	for (size_t i = 0; i < scan->problem_count; i++)
		free(scan->problems[i]);
	free(scan->problems);
	for (size_t i = 0; i < scan->count; i++) {
		free(scan->gpus[i].card.char_target);
		free(scan->gpus[i].render.char_target);
	}
	free(scan->gpus);
	free(scan->class_dir);
	memset(scan, 0, sizeof(*scan));
}

size_t drm_scan_add_proc(const char *root, struct drm_scan *scan, const char *dir, unsigned vendor, const char *driver)
{
	char *path = root_path(root, dir);
	DIR *d = opendir(path);
	free(path);
	if (!d)
		return 0;
	size_t added = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!pci_bdf_valid(de->d_name) || find_gpu(scan, de->d_name))
			continue;
		if (scan->count % 16 == 0)
			scan->gpus = xrealloc(scan->gpus, (scan->count + 16) * sizeof(*scan->gpus));
		struct drm_gpu *g = &scan->gpus[scan->count++];
		memset(g, 0, sizeof(*g));
		memcpy(g->bdf, de->d_name, 13);
		g->vendor = vendor;
		g->class = 0x030200;
		snprintf(g->driver, sizeof(g->driver), "%s", driver);
		g->from_proc = true;
		added++;
	}
	closedir(d);
	if (added && scan->count > 1)
		qsort(scan->gpus, scan->count, sizeof(*scan->gpus), by_bdf);
	return added;
}

/* Entries of ROOT/PATH named PREFIX<digits>; the folder opened by the
 * kernel's lookup under root (root_open): no lstat per component. */
static unsigned count_prefixed(const char *root, const char *path, const char *prefix)
{
	struct dirents d = { .fd = root_open(root, path, O_RDONLY | O_DIRECTORY) };
	if (d.fd < 0)
		return 0;
	unsigned n = 0;
	size_t plen = strlen(prefix);
	const char *name;
	while ((name = dirents_next(&d, NULL)))
		if (strncmp(name, prefix, plen) == 0 && isdigit((unsigned char)name[plen]))
			n++;
	dirents_close(&d);
	return n;
}

unsigned drm_gpu_tiles(const char *root, const struct drm_gpu *gpu)
{
	const char *node = gpu->card.name[0] ? gpu->card.name : gpu->render.name;
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/drm/%s/gt", node);
	unsigned n = count_prefixed(root, path, "gt");
	if (n == 0) {
		snprintf(path, sizeof(path), "/sys/class/drm/%s/device", node);
		n = count_prefixed(root, path, "tile");
	}
	return n ? n : 1;
}
