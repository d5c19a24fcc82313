/* The HTTP side of `gpugate serve`, on libmicrohttpd (Debian
 * libmicrohttpd12): one internal polling thread (epoll), answers made from
 * the published snapshot without copying it (a reference held until
 * libmicrohttpd frees the response), so no request waits on a check run.
 *
 * Limits (libmicrohttpd options, microhttpd.h): at most CONNECTIONS_MAX
 * connections, PER_IP_MAX from one address; a connection idle for
 * IDLE_TIMEOUT seconds is closed (a slowloris that stalls); a request that
 * takes longer than REQUEST_LIMIT seconds from its first byte awaited to its
 * answer sent is ended however its bytes trickle (request_deadline.c: the
 * idle timeout restarts on each byte); request line and headers must fit
 * MEMORY_LIMIT bytes (more: 431 and the connection closed); at most
 * HEADERS_MAX headers; no request body; GET and HEAD only. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "request_deadline.h"
#include "serve.h"

#define CONNECTIONS_MAX 128u
#define PER_IP_MAX      64u
#define IDLE_TIMEOUT    5u
#define REQUEST_LIMIT   10.0
#define MEMORY_LIMIT    ((size_t)16384)
#define HEADERS_MAX     64
#define LISTEN_BACKLOG  64

struct http_server {
	struct MHD_Daemon *daemon;
	struct request_deadline *deadline;
	int fd;
};

struct held {
	struct serve_state *state;
	struct snapshot *snap;
};

static void release_held(void *cls)
{
	struct held *h = cls;
	snapshot_put(h->state, h->snap);
	free(h);
}

static enum MHD_Result send_static(struct MHD_Connection *conn, unsigned status, const char *body,
				   const char *extra_header, const char *extra_value)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (extra_header)
		MHD_add_response_header(resp, extra_header, extra_value);
	enum MHD_Result rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* A body that is part of snap (which the caller holds a reference on;
 * the response takes it over). */
static enum MHD_Result send_snapshot(struct MHD_Connection *conn, struct serve_state *state, struct snapshot *snap,
				     unsigned status, const char *body, size_t len, const char *type)
{
	struct held *h = xmalloc(sizeof(*h));
	h->state = state;
	h->snap = snap;
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)body, release_held, h);
	if (!resp) {
		release_held(h);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static bool loop_alive(struct serve_state *state, double now)
{
	pthread_mutex_lock(&state->lock);
	bool alive = !state->running || now - state->run_started <= state->run_limit + 2 * SERVE_KILL_GRACE;
	pthread_mutex_unlock(&state->lock);
	return alive;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	(void)con_cls;
	struct serve_state *state = cls;
	if (*upload_data_size)
		return MHD_NO; /* a body nobody announced: drop the connection */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n", MHD_HTTP_HEADER_ALLOW,
				   "GET, HEAD");
	if (MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL) > HEADERS_MAX)
		return send_static(conn, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "too many headers\n", NULL, NULL);
	const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    (length && strcmp(length, "0") != 0))
		return send_static(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body here\n", NULL, NULL);

	double now = monotonic_seconds();
	if (strcmp(url, "/healthz") == 0)
		return loop_alive(state, now)
			       ? send_static(conn, MHD_HTTP_OK, "ok\n", NULL, NULL)
			       : send_static(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					     "the check loop is stuck: a run outlived its deadline\n", NULL, NULL);
	bool metrics = strcmp(url, "/metrics") == 0, ready = strcmp(url, "/readyz") == 0,
	     report = strcmp(url, "/report.json") == 0;
	if (!metrics && !ready && !report)
		return send_static(conn, MHD_HTTP_NOT_FOUND, "not found: /metrics, /healthz, /readyz, /report.json\n",
				   NULL, NULL);
	struct snapshot *snap = snapshot_get(state);
	if (metrics)
		return send_snapshot(conn, state, snap, MHD_HTTP_OK, snap->metrics, snap->metrics_len,
				     "text/plain; version=0.0.4; charset=utf-8");
	if (ready) {
		unsigned status = serve_ready(state, snap, now) ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
		return send_snapshot(conn, state, snap, status, snap->ready_line, snap->ready_len,
				     "text/plain; charset=utf-8");
	}
	if (!snap->json) {
		snapshot_put(state, snap);
		return send_static(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no report: see /readyz\n", NULL, NULL);
	}
	return send_snapshot(conn, state, snap, MHD_HTTP_OK, snap->json, snap->json_len, "application/json");
}

/* "ADDR:PORT", "[ADDR6]:PORT". */
static int listen_socket(const char *listen_on, char *why, size_t whysize)
{
	char host[256];
	const char *colon = strrchr(listen_on, ':');
	size_t hostlen = colon ? (size_t)(colon - listen_on) : 0;
	if (!colon || !hostlen || !colon[1] || hostlen >= sizeof(host)) {
		snprintf(why, whysize, "--listen: '%s' is not ADDR:PORT (such as 127.0.0.1:9847 or [::1]:9847)",
			 listen_on);
		return -1;
	}
	memcpy(host, listen_on, hostlen);
	host[hostlen] = '\0';
	if (host[0] == '[' && host[hostlen - 1] == ']') {
		memmove(host, host + 1, hostlen - 2);
		host[hostlen - 2] = '\0';
	}
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535) {
		snprintf(why, whysize, "--listen: '%s' is not a port from 1 to 65535", colon + 1);
		return -1;
	}
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int gai = getaddrinfo(host, colon + 1, &hints, &ai);
	if (gai) {
		snprintf(why, whysize, "--listen: '%s' is no IP address: %s", host, gai_strerror(gai));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(why, whysize, "cannot listen on %s: %s", listen_on, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

struct http_server *http_start(struct serve_state *state, const char *listen_on, char *why, size_t whysize)
{
	int fd = listen_socket(listen_on, why, whysize);
	if (fd < 0)
		return NULL;
	struct request_deadline *deadline = request_deadline_start(REQUEST_LIMIT);
	if (!deadline) {
		snprintf(why, whysize, "cannot start the request deadline's thread");
		close(fd);
		return NULL;
	}
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, handle, state, MHD_OPTION_LISTEN_SOCKET,
		fd, MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX, MHD_OPTION_PER_IP_CONNECTION_LIMIT, PER_IP_MAX,
		MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT, MHD_OPTION_CONNECTION_MEMORY_LIMIT, MEMORY_LIMIT,
		MHD_OPTION_NOTIFY_CONNECTION, request_deadline_connection, deadline, MHD_OPTION_NOTIFY_COMPLETED,
		request_deadline_completed, deadline, MHD_OPTION_END);
	if (!d) {
		snprintf(why, whysize, "libmicrohttpd could not start on %s", listen_on);
		request_deadline_stop(deadline);
		close(fd);
		return NULL;
	}
	struct http_server *s = xcalloc(1, sizeof(*s));
	s->daemon = d;
	s->deadline = deadline;
	s->fd = fd;
	return s;
}

void http_stop(struct http_server *server)
{
	if (!server)
		return;
	MHD_stop_daemon(server->daemon); /* closes the listening socket too */
	request_deadline_stop(server->deadline);
	free(server);
}
