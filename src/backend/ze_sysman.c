/* Sysman (zes) health of one Level Zero device, in the probe child, best
 * effort: every function is an optional symbol, and a function that is
 * absent or answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE gives the value "not
 * supported by this driver" instead of a guess. Sysman answers only when
 * ZES_ENABLE_SYSMAN=1 was set before zeInit (loader 1.8 predates zesInit);
 * the parent sets it for the probe child. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"
#include "ze_api.h"
#include "ze_errors.h"

#define UNSUPPORTED     "not supported by this driver"
#define MAX_HANDLES     64
#define POWER_SAMPLE_MS 100

/* The value for a failed call: UNSUPPORTED where the driver says so. */
static json_t *failure(ze_result_t rc)
{
	if (rc == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
		return json_string(UNSUPPORTED);
	char name[48], *text = xasprintf("failed: %s", ze_result_name(rc, name, sizeof(name)));
	json_t *j = json_string(text);
	free(text);
	return j;
}

/* Sets t.key to value when there is one (why is then dropped), else to why,
 * the reason it could not be read, or "not supported by this driver". */
static void put(json_t *t, const char *key, json_t *value, json_t *why)
{
	if (value) {
		json_decref(why);
		json_object_set_new(t, key, value);
	} else {
		json_object_set_new(t, key, why ? why : json_string(UNSUPPORTED));
	}
}

/* Handles of one Sysman enumeration (zesDeviceEnum*), NULL with *why set
 * when there are none. Caller frees. */
#define ENUM_HANDLES(api_fn, handle_t, dev, count, why)                                  \
	({                                                                               \
		handle_t *list_ = NULL;                                                  \
		ze_result_t rc_ = api_fn(dev, &(count), NULL);                           \
		if (rc_ != ZE_RESULT_SUCCESS)                                            \
			(why) = failure(rc_);                                            \
		else if ((count) == 0 || (count) > MAX_HANDLES)                          \
			(why) = json_string(UNSUPPORTED);                                \
		else {                                                                   \
			list_ = xcalloc((count), sizeof(*list_));                        \
			if ((rc_ = api_fn(dev, &(count), list_)) != ZE_RESULT_SUCCESS) { \
				free(list_);                                             \
				list_ = NULL;                                            \
				(why) = failure(rc_);                                    \
			}                                                                \
		}                                                                        \
		list_;                                                                   \
	})

static void temperature(const struct ze_api *api, zes_device_handle_t dev, json_t *t)
{
	if (!api->zesDeviceEnumTemperatureSensors || !api->zesTemperatureGetState) {
		json_object_set_new(t, "temperature_c", json_string(UNSUPPORTED));
		return;
	}
	uint32_t n = 0;
	json_t *why = NULL;
	zes_temp_handle_t *s = ENUM_HANDLES(api->zesDeviceEnumTemperatureSensors, zes_temp_handle_t, dev, n, why);
	double hottest = -1e9;
	for (uint32_t i = 0; s && i < n; i++) {
		double c;
		ze_result_t rc = api->zesTemperatureGetState(s[i], &c);
		if (rc == ZE_RESULT_SUCCESS && c > hottest)
			hottest = c;
		else if (rc != ZE_RESULT_SUCCESS && !why)
			why = failure(rc);
	}
	free(s);
	put(t, "temperature_c", hottest > -1e9 ? json_real(hottest) : NULL, why);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* Power from two energy counter samples of the first domain. */
static void power(const struct ze_api *api, zes_device_handle_t dev, json_t *t)
{
	if (!api->zesDeviceEnumPowerDomains || !api->zesPowerGetEnergyCounter) {
		json_object_set_new(t, "power_w", json_string(UNSUPPORTED));
		return;
	}
	uint32_t n = 0;
	json_t *why = NULL;
	zes_pwr_handle_t *d = ENUM_HANDLES(api->zesDeviceEnumPowerDomains, zes_pwr_handle_t, dev, n, why);
	if (d) {
		zes_power_energy_counter_t a = { 0 }, b = { 0 };
		ze_result_t rc = api->zesPowerGetEnergyCounter(d[0], &a);
		if (rc == ZE_RESULT_SUCCESS) {
			sleep_ms(POWER_SAMPLE_MS);
			rc = api->zesPowerGetEnergyCounter(d[0], &b);
		}
		if (rc != ZE_RESULT_SUCCESS)
			why = failure(rc);
		else if (b.timestamp > a.timestamp && b.energy >= a.energy) /* µJ per µs = W */
			json_object_set_new(
				t, "power_w",
				json_real((double)(b.energy - a.energy) / (double)(b.timestamp - a.timestamp)));
		else
			why = json_string("not measurable: the energy counter did not advance");
		free(d);
	}
	if (why)
		json_object_set_new(t, "power_w", why);
}

static json_t *throttle_reasons(zes_freq_throttle_reason_flags_t f)
{
	static const struct {
		zes_freq_throttle_reason_flags_t bit;
		const char *name;
	} names[] = {
		{ ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP, "average power cap" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_BURST_PWR_CAP, "burst power cap" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_CURRENT_LIMIT, "current limit" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_THERMAL_LIMIT, "thermal limit" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_PSU_ALERT, "power supply alert" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_SW_RANGE, "software range" },
		{ ZES_FREQ_THROTTLE_REASON_FLAG_HW_RANGE, "hardware range" },
	};
	json_t *a = json_array();
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (f & names[i].bit)
			json_array_append_new(a, json_string(names[i].name));
	return a;
}

/* The GPU core domain's actual and maximum frequency and throttle reasons. */
static void frequency(const struct ze_api *api, zes_device_handle_t dev, json_t *t)
{
	if (!api->zesDeviceEnumFrequencyDomains || !api->zesFrequencyGetState || !api->zesFrequencyGetProperties) {
		json_object_set_new(t, "frequency", json_string(UNSUPPORTED));
		return;
	}
	uint32_t n = 0;
	json_t *why = NULL;
	zes_freq_handle_t *d = ENUM_HANDLES(api->zesDeviceEnumFrequencyDomains, zes_freq_handle_t, dev, n, why);
	for (uint32_t i = 0; d && i < n; i++) {
		zes_freq_properties_t p = { .stype = ZES_STRUCTURE_TYPE_FREQ_PROPERTIES };
		ze_result_t rc = api->zesFrequencyGetProperties(d[i], &p);
		if (rc != ZE_RESULT_SUCCESS || p.type != ZES_FREQ_DOMAIN_GPU)
			continue;
		zes_freq_state_t s = { .stype = ZES_STRUCTURE_TYPE_FREQ_STATE };
		if ((rc = api->zesFrequencyGetState(d[i], &s)) != ZE_RESULT_SUCCESS) {
			why = failure(rc);
			break;
		}
		json_t *f = json_object();
		if (s.actual >= 0)
			json_object_set_new(f, "actual_mhz", json_real(s.actual));
		if (s.request >= 0)
			json_object_set_new(f, "request_mhz", json_real(s.request));
		if (p.max > 0)
			json_object_set_new(f, "max_mhz", json_real(p.max));
		json_object_set_new(f, "throttle_reasons", throttle_reasons(s.throttleReasons));
		json_object_set_new(t, "frequency", f);
		break;
	}
	free(d);
	if (json_object_get(t, "frequency"))
		json_decref(why); /* a domain answered: earlier failures do not matter */
	else
		put(t, "frequency", NULL, why);
}

/* The worst health of the memory modules. */
static void memory_health(const struct ze_api *api, zes_device_handle_t dev, json_t *t)
{
	static const char *const names[] = { [ZES_MEM_HEALTH_UNKNOWN] = "unknown",
					     [ZES_MEM_HEALTH_OK] = "ok",
					     [ZES_MEM_HEALTH_DEGRADED] = "degraded",
					     [ZES_MEM_HEALTH_CRITICAL] = "critical",
					     [ZES_MEM_HEALTH_REPLACE] = "replace" };
	if (!api->zesDeviceEnumMemoryModules || !api->zesMemoryGetState) {
		json_object_set_new(t, "memory_health", json_string(UNSUPPORTED));
		return;
	}
	uint32_t n = 0;
	json_t *why = NULL;
	zes_mem_handle_t *m = ENUM_HANDLES(api->zesDeviceEnumMemoryModules, zes_mem_handle_t, dev, n, why);
	int worst = -1;
	for (uint32_t i = 0; m && i < n; i++) {
		zes_mem_state_t s = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };
		ze_result_t rc = api->zesMemoryGetState(m[i], &s);
		if (rc != ZE_RESULT_SUCCESS) {
			why = why ? why : failure(rc);
			continue;
		}
		int h = s.health <= ZES_MEM_HEALTH_REPLACE ? (int)s.health : ZES_MEM_HEALTH_UNKNOWN;
		if (h > worst)
			worst = h;
	}
	free(m);
	put(t, "memory_health", worst >= 0 ? json_string(names[worst]) : NULL, why);
}

/* RAS error counters, summed per type over every error set and category;
 * read without clearing them. */
static void ras(const struct ze_api *api, zes_device_handle_t dev, json_t *t)
{
	if (!api->zesDeviceEnumRasErrorSets || !api->zesRasGetState || !api->zesRasGetProperties) {
		json_object_set_new(t, "ras", json_string(UNSUPPORTED));
		return;
	}
	uint32_t n = 0;
	json_t *why = NULL;
	zes_ras_handle_t *sets = ENUM_HANDLES(api->zesDeviceEnumRasErrorSets, zes_ras_handle_t, dev, n, why);
	uint64_t total[2] = { 0, 0 };
	bool any = false;
	for (uint32_t i = 0; sets && i < n; i++) {
		zes_ras_properties_t p = { .stype = ZES_STRUCTURE_TYPE_RAS_PROPERTIES };
		zes_ras_state_t s = { .stype = ZES_STRUCTURE_TYPE_RAS_STATE };
		ze_result_t rc = api->zesRasGetProperties(sets[i], &p);
		if (rc == ZE_RESULT_SUCCESS)
			rc = api->zesRasGetState(sets[i], 0, &s);
		if (rc != ZE_RESULT_SUCCESS) {
			why = why ? why : failure(rc);
			continue;
		}
		int type = p.type == ZES_RAS_ERROR_TYPE_UNCORRECTABLE ? 1 : 0;
		for (int c = 0; c < ZES_MAX_RAS_ERROR_CATEGORY_COUNT; c++)
			total[type] += s.category[c];
		any = true;
	}
	free(sets);
	put(t, "ras",
	    any ? json_pack("{s:I, s:I}", "correctable", (json_int_t)total[0], "uncorrectable", (json_int_t)total[1])
		: NULL,
	    why);
}

void ze_sysman_telemetry(const struct ze_api *api, ze_device_handle_t dev, json_t *j)
{
	json_t *t = json_object();
	zes_device_handle_t sdev = (zes_device_handle_t)dev; /* valid with ZES_ENABLE_SYSMAN=1 */
	temperature(api, sdev, t);
	power(api, sdev, t);
	frequency(api, sdev, t);
	memory_health(api, sdev, t);
	ras(api, sdev, t);
	json_object_set_new(j, "telemetry", t);
}

void ze_sysman_processes(const struct ze_api *api, ze_device_handle_t dev, json_t *j)
{
	if (!api->zesDeviceProcessesGetState) {
		json_object_set_new(j, "processes", json_string(UNSUPPORTED));
		return;
	}
	zes_device_handle_t sdev = (zes_device_handle_t)dev;
	uint32_t n = 0;
	ze_result_t rc = api->zesDeviceProcessesGetState(sdev, &n, NULL);
	if (rc != ZE_RESULT_SUCCESS) {
		json_object_set_new(j, "processes", failure(rc));
		return;
	}
	if (n > 256)
		n = 256;
	zes_process_state_t *p = xcalloc(n + 1, sizeof(*p));
	for (uint32_t i = 0; i < n; i++)
		p[i].stype = ZES_STRUCTURE_TYPE_PROCESS_STATE;
	if (n && (rc = api->zesDeviceProcessesGetState(sdev, &n, p)) != ZE_RESULT_SUCCESS) {
		free(p);
		json_object_set_new(j, "processes", failure(rc));
		return;
	}
	json_t *list = json_array();
	/* the PIDs are the host's when the container has its own PID namespace */
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:i, s:I, s:b}", "pid", (int)p[i].processId, "used_memory",
						      (json_int_t)p[i].memSize, "self",
						      p[i].processId == (uint32_t)getpid()));
	free(p);
	json_object_set_new(j, "processes", list);
}
