/* Spawn and capture: start programs in their own process groups with their
 * output on pipes, read everything they write until they end or a monotonic
 * deadline passes, then kill each whole group and reap it. One helper for
 * the probe parent (src/backend/probe_parent.c: parallel probe children and
 * their stage-line pipe) and gpugate-provision's bundle (one command at a
 * time). Every child is reaped and its group killed before spawn_run returns,
 * so nothing started here outlives the call. */
#ifndef GPUGATE_LIB_SPAWN_H
#define GPUGATE_LIB_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum spawn_stream {
	SPAWN_OUT,   /* stdout, and stderr when merge_stderr */
	SPAWN_ERR,   /* stderr, when not merged */
	SPAWN_EXTRA, /* the pipe at the child's descriptor extra_fd */
	SPAWN_STREAMS
};

struct spawn_child {
	/* in */
	char *const *argv;    /* argv[0] is the path to execute */
	char *const *envp;    /* NULL: this process's environment */
	bool merge_stderr;    /* stderr into the stdout pipe */
	int extra_fd;         /* > 2: a third pipe whose write end the child has at this number; 0: none */
	bool die_with_parent; /* PR_SET_PDEATHSIG SIGKILL (the thread that forks must outlive the child) */
	/* how to execute; NULL: execve(argv[0], argv, envp). Returns only on failure. */
	int (*exec)(char *const argv[], char *const envp[]);
	/* called with each piece read from a pipe, in order per stream */
	void (*on_data)(void *arg, enum spawn_stream stream, const char *buf, size_t len);
	void *arg;

	/* out */
	pid_t pid;         /* > 0 once started */
	char error[160];   /* why it could not start ("" when it started) */
	bool killed;       /* still running at the deadline (then killed) */
	int exit_code;     /* -1 unless it exited */
	int signal;        /* 0 unless a signal ended it (SIGKILL when killed) */
	double start, end; /* monotonic seconds */

	/* private */
	int fds[SPAWN_STREAMS];
	bool exited;
};

/* Starts every child (a failure to start is noted in its error and the others
 * still run), reads their pipes until each has exited or closed them all, or
 * the monotonic deadline passes, then kills every process group and reaps.
 * A child that exits while a grandchild holds its pipes open ends too: the
 * loop notices the exit within 50 ms. */
void spawn_run(struct spawn_child *kids, size_t n, double deadline);

#endif
