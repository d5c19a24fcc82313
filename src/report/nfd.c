/* node-feature-discovery feature labels, for the "local" source: nfd-worker
 * reads /etc/kubernetes/node-feature-discovery/features.d/NAME, one
 * name=value a line, and the directive "# +expiry-time=RFC3339" after which
 * the labels are dropped (NFD source/local/local.go), so a node does not
 * keep "healthy" once gpugate stops running. Names carry their namespace
 * (feature.node.kubernetes.io/ unless --nfd-prefix or the spec's
 * reports.nfd_prefix names another), so they survive NFD's
 * DisableAutoPrefix. The labels come from the checks' facts, read through
 * their decoders (src/facts/):
 *   gpugate.healthy         true | false (no check failed)
 *   gpugate.profile         the profile that produced the verdict
 *   gpugate.gpus            the GPUs devices.gpus found that are selected and
 *                           present (the GPUs of the spec's vendor this
 *                           container sees)
 *   gpugate.driver_version  the driver version the first probe of
 *                           runtime.loader (else runtime.smoke) reported
 * A label whose source is absent or undecodable is left out rather than
 * guessed. */
#include <stdio.h>
#include <string.h>

#include "facts/devices.h"
#include "facts/runtime.h"
#include "registry.h"
#include "report.h"

/* Kubernetes label values: at most 63 characters of [A-Za-z0-9._-],
 * starting and ending alphanumeric (apimachinery validation.IsValidLabelValue).
 * Other characters become '_'; a value that is still not valid is dropped
 * (returns false). */
static bool label_value(const char *in, char out[64])
{
	size_t n = 0;
	const char *p = in;
	while (*p && !isalnum_ascii(*p))
		p++;
	for (; *p && n < 63; p++) {
		char c = *p;
		bool ok = isalnum_ascii(c) || c == '.' || c == '-' || c == '_';
		out[n++] = ok ? c : '_';
	}
	if (*p)
		return false; /* longer than a label value may be: do not cut a version */
	while (n > 0 && !isalnum_ascii(out[n - 1]))
		n--;
	out[n] = '\0';
	return n > 0;
}

static const struct result *find_result(const struct run *run, const char *id)
{
	for (size_t i = 0; i < run->count; i++)
		if (run->results[i].id && strcmp(run->results[i].id, id) == 0)
			return &run->results[i];
	return NULL;
}

/* -1 when the check did not run or its details do not decode. */
static long long gpu_count(const struct result *r)
{
	struct devices_facts f;
	char err[256];
	if (!r || !r->details || devices_facts_decode(r->details, &f, err, sizeof(err)) < 0)
		return -1;
	long long n = 0;
	for (size_t i = 0; i < f.n_gpus; i++)
		n += f.gpus[i].selected && f.gpus[i].present;
	devices_facts_release(&f);
	return n;
}

/* The first driver version a probe reported, copied into out; false: none. */
static bool driver_version(const struct run *run, char *out, size_t size)
{
	static const char *const from[] = { "runtime.loader", "runtime.smoke" };
	bool found = false;
	for (size_t i = 0; i < ARRAY_SIZE(from) && !found; i++) {
		const struct result *r = find_result(run, from[i]);
		struct runtime_facts f = { 0 };
		char err[256];
		if (!r || !r->details || runtime_loader_decode(r->details, &f, err, sizeof(err)) < 0) {
			runtime_facts_release(&f);
			continue;
		}
		for (size_t k = 0; k < f.n_probes && !found; k++) {
			const char *v = f.probes[k].driver_version;
			if (v && *v) {
				snprintf(out, size, "%s", v);
				found = true;
			}
		}
		runtime_facts_release(&f);
	}
	return found;
}

bool report_nfd_prefix_valid(const char *prefix, char *why, size_t why_size)
{
	/* a DNS subdomain (RFC 1123: lowercase labels of [a-z0-9-], at most
	 * 253 characters) and a '/' */
	size_t n = strlen(prefix);
	if (n < 2 || prefix[n - 1] != '/' || n - 1 > 253) {
		snprintf(why, why_size, "'%s' is not a DNS subdomain followed by '/' (such as example.com/)", prefix);
		return false;
	}
	size_t label = 0;
	for (size_t i = 0; i < n - 1; i++) {
		char c = prefix[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (c == '.') {
			if (label == 0 || prefix[i - 1] == '-') {
				snprintf(why, why_size, "'%s': empty label or one ending in '-'", prefix);
				return false;
			}
			label = 0;
			continue;
		}
		if (!alnum && !(c == '-' && label > 0)) {
			snprintf(why, why_size, "'%s': only lowercase letters, digits, '-' and '.' (RFC 1123)", prefix);
			return false;
		}
		if (++label > 63) {
			snprintf(why, why_size, "'%s': a label longer than 63 characters", prefix);
			return false;
		}
	}
	if (label == 0 || prefix[n - 2] == '-') {
		snprintf(why, why_size, "'%s': empty label or one ending in '-'", prefix);
		return false;
	}
	/* NFD denies the kubernetes.io and k8s.io namespaces except these two */
	const char *ns = prefix;
	bool k8s = str_ends_with(prefix, "kubernetes.io/") || str_ends_with(prefix, "k8s.io/");
	if (k8s && !str_ends_with(ns, "feature.node.kubernetes.io/") &&
	    !str_ends_with(ns, "profile.node.kubernetes.io/")) {
		snprintf(why, why_size,
			 "'%s': NFD drops labels in the kubernetes.io and k8s.io namespaces "
			 "other than feature.node.kubernetes.io/ and profile.node.kubernetes.io/",
			 prefix);
		return false;
	}
	return true;
}

void report_nfd(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	const char *prefix = opts->nfd_prefix ? opts->nfd_prefix : REPORT_NFD_PREFIX;
	char value[64], expiry[32];
	/* the spec key's default is the one place the default is written (src/registry.c) */
	double ttl = opts->nfd_expiry > 0 ? opts->nfd_expiry : key_seconds(NULL, "reports.nfd_expiry");
	report_iso8601(run->finished_at + ttl, expiry);
	sb_printf(out, "# +expiry-time=%s\n", expiry);
	sb_printf(out, "%sgpugate.healthy=%s\n", prefix, run_exit_code(run) == 0 ? "true" : "false");
	if (run->profile && label_value(run->profile, value))
		sb_printf(out, "%sgpugate.profile=%s\n", prefix, value);
	long long gpus = gpu_count(find_result(run, "devices.gpus"));
	if (gpus >= 0)
		sb_printf(out, "%sgpugate.gpus=%lld\n", prefix, gpus);
	char version[256];
	if (driver_version(run, version, sizeof(version)) && label_value(version, value))
		sb_printf(out, "%sgpugate.driver_version=%s\n", prefix, value);
}
