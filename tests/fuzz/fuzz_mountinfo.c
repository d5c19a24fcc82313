/* The mountinfo parser over an exact-size buffer (proc files carry no NUL),
 * then lookups and option tests on whatever it accepted. */
#include "fuzz.h"
#include "lib/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/", "/dev/dri", "/a b", "/proc/self", "" };
	char *content = fuzz_exact(data, size);
	struct mountinfo mi;
	char err[512];
	if (mountinfo_parse(content, size, &mi, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < mi.count; i++) {
			const struct mount_entry *m = &mi.entries[i];
			if (!m->root || !m->mount_point || !m->mount_options || !m->fstype || !m->source ||
			    !m->super_options)
				abort(); /* an accepted entry has every field */
			(void)mount_is_read_only(m);
			(void)mount_option_has(m->mount_options, "ro");
		}
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			(void)mountinfo_find(&mi, paths[i]);
		mountinfo_free(&mi);
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort(); /* a failure always says why */
	}
	free(content);
	return 0;
}
