/* The validate profile's performance figures for one Level Zero device, in
 * the probe child after a correct smoke run:
 *  - copy bandwidth: the `copy` kernel over two buffers, timed on the device
 *    with kernel timestamp events (ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP), the
 *    ticks converted with the device's timerResolution and wrapped at
 *    kernelTimestampValidBits as the specification says; the best of
 *    PERF_REPEATS runs after a warm-up, counting bytes read plus written;
 *  - launch latency: the host clock from zeCommandQueueExecuteCommandLists to
 *    the fence's completion for a one-work-item kernel, the median of
 *    LATENCY_RUNS after warm-ups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../result.h"
#include "perf.h"
#include "ze_api.h"
#include "ze_errors.h"

struct perf_objects {
	void *src, *dst;
	ze_kernel_handle_t copy;
	ze_event_pool_handle_t pool;
	ze_event_handle_t event;
	ze_command_list_handle_t list, tiny;
	ze_fence_handle_t fence;
};

static void perf_free(const struct ze_api *api, const struct ze_perf_target *t, struct perf_objects *o)
{
	if (o->fence)
		api->zeFenceDestroy(o->fence);
	if (o->tiny)
		api->zeCommandListDestroy(o->tiny);
	if (o->list)
		api->zeCommandListDestroy(o->list);
	if (o->event)
		api->zeEventDestroy(o->event);
	if (o->pool)
		api->zeEventPoolDestroy(o->pool);
	if (o->copy)
		api->zeKernelDestroy(o->copy);
	if (o->src)
		api->zeMemFree(t->ctx, o->src);
	if (o->dst)
		api->zeMemFree(t->ctx, o->dst);
}

/* The kernel's duration in nanoseconds from its context timestamps: both
 * ends masked to the valid bits, a wrap of the counter between them
 * accounted for, ticks times timerResolution (ns per tick for
 * ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES). */
static double kernel_ns(const ze_kernel_timestamp_result_t *ts, const ze_device_properties_t *p)
{
	uint64_t max =
		p->kernelTimestampValidBits >= 64 ? UINT64_MAX : (UINT64_C(1) << p->kernelTimestampValidBits) - 1;
	uint64_t start = ts->context.kernelStart & max, end = ts->context.kernelEnd & max;
	uint64_t ticks = end >= start ? end - start : (max - start) + end + 1;
	return (double)ticks * (double)p->timerResolution;
}

static int perf_fail(json_t *perf, const char *call, ze_result_t rc)
{
	char name[48];
	ze_result_name(rc, name, sizeof(name));
	json_object_set_new(perf, "error", json_string(name));
	char *msg = xasprintf("%s failed during the performance measurement: %s", call, name);
	json_object_set_new(perf, "message", json_text(msg));
	free(msg);
	return -1;
}

#define PERF_CALL(fn, ...)                               \
	do {                                             \
		ze_result_t rc_ = api->fn(__VA_ARGS__);  \
		if (rc_ != ZE_RESULT_SUCCESS) {          \
			ret = perf_fail(perf, #fn, rc_); \
			goto out;                        \
		}                                        \
	} while (0)

int ze_perf_measure(const struct ze_api *api, const struct ze_perf_target *t, json_t *j)
{
	json_t *perf = json_object();
	json_object_set_new(j, "performance", perf);
	struct perf_objects o = { 0 };
	int ret = -1;
	size_t bytes = perf_copy_bytes(t->bytes);
	size_t items = bytes / COPY_ITEM_BYTES;
	uint64_t wait_ns = (uint64_t)((t->timeout_s > 0 ? t->timeout_s : 10) * 1e9);
	ze_device_properties_t props = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	PERF_CALL(zeDeviceGetProperties, t->dev, &props);
	if (props.timerResolution == 0 || props.kernelTimestampValidBits == 0) {
		json_object_set_new(perf, "error", json_string("no kernel timestamps"));
		json_object_set_new(
			perf, "message",
			json_string(
				"the device reports no kernel timestamp resolution (timerResolution or kernelTimestampValidBits is 0)"));
		goto out;
	}

	ze_device_mem_alloc_desc_t ddesc = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	PERF_CALL(zeMemAllocDevice, t->ctx, &ddesc, bytes, 64, t->dev, &o.src);
	PERF_CALL(zeMemAllocDevice, t->ctx, &ddesc, bytes, 64, t->dev, &o.dst);
	ze_kernel_desc_t kdesc = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "copy" };
	PERF_CALL(zeKernelCreate, t->module, &kdesc, &o.copy);
	ze_event_pool_desc_t pdesc = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				       .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				       .count = 1 };
	ze_device_handle_t devs[1] = { t->dev };
	PERF_CALL(zeEventPoolCreate, t->ctx, &pdesc, 1, devs, &o.pool);
	ze_event_desc_t edesc = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
				  .index = 0,
				  .signal = ZE_EVENT_SCOPE_FLAG_HOST,
				  .wait = ZE_EVENT_SCOPE_FLAG_HOST };
	PERF_CALL(zeEventCreate, o.pool, &edesc, &o.event);
	ze_fence_desc_t fdesc = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	PERF_CALL(zeFenceCreate, t->queue, &fdesc, &o.fence);

	/* bandwidth: one launch of `copy` over the whole buffer, its event timed */
	uint32_t gx = 1, gy = 1, gz = 1;
	PERF_CALL(zeKernelSuggestGroupSize, o.copy, (uint32_t)items, 1, 1, &gx, &gy, &gz);
	if (gx == 0 || items % gx)
		gx = 1;
	PERF_CALL(zeKernelSetGroupSize, o.copy, gx, 1, 1);
	PERF_CALL(zeKernelSetArgumentValue, o.copy, 0, sizeof(o.src), &o.src);
	PERF_CALL(zeKernelSetArgumentValue, o.copy, 1, sizeof(o.dst), &o.dst);
	ze_command_list_desc_t ldesc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
					 .commandQueueGroupOrdinal = t->ordinal };
	PERF_CALL(zeCommandListCreate, t->ctx, t->dev, &ldesc, &o.list);
	ze_group_count_t groups = { (uint32_t)(items / gx), 1, 1 };
	PERF_CALL(zeCommandListAppendLaunchKernel, o.list, o.copy, &groups, o.event, 0, NULL);
	PERF_CALL(zeCommandListClose, o.list);
	double best_ns = 0;
	json_t *runs = json_array();
	json_object_set_new(perf, "copy_runs_ns", runs);
	for (int r = 0; r <= PERF_REPEATS; r++) { /* run 0 warms up */
		PERF_CALL(zeEventHostReset, o.event);
		PERF_CALL(zeFenceReset, o.fence);
		PERF_CALL(zeCommandQueueExecuteCommandLists, t->queue, 1, &o.list, o.fence);
		PERF_CALL(zeFenceHostSynchronize, o.fence, wait_ns);
		ze_kernel_timestamp_result_t ts = { 0 };
		PERF_CALL(zeEventQueryKernelTimestamp, o.event, &ts);
		perf_keep_copy(r, kernel_ns(&ts, &props), runs, &best_ns);
	}
	if (best_ns <= 0) {
		json_object_set_new(perf, "error", json_string("zero duration"));
		json_object_set_new(
			perf, "message",
			json_string(
				"every kernel timestamp said the copy took no time: the driver's kernel timestamps are broken"));
		goto out;
	}

	/* launch latency: a one-work-item `copy`, submit to fence, host clock */
	PERF_CALL(zeCommandListCreate, t->ctx, t->dev, &ldesc, &o.tiny);
	ze_kernel_handle_t tiny_kernel = o.copy;
	PERF_CALL(zeKernelSetGroupSize, tiny_kernel, 1, 1, 1);
	ze_group_count_t one = { 1, 1, 1 };
	PERF_CALL(zeCommandListAppendLaunchKernel, o.tiny, tiny_kernel, &one, NULL, 0, NULL);
	PERF_CALL(zeCommandListClose, o.tiny);
	double lat[LATENCY_RUNS];
	for (int r = 0; r < LATENCY_WARMUP + LATENCY_RUNS; r++) {
		PERF_CALL(zeFenceReset, o.fence);
		double t0 = monotonic_seconds();
		PERF_CALL(zeCommandQueueExecuteCommandLists, t->queue, 1, &o.tiny, o.fence);
		PERF_CALL(zeFenceHostSynchronize, o.fence, wait_ns);
		double us = (monotonic_seconds() - t0) * 1e6;
		if (r >= LATENCY_WARMUP)
			lat[r - LATENCY_WARMUP] = us;
	}

	json_object_set_new(perf, "copy_bandwidth_gbs", json_real(2.0 * (double)bytes / best_ns)); /* bytes/ns = GB/s */
	json_object_set_new(perf, "copy_ns", json_real(best_ns));
	json_object_set_new(perf, "buffer_bytes", json_integer((json_int_t)bytes));
	perf_record_latency(perf, lat);
	json_object_set_new(
		perf, "method",
		json_string(
			"bandwidth: best of 5 copy kernels (bytes read + written) timed by kernel timestamp events; "
			"latency: median of 50 one-item kernel submissions, host clock from submit to fence"));
	ret = 0;
out:
	perf_free(api, t, &o);
	return ret;
}
