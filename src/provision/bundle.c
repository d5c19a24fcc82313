#include "provision.h"
int bundle_main(int argc, char **argv, const char *g) { (void)argc; (void)argv; (void)g; return PROV_USAGE; }
