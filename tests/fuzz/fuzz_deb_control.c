/* The control-field reader of stack verify (deb_parse_control) on the text of
 * a control file, which comes from a downloaded package. Parsed twice into
 * the same struct, as a second stanza would: fields are replaced, not leaked. */
#include "fuzz.h"
#include "provision/deb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	struct deb_control c;
	memset(&c, 0, sizeof(c));
	deb_parse_control(text, &c);
	deb_parse_control(text, &c);
	const char *fields[] = { c.package, c.version, c.architecture, c.depends, c.pre_depends };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] && strchr(fields[i], '\n'))
			abort(); /* one field, one line (continuations are joined) */
	deb_control_free(&c);
	free(text);
	return 0;
}
