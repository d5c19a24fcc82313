#include "provision.h"
int stack_main(int argc, char **argv) { (void)argc; (void)argv; return PROV_USAGE; }
