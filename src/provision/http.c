#include "http.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define BODY_LIMIT (16u << 20)

static void clear(struct http_response *r)
{
	char **fields[] = { &r->repo_commit, &r->linked_etag, &r->etag,          &r->linked_size, &r->content_length,
			    &r->location,    &r->error_code,  &r->error_message, &r->link };
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		free(*fields[i]);
		*fields[i] = NULL;
	}
	sb_release(&r->body);
	r->code = 0;
	r->retry_after = -1;
}

void http_response_free(struct http_response *r)
{
	clear(r);
}

static void keep(char **slot, const char *value)
{
	free(*slot);
	*slot = xstrdup(value);
	text_sanitize(*slot);
}

void http_header_line(struct http_response *r, const char *p, size_t n)
{
	char *line = xstrndup(p, n);
	line[strcspn(line, "\r\n")] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		clear(r);
	} else {
		char *colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			char *v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			static const struct {
				const char *name;
				size_t off;
			} map[] = {
				{ "X-Repo-Commit", offsetof(struct http_response, repo_commit) },
				{ "X-Linked-Etag", offsetof(struct http_response, linked_etag) },
				{ "ETag", offsetof(struct http_response, etag) },
				{ "X-Linked-Size", offsetof(struct http_response, linked_size) },
				{ "Content-Length", offsetof(struct http_response, content_length) },
				{ "Location", offsetof(struct http_response, location) },
				{ "X-Error-Code", offsetof(struct http_response, error_code) },
				{ "X-Error-Message", offsetof(struct http_response, error_message) },
				{ "Link", offsetof(struct http_response, link) },
			};
			for (size_t i = 0; i < ARRAY_SIZE(map); i++)
				if (strcasecmp(line, map[i].name) == 0)
					keep((char **)((char *)r + map[i].off), v);
			if (strcasecmp(line, "Retry-After") == 0)
				r->retry_after = http_retry_after_seconds(v);
		}
	}
	free(line);
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	size_t n = size * nmemb;
	http_header_line(ud, p, n);
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct http_response *r = ud;
	size_t n = size * nmemb;
	if (r->body.len + n > BODY_LIMIT)
		return 0;
	sb_add(&r->body, p, n);
	return n;
}

bool http_transient_error(int curl_code)
{
	switch ((CURLcode)curl_code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

bool http_retry_allowed(int curl_code, int attempt, int retries)
{
	if (curl_code == CURLE_COULDNT_RESOLVE_HOST || curl_code == CURLE_COULDNT_RESOLVE_PROXY ||
	    curl_code == CURLE_COULDNT_CONNECT)
		return attempt < 1 && retries > 0;
	return attempt < retries && (curl_code == CURLE_OK || http_transient_error(curl_code));
}

double http_retry_after_seconds(const char *value)
{
	if (!value)
		return -1;
	while (*value == ' ' || *value == '\t')
		value++;
	if (*value >= '0' && *value <= '9') { /* delta-seconds = 1*DIGIT */
		char *end;
		double v = strtod(value, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		return *end ? -1 : v;
	}
	time_t when = curl_getdate(value, NULL); /* an HTTP-date */
	if (when == -1)
		return -1;
	double left = difftime(when, time(NULL));
	return left > 0 ? left : 0;
}

int http_retry_wait(int attempt, double backoff, double retry_after, double deadline, double *wait, char *note,
		    size_t note_size)
{
	double w = backoff * pow(2, attempt);
	if (w > 30)
		w = 30;
	note[0] = '\0';
	if (retry_after > w) {
		if (retry_after > HTTP_RETRY_AFTER_MAX)
			snprintf(note, note_size,
				 " (the server asked for %.0f s with Retry-After; waiting at most %.0f s)", retry_after,
				 HTTP_RETRY_AFTER_MAX);
		else
			snprintf(note, note_size, " (Retry-After: %.0f s)", retry_after);
		w = retry_after < HTTP_RETRY_AFTER_MAX ? retry_after : HTTP_RETRY_AFTER_MAX;
	}
	*wait = w;
	double left = deadline > 0 ? deadline - monotonic_seconds() : 0;
	/* a server that asks for longer than the time left cannot be honoured:
	 * said at once, rather than after a capped wait that it would refuse */
	if (deadline > 0 && (w >= left || retry_after >= left)) {
		if (retry_after > 0 && retry_after >= left)
			snprintf(
				note, note_size,
				"the server asked to retry after %.0f s (Retry-After), more than the %.0f s left of the "
				"overall timeout (--timeout)",
				retry_after, left > 0 ? left : 0);
		else
			snprintf(note, note_size, "the overall timeout ran out (--timeout)");
		return -1;
	}
	return 0;
}

int http_fetch(const struct http_request *req, struct http_response *r)
{
	memset(r, 0, sizeof(*r));
	sb_init(&r->body);
	CURL *e = req->handle ? req->handle : curl_easy_init();
	if (!e) {
		snprintf(r->error, sizeof(r->error), "libcurl could not create a request");
		return -1;
	}
	char curl_err[CURL_ERROR_SIZE];
	for (int attempt = 0;; attempt++) {
		clear(r);
		curl_err[0] = '\0';
		curl_easy_reset(e);
		curl_easy_setopt(e, CURLOPT_URL, req->url);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, req->headers);
		curl_easy_setopt(e, CURLOPT_NOBODY, req->head ? 1L : 0L);
		curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, req->follow_redirects ? 1L : 0L);
		curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
		curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_USERAGENT, "gpugate-provision/" GPUGATE_VERSION);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, req->idle_seconds > 0 ? req->idle_seconds : 30L);
		if (req->deadline > 0) {
			double left = req->deadline - monotonic_seconds();
			if (left <= 0) {
				snprintf(r->error, sizeof(r->error), "the overall timeout ran out (--timeout)");
				if (!req->handle)
					curl_easy_cleanup(e);
				return -1;
			}
			curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
		}
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, curl_err);
		curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
		CURLcode rc = curl_easy_perform(e);
		long code = 0;
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
		r->code = code;
		bool again;
		if (rc != CURLE_OK) {
			snprintf(r->error, sizeof(r->error), "%s", curl_err[0] ? curl_err : curl_easy_strerror(rc));
			text_sanitize(r->error);
			again = http_transient_error(rc);
		} else {
			again = code == 429 || code >= 500;
		}
		if (!again || !http_retry_allowed(rc, attempt, req->retries)) {
			if (!req->handle)
				curl_easy_cleanup(e);
			return rc == CURLE_OK ? 0 : -1;
		}
		char why[420], note[200];
		if (rc != CURLE_OK)
			snprintf(why, sizeof(why), "%s", r->error);
		else
			snprintf(why, sizeof(why), "HTTP %ld%s", code, code == 429 ? " (rate limited)" : "");
		double wait;
		if (http_retry_wait(attempt, req->backoff, r->retry_after, req->deadline, &wait, note, sizeof(note)) <
		    0) {
			snprintf(r->error, sizeof(r->error), "%.199s; last: %.190s", note, why);
			if (!req->handle)
				curl_easy_cleanup(e);
			return -1;
		}
		strncat(why, note, sizeof(why) - strlen(why) - 1);
		fprintf(stderr, "gpugate: %s: %s; retrying in %.1f s\n", req->url, why, wait);
		sleep_seconds(wait);
	}
}
