/* The headers of the hub's HEAD .../resolve/ answer, line by line as libcurl
 * hands them over (http_header_line), then the file metadata read from them
 * (hub_resolve_meta): the etag becomes a file name under blobs/ and the hash
 * the body is checked against, so it must be a lowercase git blob id or
 * sha256 whatever the server sent. */
#include "lib/digest.h"
#include "fuzz.h"
#include "provision/download.h"
#include "provision/hub_answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_response r;
	memset(&r, 0, sizeof(r));
	sb_init(&r.body);
	for (size_t off = 0; off < size;) {
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (data + off)) + 1 : size - off;
		char *line = fuzz_exact(data + off, len); /* exact size: no NUL after it */
		http_header_line(&r, line, len);
		free(line);
		off += len;
	}
	struct hub_meta m;
	char err[600];
	if (hub_resolve_meta(&r, &m, err, sizeof(err)) == 0) {
		/* a blob is named only by a hash it can be checked against */
		if (!digest_is_hex(m.commit, 40) || m.size < 0 ||
		    !(digest_is_lower_hex(m.etag, 40) || digest_is_lower_hex(m.etag, 64)))
			abort();
		hub_meta_free(&m);
	} else if (m.commit || m.etag || !err[0]) {
		abort();
	}
	http_response_free(&r);
	return 0;
}
