#include "embedded.h"

#include <string.h>

const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name)
{
	for (; table->name; table++)
		if (strcmp(table->name, name) == 0)
			return table;
	return NULL;
}
