/* The packages group's judging, apart from reading the spec and the dpkg
 * database: one relation against parsed status stanzas. Internal to
 * src/checks/packages.c; exposed so tests/unit/test_judge_packages.c can
 * judge hand-built stanzas without a fixture root. */
#ifndef GPUGATE_JUDGE_PACKAGES_H
#define GPUGATE_JUDGE_PACKAGES_H

#include <jansson.h>
#include <stdbool.h>

#include "../lib/debrelation.h"
#include "../lib/dpkg_status.h"
#include "../lib/strbuf.h"
#include "../result.h"

/* Whether rel holds the way dpkg's dependencies_ok() judges a Depends of an
 * Architecture: all package, native the native architecture (NULL when
 * unknown). Appends what was found to `found`, one package fact per
 * candidate to `installed`, and the candidates' warn/pass findings to r. */
bool packages_relation_holds(const struct relation *rel, const struct dpkg_status *st, const char *native,
			     struct strbuf *found, json_t *installed, struct result *r);

#endif
