/* The per-request time bound of gpugate serve (request_deadline.h says
 * why libmicrohttpd's own timeout is not one).
 *
 * Every connection is tracked from libmicrohttpd's "started" notice to its
 * "closed" notice, with the time its current request began: when the
 * connection was accepted, then when its previous answer was sent (the
 * "completed" notice of a kept-alive connection). A watcher thread looks
 * every WATCH_STEP seconds and shuts down the socket of any connection whose
 * request has taken longer than the limit. shutdown(2), never close(2): the
 * descriptor stays libmicrohttpd's, which reads end of file and closes the
 * connection in its own thread. libmicrohttpd 0.9.75 sends the "closed"
 * notice before it closes the descriptor (MHD_cleanup_connections,
 * daemon.c), and the notice takes the same lock as the watcher, so the
 * descriptor the watcher shuts down is always the tracked connection's. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "lib/monotonic_wait.h"
#include "lib/util.h"
#include "request_deadline.h"

/* How often the watcher looks: a request is ended at most this late. */
#define WATCH_STEP 0.25

struct tracked {
	int fd;
	double since; /* monotonic: when the current request began */
	bool shut;    /* shut down already; libmicrohttpd's close notice is on its way */
	struct tracked *prev, *next;
};

struct request_deadline {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* cuts the watcher's sleep short at the end */
	bool stop;
	double limit;
	struct tracked *head;
	pthread_t watcher;
};

static void *watch(void *arg)
{
	struct request_deadline *rd = arg;
	pthread_mutex_lock(&rd->lock);
	while (!rd->stop) {
		double now = monotonic_seconds();
		for (struct tracked *t = rd->head; t; t = t->next)
			if (!t->shut && now - t->since > rd->limit) {
				shutdown(t->fd, SHUT_RDWR);
				t->shut = true;
			}
		struct timespec until = monotonic_timespec(now + WATCH_STEP);
		pthread_cond_timedwait(&rd->wake, &rd->lock, &until);
	}
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

struct request_deadline *request_deadline_start(double limit)
{
	struct request_deadline *rd = xcalloc(1, sizeof(*rd));
	rd->limit = limit;
	pthread_mutex_init(&rd->lock, NULL);
	monotonic_cond_init(&rd->wake);
	if (pthread_create(&rd->watcher, NULL, watch, rd) != 0) {
		pthread_cond_destroy(&rd->wake);
		pthread_mutex_destroy(&rd->lock);
		free(rd);
		return NULL;
	}
	return rd;
}

void request_deadline_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
				 enum MHD_ConnectionNotificationCode code)
{
	struct request_deadline *rd = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!info)
			return; /* not tracked: the idle timeout still bounds it */
		struct tracked *t = xcalloc(1, sizeof(*t));
		t->fd = info->connect_fd;
		t->since = monotonic_seconds();
		pthread_mutex_lock(&rd->lock);
		t->next = rd->head;
		if (rd->head)
			rd->head->prev = t;
		rd->head = t;
		pthread_mutex_unlock(&rd->lock);
		*socket_context = t;
		return;
	}
	struct tracked *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&rd->lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		rd->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&rd->lock);
	*socket_context = NULL;
	free(t);
}

/* An answer was sent (or the request ended): a kept-alive connection's
 * next request starts its clock now. */
void request_deadline_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
				enum MHD_RequestTerminationCode why)
{
	(void)con_cls;
	(void)why;
	struct request_deadline *rd = cls;
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct tracked *t = info ? info->socket_context : NULL;
	if (!t)
		return;
	pthread_mutex_lock(&rd->lock);
	t->since = monotonic_seconds();
	pthread_mutex_unlock(&rd->lock);
}

void request_deadline_stop(struct request_deadline *rd)
{
	if (!rd)
		return;
	pthread_mutex_lock(&rd->lock);
	rd->stop = true;
	pthread_cond_signal(&rd->wake);
	pthread_mutex_unlock(&rd->lock);
	pthread_join(rd->watcher, NULL);
	while (rd->head) { /* none once libmicrohttpd stopped; never leaked */
		struct tracked *t = rd->head;
		rd->head = t->next;
		free(t);
	}
	pthread_cond_destroy(&rd->wake);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}
