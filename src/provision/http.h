/* One HTTP request into memory (HEAD or a small GET), with the same retry
 * policy as the downloads: 5xx, 429 and network errors are retried with
 * backoff or the server's Retry-After; a refused connection or a failed
 * name lookup once at most. Used for the hub's metadata requests. */
#ifndef GPUGATE_PROVISION_HTTP_H
#define GPUGATE_PROVISION_HTTP_H

#include <stdbool.h>

#include "lib/util.h"

struct curl_slist;

struct http_response {
	long code;
	char *repo_commit;    /* X-Repo-Commit */
	char *linked_etag;    /* X-Linked-Etag */
	char *etag;           /* ETag */
	char *linked_size;    /* X-Linked-Size */
	char *content_length; /* Content-Length */
	char *location;       /* Location */
	char *error_code;     /* X-Error-Code */
	char *error_message;  /* X-Error-Message */
	char *link;           /* Link (the hub's pagination) */
	double retry_after;   /* Retry-After in seconds, or -1 when absent or unreadable */
	struct strbuf body;   /* at most 16 MiB */
	char error[400];      /* transport failure, when the call returns -1 */
};

struct http_request {
	const char *url;
	const struct curl_slist *headers;
	bool head;
	bool follow_redirects;
	int retries;
	double backoff;
	void *handle;      /* a CURL easy handle to reuse (keeps the connection), or NULL */
	long idle_seconds; /* abandon below 1 KiB/s for this long (0: 30 s) */
	double deadline;   /* monotonic_seconds() after which nothing is tried; 0: none */
};

/* Returns 0 when a response arrived (any status), -1 on a transport error
 * (r->error says which). Call http_response_free afterwards either way. */
int http_fetch(const struct http_request *req, struct http_response *r);
void http_response_free(struct http_response *r);
/* One header line as libcurl hands it over (not NUL-terminated, CRLF at the
 * end): "HTTP/..." starts a new response and forgets the fields kept so far;
 * the fields above are kept (trimmed, sanitized); the rest is ignored. */
void http_header_line(struct http_response *r, const char *line, size_t n);
/* Whether a libcurl transfer error (a CURLcode) may pass on a retry: name
 * resolution, connect, timeout, a cut transfer, a reset HTTP/2 stream, TLS
 * set-up. One list for the hub's metadata requests and the file downloads. */
bool http_transient_error(int curl_code);
/* Whether attempt (0: the first) may be followed by another after
 * curl_code: a transient error while attempt < retries, but a refused
 * connection or a failed name lookup (host, proxy) once at most: that
 * answer rarely changes in seconds, and five tries cost 15 s. */
bool http_retry_allowed(int curl_code, int attempt, int retries);
/* A Retry-After value (RFC 9110 10.2.3): delta-seconds or an HTTP-date,
 * as seconds from now (>= 0); -1 when it is neither. */
double http_retry_after_seconds(const char *value);

#define HTTP_RETRY_AFTER_MAX 300.0 /* the longest Retry-After waited for (5 min) */

/* The wait before the attempt after attempt (0: the first): the backoff
 * (backoff * 2^attempt, at most 30 s), or the server's Retry-After when it
 * asks for longer, at most HTTP_RETRY_AFTER_MAX. Returns 0 with *wait and
 * note (words on a Retry-After, or ""), or -1 when the wait, or what the
 * server asked for, would pass deadline (monotonic; 0: none), with note
 * saying so and what the server asked for. One policy for the hub's
 * requests and the downloads. */
int http_retry_wait(int attempt, double backoff, double retry_after, double deadline, double *wait, char *note,
		    size_t note_size);

#endif
