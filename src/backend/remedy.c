/* The remediation for a failed probe child (session.h): how it ended, then
 * its error name through the backend's own table. */
#include <string.h>

#include "../lib/util.h"
#include "../result.h"
#include "session.h"

void probe_remedy(const struct backend *be, const struct probe_outcome *o, struct result *r)
{
	const char *error = o->result.error;
	char had[32];
	human_seconds(o->seconds, had, sizeof(had));
	if (o->killed && o->last_stage[0] == '\0')
		/* killed before the child said anything: the time it had was too short
		 * to start a process at all, nothing points at the GPU */
		result_remedy(r,
			      "the probe had only %s and was killed before it started: raise --deadline or "
			      "runtime.timeout (the %s runtime needs about 0.5 s to start)",
			      had, be->name);
	else if (o->killed)
		result_remedy(r, "%s", be->hang_remedy);
	else if (o->signal)
		result_remedy(
			r,
			"the %s runtime crashed: reinstall the driver stack and compare the loader and driver versions (packages checks)",
			be->name);
	if (!error)
		return;
	if (strstr(error, "missing")) {
		result_remedy(r, "install the %s loader: %s", be->name, be->provided_by);
		return;
	}
	for (const struct backend_remedy *m = be->remedies; m && m->error_part; m++)
		if (strstr(error, m->error_part)) {
			result_remedy(r, "%s", m->remedy);
			return;
		}
	if (strstr(error, "wrong result"))
		result_remedy(
			r,
			"the GPU computes wrong results: take it out of service and report it with the details of this check");
}
