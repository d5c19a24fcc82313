/* The dpkg status parser over an exact-size buffer (it reads an mmap, which
 * has no terminating NUL), keeping a few names and then every stanza. */
#include "fuzz.h"
#include "lib/dpkg_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const wanted[] = { "libze1", "dpkg", "a", NULL };
	char *content = fuzz_exact(data, size);
	char err[512];
	for (int pass = 0; pass < 2; pass++) {
		struct dpkg_status st;
		memset(&st, 0, sizeof(st));
		int rc = dpkg_status_parse("fuzz/status", content, size, pass ? NULL : wanted, &st, err,
					   sizeof(err));
		if (rc == 0) {
			for (size_t i = 0; i < st.count; i++) {
				const struct dpkg_pkg *p = &st.pkgs[i];
				if (!p->name || !p->arch || !p->version || !p->state)
					abort();
				(void)dpkg_pkg_installed(p);
			}
			dpkg_status_free(&st);
		} else if (strncmp(err, "fuzz/status", 11) != 0) {
			abort(); /* errors name the file */
		}
	}
	free(content);
	return 0;
}
