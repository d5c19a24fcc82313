/* Spawn and capture (spawn.h): fork + exec in a new process group, poll the
 * pipes with a deadline, kill the group, reap. */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

/* dup2 onto target; when the pipe already has that number, dup2 would keep
 * O_CLOEXEC, so clear it instead. */
static void move_fd(int fd, int target)
{
	if (fd == target)
		fcntl(fd, F_SETFD, 0);
	else
		dup2(fd, target);
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* Only async-signal-safe calls between fork and exec. */
static void start(struct spawn_child *c)
{
	int pipes[SPAWN_STREAMS][2];
	for (int s = 0; s < SPAWN_STREAMS; s++)
		pipes[s][0] = pipes[s][1] = -1;
	bool want[SPAWN_STREAMS] = { true, !c->merge_stderr, c->extra_fd > 2 };
	for (int s = 0; s < SPAWN_STREAMS; s++) {
		if (want[s] && pipe2(pipes[s], O_CLOEXEC) < 0) {
			snprintf(c->error, sizeof(c->error), "pipe: %s", strerror(errno));
			for (int t = 0; t < SPAWN_STREAMS; t++)
				close_pair(pipes[t]);
			return;
		}
	}
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char *const *envp = c->envp ? c->envp : environ;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (c->die_with_parent) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent) /* the parent died before prctl */
				_exit(127);
		}
		if (devnull >= 0)
			move_fd(devnull, 0);
		move_fd(pipes[SPAWN_OUT][1], 1);
		move_fd(c->merge_stderr ? pipes[SPAWN_OUT][1] : pipes[SPAWN_ERR][1], 2);
		if (c->extra_fd > 2)
			move_fd(pipes[SPAWN_EXTRA][1], c->extra_fd);
		if (c->exec)
			c->exec(c->argv, envp);
		else
			execve(c->argv[0], c->argv, envp);
		static const char msg[] = "gpugate: cannot execute ";
		ssize_t ignored = write(2, msg, sizeof(msg) - 1);
		ignored = write(2, c->argv[0], strlen(c->argv[0]));
		ignored = write(2, "\n", 1);
		(void)ignored;
		_exit(127);
	}
	int saved = errno;
	if (pid > 0)
		setpgid(pid, pid); /* also here, so a kill right after fork finds the group */
	if (devnull >= 0)
		close(devnull);
	for (int s = 0; s < SPAWN_STREAMS; s++) {
		if (pipes[s][1] >= 0)
			close(pipes[s][1]);
		c->fds[s] = pipes[s][0];
		if (pid < 0 && c->fds[s] >= 0) {
			close(c->fds[s]);
			c->fds[s] = -1;
		}
		if (c->fds[s] >= 0)
			fcntl(c->fds[s], F_SETFL, O_NONBLOCK);
	}
	if (pid < 0) {
		snprintf(c->error, sizeof(c->error), "fork: %s", strerror(saved));
		return;
	}
	c->pid = pid;
}

/* Reads what a pipe holds now; closes it at EOF. */
static void drain(struct spawn_child *c, int s)
{
	char buf[65536];
	while (c->fds[s] >= 0) {
		ssize_t n = read(c->fds[s], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(c->fds[s]);
			c->fds[s] = -1;
			return;
		}
		if (c->on_data)
			c->on_data(c->arg, (enum spawn_stream)s, buf, (size_t)n);
	}
}

static bool any_open(const struct spawn_child *c)
{
	for (int s = 0; s < SPAWN_STREAMS; s++)
		if (c->fds[s] >= 0)
			return true;
	return false;
}

static bool running(const struct spawn_child *c)
{
	return c->pid > 0 && !c->exited && any_open(c);
}

/* True once the child has exited (not reaped: WNOWAIT keeps its group alive
 * for the kill that follows). */
static bool has_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

void spawn_run(struct spawn_child *kids, size_t n, double deadline)
{
	for (size_t i = 0; i < n; i++) {
		struct spawn_child *c = &kids[i];
		c->pid = 0;
		c->error[0] = '\0';
		c->killed = c->exited = false;
		c->exit_code = -1;
		c->signal = 0;
		for (int s = 0; s < SPAWN_STREAMS; s++)
			c->fds[s] = -1;
		c->start = c->end = monotonic_seconds();
		start(c);
	}
	struct pollfd *pfds = xcalloc(SPAWN_STREAMS * n + 1, sizeof(*pfds));
	for (;;) {
		size_t np = 0, alive = 0;
		for (size_t i = 0; i < n; i++) {
			if (!running(&kids[i]))
				continue;
			alive++;
			for (int s = 0; s < SPAWN_STREAMS; s++)
				if (kids[i].fds[s] >= 0)
					pfds[np++] = (struct pollfd){ .fd = kids[i].fds[s], .events = POLLIN };
		}
		if (!alive)
			break;
		double left = deadline - monotonic_seconds();
		if (left <= 0)
			break;
		/* wake at least every 50 ms: a child that exits while a grandchild
		 * holds its pipes open gives no EOF */
		int ms = left > 0.05 ? 50 : (int)(left * 1e3) + 1;
		if (poll(pfds, np, ms) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < n; i++) {
			struct spawn_child *c = &kids[i];
			if (!running(c))
				continue;
			for (int s = 0; s < SPAWN_STREAMS; s++)
				drain(c, s);
			if (has_exited(c->pid)) {
				c->exited = true;
				for (int s = 0; s < SPAWN_STREAMS; s++)
					drain(c, s);
			}
		}
	}
	free(pfds);
	double now = monotonic_seconds();
	for (size_t i = 0; i < n; i++) {
		struct spawn_child *c = &kids[i];
		c->end = now;
		if (c->pid <= 0)
			continue;
		if (!c->exited && any_open(c) && !has_exited(c->pid))
			c->killed = true;
		/* the whole group, always: nothing started here survives the call */
		kill(-c->pid, SIGKILL);
		int status = 0;
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		for (int s = 0; s < SPAWN_STREAMS; s++) {
			drain(c, s);
			if (c->fds[s] >= 0) { /* a grandchild outside the group holds it */
				close(c->fds[s]);
				c->fds[s] = -1;
			}
		}
		if (WIFEXITED(status))
			c->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			c->signal = WTERMSIG(status);
	}
}
