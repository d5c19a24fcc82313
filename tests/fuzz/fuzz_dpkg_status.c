/* The dpkg status parser over an exact-size buffer (no terminating NUL),
 * keeping a few names and then every stanza; and the file reader, which
 * parses through a small buffer whole stanzas at a time, must agree with
 * the one-buffer parse (result, error text, line numbers). */
#include <stdio.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const wanted[] = { "libze1", "dpkg", "a", NULL };
	char *content = fuzz_exact(data, size);
	int fd = memfd_create("status", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int pass = 0; pass < 2; pass++) {
		const char *const *names = pass ? NULL : wanted;
		struct dpkg_status st, read;
		char err[512] = "", read_err[512] = "";
		int rc = dpkg_status_parse(path, content, size, names, &st, err, sizeof(err));
		int read_rc = dpkg_status_load_buffered(path, names, 1 + size % 61, &read, read_err, sizeof(read_err));
		if (rc != read_rc || strcmp(err, read_err) != 0)
			abort();
		if (rc == 0) {
			for (size_t i = 0; i < st.count; i++) {
				const struct dpkg_pkg *p = &st.pkgs[i];
				if (!p->name || !p->arch || !p->version || !p->state)
					abort();
				(void)dpkg_pkg_installed(p);
			}
			expect_same(&st, &read);
			dpkg_status_free(&st);
			dpkg_status_free(&read);
		} else if (strncmp(err, path, strlen(path)) != 0) {
			abort(); /* errors name the file */
		}
	}
	close(fd);
	free(content);
	return 0;
}
