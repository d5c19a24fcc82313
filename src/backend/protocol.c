/* Both ends of the probe line protocol: the child writes stage and result
 * lines, unbuffered, because the next API call may hang or crash; the parent
 * parses them. */
#include "protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "../lib/safe_io.h"
#include "../lib/util.h"

static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

void probe_stage(struct probe_channel *ch, const char *stage, const char *device)
{
	char line[128];
	int n = device && is_token(device) ? snprintf(line, sizeof(line), "stage %s %s\n", stage, device)
					   : snprintf(line, sizeof(line), "stage %s\n", stage);
	if (n > 0 && (size_t)n < sizeof(line))
		(void)safe_write_all(ch->fd, line, (size_t)n); /* failed: the parent has gone */
}

static void json_line(struct probe_channel *ch, const char *tag, json_t *j)
{
	/* JSON_COMPACT never emits a raw newline: strings escape it */
	char *text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!text)
		return;
	char *line = xasprintf("%s %s\n", tag, text);
	(void)safe_write_all(ch->fd, line, strlen(line)); /* failed: the parent has gone */
	free(line);
	free(text);
}

void probe_result(struct probe_channel *ch, json_t *result)
{
	json_line(ch, "result", result);
}

void probe_enumerated(struct probe_channel *ch, json_t *so_far)
{
	json_line(ch, "enumerated", so_far);
}

static void bad(struct probe_line *out, const char *why)
{
	out->kind = PROBE_LINE_BAD;
	snprintf(out->error, sizeof(out->error), "%s", why);
}

void probe_parse_line(const char *line, struct probe_line *out)
{
	memset(out, 0, sizeof(*out));
	if (strncmp(line, "stage ", 6) == 0) {
		const char *name = line + 6;
		size_t len = strcspn(name, " ");
		if (len == 0 || len >= sizeof(out->stage))
			return bad(out, "stage line without a valid stage name");
		memcpy(out->stage, name, len);
		if (!is_token(out->stage))
			return bad(out, "stage name with control or non-ASCII characters");
		const char *dev = name + len;
		if (*dev == ' ') {
			dev++;
			if (strlen(dev) >= sizeof(out->device) || !is_token(dev))
				return bad(out, "stage line with an invalid device");
			strcpy(out->device, dev);
		}
		out->kind = PROBE_LINE_STAGE;
		return;
	}
	bool result = strncmp(line, "result ", 7) == 0;
	if (result || strncmp(line, "enumerated ", 11) == 0) {
		json_error_t err;
		json_t *j = json_loads(line + (result ? 7 : 11), JSON_REJECT_DUPLICATES, &err);
		if (!j)
			return bad(out, result ? "result line is not JSON" : "enumerated line is not JSON");
		if (!json_is_object(j)) {
			json_decref(j);
			return bad(out, result ? "result line is not a JSON object"
					       : "enumerated line is not a JSON object");
		}
		out->kind = result ? PROBE_LINE_RESULT : PROBE_LINE_ENUMERATED;
		out->result = j;
		return;
	}
	bad(out, "neither a stage, an enumerated nor a result line");
}
