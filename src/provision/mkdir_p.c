/* mkdir -p for the provisioning commands (provision.h), in its own file so
 * that the fuzz targets link the provisioning objects without main.c. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "lib/util.h"
#include "provision.h"

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	if (rc == 0) {
		struct stat st;
		if (stat(path, &st) < 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
	}
	free(p);
	return rc;
}
