/* A whole .deb from memory (deb_read_control_memory): the ar archive, its
 * control.tar.{gz,xz,zst} through libarchive, then the control fields. On
 * success the three required fields are set; on failure the error names the
 * package and nothing is owned. */
#include "fuzz.h"
#include "provision/deb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *deb = fuzz_exact(data, size);
	struct deb_control c;
	char err[600];
	if (deb_read_control_memory(deb, size, "fuzz.deb", &c, err, sizeof(err)) == 0) {
		if (!c.package || !c.version || !c.architecture)
			abort();
		deb_control_free(&c);
	} else if (strncmp(err, "fuzz.deb", 8) != 0 || c.package || c.version || c.architecture || c.depends) {
		abort();
	}
	free(deb);
	return 0;
}
