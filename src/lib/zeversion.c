#include "zeversion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ze_version_decode(uint32_t raw, struct ze_driver_version *out)
{
	memset(out, 0, sizeof(*out));
	out->hotfix = -1;
	unsigned top = raw >> 24;
	if (top == 0 || top > 2) {
		/* (build << 12) + hotfix: builds are 5 digits, so the top byte is
		 * far above the Level Zero major version 1 */
		out->format = ZE_VERSION_BUILD_HOTFIX;
		out->build = raw >> 12;
		out->hotfix = (int)(raw & 0xfff);
		snprintf(out->text, sizeof(out->text), "%u.%d", out->build, out->hotfix);
		return;
	}
	out->format = ZE_VERSION_MAJOR_MINOR_BUILD;
	out->major = top;
	out->minor = (raw >> 16) & 0xff;
	out->build = raw & 0xffff;
	snprintf(out->text, sizeof(out->text), "%u.%u.%u", out->major, out->minor, out->build);
}

long ze_package_build(const char *v)
{
	if (!v)
		return -1;
	const char *colon = strchr(v, ':'); /* an epoch */
	if (colon)
		v = colon + 1;
	long parts[4];
	int n = 0;
	const char *p = v;
	while (n < 4) {
		char *end;
		if (*p < '0' || *p > '9')
			break;
		parts[n++] = strtol(p, &end, 10);
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	/* year.week.build[.hotfix] or 1.3.build[.hotfix]: the build is third */
	return n >= 3 ? parts[2] : -1;
}
