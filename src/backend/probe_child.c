/* `gpugate probe --backend NAME [--device N] [--smoke] [--telemetry]
 *  [--processes] [--perf-bytes N] [--work-items N] [--sync-timeout S]
 *  [--fd FD] [--cache-dir DIR] [--library PATH]`: the hidden subcommand the
 * runtime check starts in its own process group. It loads the GPU library,
 * streams its stages and result on FD (default 3) and exits 0 when every stage
 * passed, 3 when one failed (the result says which), 4 on bad arguments. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/sandbox.h"
#include "../commands.h"
#include "../spec.h"
#include "../lib/util.h"
#include "backend.h"

#define PROBE_EXIT_FAILED 3
#define PROBE_EXIT_USAGE  4

static int parse_count(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'd' },
		{ "smoke", no_argument, NULL, 's' },
		{ "telemetry", no_argument, NULL, 't' },
		{ "work-items", required_argument, NULL, 'w' },
		{ "sync-timeout", required_argument, NULL, 'T' },
		{ "fd", required_argument, NULL, 'f' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "sandbox", no_argument, NULL, 'S' },
		{ "processes", no_argument, NULL, 'p' },
		{ "perf-bytes", required_argument, NULL, 'P' },
		{ "library", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct backend_options opt = { .device = -1, .work_items = 1u << 20, .sync_timeout_s = 10 };
	const struct backend *be = NULL;
	long fd = 3, v;
	bool sandbox = false;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			be = backend_named(optarg);
			if (!be) {
				fprintf(stderr, "gpugate probe: unknown backend '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			break;
		case 'd':
			if (parse_count(optarg, 0, 1023, &v) < 0) {
				fprintf(stderr, "gpugate probe: --device wants an index, not '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			opt.device = (int)v;
			break;
		case 's':
			opt.smoke = true;
			break;
		case 'L': /* under --root: the root's library, by its path */
			if (optarg[0] != '/') {
				fprintf(stderr, "gpugate probe: --library wants an absolute path, not '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			opt.library = optarg;
			break;
		case 't':
			opt.telemetry = true;
			break;
		case 'p':
			opt.processes = true;
			break;
		case 'P': /* the bandwidth measurement's buffer: 1 MiB to 4 GiB */
			if (parse_count(optarg, 1L << 20, 1L << 32, &v) < 0) {
				fprintf(stderr,
					"gpugate probe: --perf-bytes wants a byte count from 1 MiB to 4 GiB, not '%s'\n",
					optarg);
				return PROBE_EXIT_USAGE;
			}
			opt.perf = true;
			opt.perf_bytes = (size_t)v;
			break;
		case 'w':
			if (parse_count(optarg, 1, 1L << 28, &v) < 0) {
				fprintf(stderr, "gpugate probe: --work-items wants a count, not '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			opt.work_items = (size_t)v;
			break;
		case 'T':
			if (parse_seconds(optarg, &opt.sync_timeout_s) < 0) {
				fprintf(stderr, "gpugate probe: --sync-timeout wants seconds, not '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			break;
		case 'c':
			opt.cache_dir = optarg;
			break;
		case 'S':
			sandbox = true;
			break;
		case 'f':
			if (parse_count(optarg, 0, 1 << 20, &fd) < 0) {
				fprintf(stderr, "gpugate probe: --fd wants a descriptor, not '%s'\n", optarg);
				return PROBE_EXIT_USAGE;
			}
			break;
		default:
			fprintf(stderr,
				"gpugate probe: bad option '%s' (an internal subcommand of the runtime check)\n",
				argv[optind - 1]);
			return PROBE_EXIT_USAGE;
		}
	}
	if (!be || optind < argc) {
		fprintf(stderr,
			"gpugate probe: usage: gpugate probe --backend level-zero|cuda [--device N] [--smoke]\n");
		return PROBE_EXIT_USAGE;
	}
	if (fcntl((int)fd, F_GETFD) < 0) {
		fprintf(stderr, "gpugate probe: descriptor %ld is not open: %s\n", fd, strerror(errno));
		return PROBE_EXIT_USAGE;
	}
	/* The checking process ran sandboxed: narrow its inherited filter further
	 * (no fork, no execve) before any GPU library is loaded. */
	char why[256];
	if (sandbox && sandbox_apply(SANDBOX_PROBE, why, sizeof(why)) < 0)
		fprintf(stderr, "gpugate probe: warning: no probe sandbox: %s\n", why);
	struct probe_channel ch = { (int)fd };
	json_t *res = json_object();
	json_object_set_new(res, "backend", json_string(be->name));
	int rc = be->run(&ch, &opt, res);
	json_object_set_new(res, "ok", json_boolean(rc == 0));
	probe_result(&ch, res);
	json_decref(res);
	fflush(NULL);
	/* _exit: a GPU driver's atexit handlers have hung and crashed in the past;
	 * the result is out, nothing is left to flush */
	_exit(rc == 0 ? EXIT_HEALTHY : PROBE_EXIT_FAILED);
}
