/* One HTTP request into memory (HEAD or a small GET), with the same retry
 * policy as the downloads: 5xx, 429 and network errors are retried with
 * backoff. Used for the hub's metadata requests. */
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

#endif
