/* The control-field reader of stack verify (deb_parse_control) on the text of
 * a control file, which comes from a downloaded package: any bytes, NULs
 * included; what it accepts has its three fields. */
#include "fuzz.h"
#include "provision/deb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deb_control c;
	memset(&c, 0, sizeof(c));
	char err[300];
	int rc = deb_parse_control((const char *)data, size, &c, err, sizeof(err));
	if (rc == 0 && (!c.package || !c.version || !c.architecture))
		abort(); /* accepted means the three fields are there */
	const char *fields[] = { c.package, c.version, c.architecture, c.depends, c.pre_depends };
	for (size_t i = 0; rc == 0 && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] && strchr(fields[i], '\n'))
			abort(); /* one field, one line (continuations are joined) */
	deb_control_free(&c);
	return 0;
}
