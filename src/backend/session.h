/* One probe session: the plan's backends (probe_plan.h) probed, one child
 * per device that enumerates and then smokes (one child per backend when
 * there is no smoke), the state cache of the health check, and the
 * children's results decoded into typed outcomes (probe_result.h) for the
 * runtime checks. */
#ifndef GPUGATE_SESSION_H
#define GPUGATE_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "probe_plan.h"
#include "probe_result.h"

struct result;

/* How one child ended, and what it said. */
struct probe_outcome {
	char *verdict;       /* NULL when it passed: "hung in stage sync on ... (killed)" */
	char *failed_stage;  /* NULL when it passed */
	char last_stage[32]; /* the last stage it entered ("" if none) */
	bool killed;         /* still running at the deadline */
	int signal;
	double seconds;
	char *output; /* the tail of its stdout and stderr */
	struct probe_result result;
};

struct backend_probe {
	const struct backend *be;
	char *library; /* under --root: the root's copy of be->library, which the children load */
	/* Getting as far as the device list: a pass once a child enumerated
	 * (even if its smoke failed later); else the failing child's outcome. */
	struct probe_outcome enumeration;
	struct probe_result found;     /* the runtime and its devices, as enumerated */
	struct probe_outcome *devices; /* with smoke: one child per device, by index */
	size_t n_devices;
};

struct probe_session {
	struct backend_probe *probes;
	size_t n;
	char *none_found;      /* no backend library was found: what was looked for */
	char *none_remedy;     /* then: what to install, from the backends of the run's vendor */
	double cache_age;      /* >= 0: the result came from the state cache */
	char *cache_path;      /* the state folder used, if any */
	char *cache_note;      /* why the state cache was not used or written */
	char *cache_discarded; /* why a cached result was not used: what changed since */
};

/* Runs the plan (resolved for req by probe_plan_resolve) and judges its
 * children; the session keeps nothing of the plan, which the caller then
 * releases. */
struct probe_session *probe_session_run(const struct probe_plan *plan, const struct probe_session_request *req);
void probe_session_free(struct probe_session *s);

/* An enumeration that never got past initializing the runtime: it failed in
 * loader, init or drivers, was killed, crashed, or left no result. */
bool probe_never_initialized(const struct probe_outcome *o);

/* The remediation for a failed child into r: from how it ended and its
 * error name, through the backend's table. */
void probe_remedy(const struct backend *be, const struct probe_outcome *o, struct result *r);

/* The per-device outcome of device index d, whose device result is read
 * from that child's result. NULL when out of range. */
const struct probe_device *probe_device_result(const struct backend_probe *p, size_t d);

#endif
