/* request_deadline.c: a bound on the time one HTTP request of gpugate serve
 * may take, however slowly its bytes come. libmicrohttpd's connection
 * timeout (MHD_OPTION_CONNECTION_TIMEOUT) is an idle timeout: it starts
 * again on every byte received (MHD_update_last_activity_, connection.c of
 * 0.9.75), so a client trickling one byte every few seconds keeps its
 * connection, one of the server's few slots, for as long as it likes. */
#ifndef GPUGATE_SERVE_REQUEST_DEADLINE_H
#define GPUGATE_SERVE_REQUEST_DEADLINE_H

#include <microhttpd.h>

struct request_deadline;

/* Starts the watcher: from then on a connection whose request has taken
 * longer than limit seconds (since the connection was accepted, or since
 * its previous answer was sent) is ended. NULL when no thread can start. */
struct request_deadline *request_deadline_start(double limit);

/* Given to libmicrohttpd with the watcher as their closure:
 * MHD_OPTION_NOTIFY_CONNECTION, request_deadline_connection, rd,
 * MHD_OPTION_NOTIFY_COMPLETED, request_deadline_completed, rd. */
void request_deadline_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
				 enum MHD_ConnectionNotificationCode code);
void request_deadline_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
				enum MHD_RequestTerminationCode why);

/* Ends the watcher; after MHD_stop_daemon (which notifies every close). */
void request_deadline_stop(struct request_deadline *rd);

#endif
