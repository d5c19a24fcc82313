/* The runtime group's health checks, from what the per-device probe children
 * reported: runtime.health (telemetry of the validate profile) and
 * runtime.processes (other processes on a GPU; ci and validate). A value a
 * driver does not support is reported as such and never fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "runtime_state.h"

/* "power not supported by this driver" notes for values given as text. */
static void note_text(struct strbuf *notes, const struct probe_reading *v, const char *what)
{
	if (v->present && !v->is_number && v->why)
		sb_printf(notes, "%s%s %s", notes->len ? "; " : "", what, v->why);
}

static void note_counters(struct strbuf *notes, const struct probe_counters *c, const char *what)
{
	if (c->present && !c->counted && c->why)
		sb_printf(notes, "%s%s %s", notes->len ? "; " : "", what, c->why);
}

void runtime_run_health(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	struct strbuf text = STRBUF_INIT, notes = STRBUF_INIT;
	size_t seen = 0;
	json_t *all = json_array();
	json_object_set_new(result_details(r), "telemetry", all);
	for (size_t i = 0; i < st->n; i++)
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			const struct probe_device *dev = probe_device_result(&st->probes[i], d);
			const struct probe_telemetry *t = dev ? &dev->telemetry : NULL;
			if (!t || !t->present)
				continue;
			seen++;
			json_array_append(all, t->raw);
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			sb_printf(&text, "%sdevice %zu", text.len ? ", " : "", d);
			if (t->temperature_c.is_number)
				sb_printf(&text, " %.1f °C", t->temperature_c.value);
			if (t->power_w.is_number)
				sb_printf(&text, " %.0f W", t->power_w.value);
			if (t->frequency_mhz.is_number)
				sb_printf(&text, " %.0f MHz", t->frequency_mhz.value);
			struct strbuf dn = STRBUF_INIT;
			note_text(&dn, &t->temperature_c, "temperature");
			note_text(&dn, &t->power_w, "power");
			note_text(&dn, &t->frequency_mhz, "frequency");
			const char *health = t->memory_health.why;
			static const char *const states[] = { "ok", "degraded", "critical", "replace", "unknown", NULL };
			bool state = false;
			for (size_t k = 0; health && states[k]; k++)
				state = state || strcmp(health, states[k]) == 0;
			if (state)
				sb_printf(&text, " memory %s", health);
			else
				note_text(&dn, &t->memory_health, "memory health");
			note_counters(&dn, &t->ras, "RAS error counters");
			note_counters(&dn, &t->ecc, "ECC");
			if (t->nvml && strcmp(t->nvml, "ok") != 0)
				sb_printf(&dn, "%sNVML %s", dn.len ? "; " : "", t->nvml);
			if (dn.len)
				sb_printf(&notes, "%s%s: %s", notes.len ? "; " : "", label, dn.buf);
			sb_release(&dn);
			st->probes[i].be->judge_health(t, label, r);
		}
	if (seen == 0)
		result_blocked(r, "runtime.smoke,runtime.devices");
	else if (r->status != STATUS_PASS)
		result_set(r, r->status, "%s", result_worst_finding(r));
	else
		result_set(r, STATUS_PASS, "%s%s%s", text.buf, notes.len ? "; " : "", notes.len ? notes.buf : "");
	sb_release(&text);
	sb_release(&notes);
}

void runtime_run_processes(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	size_t seen = 0, busy = 0, unknown = 0;
	json_t *all = json_array();
	json_object_set_new(result_details(r), "processes", all);
	for (size_t i = 0; i < st->n; i++)
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			const struct probe_device *dev = probe_device_result(&st->probes[i], d);
			const struct probe_processes *list = dev ? &dev->processes : NULL;
			if (!list || list->state == PROBE_LIST_ABSENT)
				continue;
			seen++;
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			if (list->state == PROBE_LIST_UNAVAILABLE) {
				unknown++;
				result_finding(r, STATUS_PASS, "runtime.processes.unavailable",
					       "%s: the process list is not available: %s", label,
					       list->why ? list->why : "?");
				continue;
			}
			struct strbuf others = STRBUF_INIT;
			size_t n = 0;
			for (size_t k = 0; k < list->n; k++) {
				const struct probe_process *p = &list->items[k];
				if (p->self)
					continue;
				n++;
				json_array_append_new(all,
						      json_pack("{s:I, s:I, s:b}", "pid", (json_int_t)p->pid,
								"used_memory", (json_int_t)p->used_memory, "self", 0));
				sb_printf(&others, "%spid %lld (%.1f GiB)", others.len ? ", " : "", p->pid,
					  (double)p->used_memory / (1 << 30));
			}
			if (n) {
				busy++;
				result_finding(r, STATUS_WARN, "runtime.processes.others", "%s: %zu %s the GPU: %s",
					       label, n, count_noun(n, "other process uses", "other processes use"),
					       others.buf);
			}
			sb_release(&others);
		}
	if (seen == 0) {
		result_blocked(r, "runtime.smoke,runtime.devices");
	} else if (busy) {
		result_set(r, STATUS_WARN, "%s", result_worst_finding(r));
		char cmds[128];
		result_remedy(
			r,
			"tests would share the GPU's memory and time with these processes: stop them or wait for them "
			"(%s); the PIDs are the host's when the container has its own PID namespace",
			runtime_processes_cmds(st, cmds, sizeof(cmds)));
	} else if (unknown) {
		result_set(r, STATUS_PASS, "%s", result_worst_finding(r));
	} else {
		result_set(r, STATUS_PASS, "no other process uses the %zu %s", seen, count_noun(seen, "GPU", "GPUs"));
	}
}
