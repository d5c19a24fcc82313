/* The dpkg status parser over an exact-size buffer (no terminating NUL),
 * keeping a few names and then every stanza; and the file reader, which
 * parses through a small buffer whole stanzas at a time, must agree with
 * the one-buffer parse (result, error text, line numbers), and so must
 * the file cut into parts parsed on threads (dpkg_status_load_parts). Differential:
 * the verdict does not depend on the wanted names, and the stanzas kept for
 * them are those of the full parse whose name is wanted or whose Provides
 * names a wanted package (dpkg_provides_names, a walk of its own). */
#include <stdio.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "lib/dpkg_status.h"

static void expect_same(const struct dpkg_status *a, const struct dpkg_status *b)
{
	if (a->count != b->count || (a->native_arch == NULL) != (b->native_arch == NULL) ||
	    (a->native_arch && strcmp(a->native_arch, b->native_arch) != 0))
		abort();
	for (size_t i = 0; i < a->count; i++) {
		const struct dpkg_pkg *p = &a->pkgs[i], *q = &b->pkgs[i];
		if (strcmp(p->name, q->name) || strcmp(p->arch, q->arch) || strcmp(p->version, q->version) ||
		    strcmp(p->state, q->state) || p->line != q->line)
			abort();
	}
}

static const char *const wanted[] = { "libze1", "dpkg", "a", NULL };

static bool kept_by_rule(const struct dpkg_pkg *p)
{
	for (size_t i = 0; wanted[i]; i++)
		if (strcasecmp(p->name, wanted[i]) == 0 ||
		    dpkg_provides_names(p->provides, strlen(p->provides), wanted[i]))
			return true;
	return false;
}

static void expect_filtered(const struct dpkg_status *all, const struct dpkg_status *some)
{
	size_t k = 0;
	for (size_t i = 0; i < all->count; i++) {
		if (!kept_by_rule(&all->pkgs[i]))
			continue;
		if (k >= some->count || strcmp(all->pkgs[i].name, some->pkgs[k].name) ||
		    strcmp(all->pkgs[i].provides, some->pkgs[k].provides) || all->pkgs[i].line != some->pkgs[k].line)
			abort();
		k++;
	}
	if (k != some->count)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *content = fuzz_exact(data, size);
	int fd = memfd_create("status", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct dpkg_status kept[2];
	int kept_rc[2];
	char kept_err[2][512];
	for (int pass = 0; pass < 2; pass++) {
		const char *const *names = pass ? NULL : wanted;
		struct dpkg_status st, read;
		char err[512] = "", read_err[512] = "";
		kept_rc[pass] = -1;
		int rc = dpkg_status_parse(path, content, size, names, &st, err, sizeof(err));
		int read_rc = dpkg_status_load_buffered(path, names, 1 + size % 61, &read, read_err, sizeof(read_err));
		if (rc != read_rc || strcmp(err, read_err) != 0)
			abort();
		/* cut into 2 to 9 parts at empty lines, parsed on threads (read
		 * through a buffer, or mapped: buffer size 0) and joined: the
		 * same verdict, error text, lines and stanzas */
		struct dpkg_status parted;
		char parted_err[512] = "";
		size_t buffer = size % 3 ? 1 + size % 37 : 0;
		int parted_rc = dpkg_status_load_parts(path, names, buffer, 2 + size % 8, &parted, parted_err,
						       sizeof(parted_err));
		if (rc != parted_rc || strcmp(err, parted_err) != 0)
			abort();
		if (rc == 0) {
			expect_same(&read, &parted);
			dpkg_status_free(&parted);
		}
		if (rc == 0) {
			for (size_t i = 0; i < st.count; i++) {
				const struct dpkg_pkg *p = &st.pkgs[i];
				if (!p->name || !p->arch || !p->version || !p->state)
					abort();
				(void)dpkg_pkg_installed(p);
			}
			expect_same(&st, &read);
			kept[pass] = st;
			dpkg_status_free(&read);
		} else if (strncmp(err, path, strlen(path)) != 0) {
			abort(); /* errors name the file */
		}
		kept_rc[pass] = rc;
		memcpy(kept_err[pass], err, sizeof(err));
	}
	if (kept_rc[0] != kept_rc[1] || strcmp(kept_err[0], kept_err[1]) != 0)
		abort(); /* the verdict does not depend on what is wanted */
	if (kept_rc[0] == 0) {
		expect_filtered(&kept[1], &kept[0]);
		dpkg_status_free(&kept[0]);
		dpkg_status_free(&kept[1]);
	}
	close(fd);
	free(content);
	return 0;
}
