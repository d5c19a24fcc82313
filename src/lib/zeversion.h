/* Decoding of zeDriverGetProperties().driverVersion. Intel's compute-runtime
 * has used three encodings (see the research note on Level Zero):
 *   since 23.09:   0x01030000 + build          -> "1.3.BUILD"
 *   24.22.29735.2 .. .19: (build << 12) + hotfix -> "BUILD.HOTFIX"
 *   before 23.09:  (major<<24)|(minor<<16)|(build & 0xffff) -> "MAJOR.MINOR.BUILD"
 * The first and the last read alike; both give the build number that the
 * driver package's version (year.week.BUILD.hotfix) carries. */
#ifndef GPUGATE_ZEVERSION_H
#define GPUGATE_ZEVERSION_H

#include <stddef.h>
#include <stdint.h>

enum ze_version_format { ZE_VERSION_MAJOR_MINOR_BUILD, ZE_VERSION_BUILD_HOTFIX };

struct ze_driver_version {
	enum ze_version_format format;
	unsigned major, minor; /* MAJOR_MINOR_BUILD only */
	unsigned build;
	int hotfix; /* BUILD_HOTFIX only, else -1 */
	char text[32];
};

void ze_version_decode(uint32_t raw, struct ze_driver_version *out);
/* The build number in a driver package version such as "24.22.29735.13-1"
 * or "1.3.26918.9" (the older intel-level-zero-gpu naming); -1 if none. */
long ze_package_build(const char *package_version);

#endif
