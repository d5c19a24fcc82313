/* Driver version decoding: the raw driverVersion comes from the vendor
 * driver and the package version from the dpkg database, both untrusted.
 * The first 4 bytes are the raw version, the rest the package version. */
#include "fuzz.h"
#include "lib/zeversion.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t raw = 0;
	if (size >= 4) {
		memcpy(&raw, data, 4);
		data += 4;
		size -= 4;
	}
	struct ze_driver_version v;
	ze_version_decode(raw, &v);
	if (!memchr(v.text, '\0', sizeof(v.text)) || !v.text[0])
		abort(); /* always a printable text */
	char *pkg = fuzz_cstring(data, size);
	if (ze_package_build(pkg) < -1)
		abort();
	free(pkg);
	return 0;
}
