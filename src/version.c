/* Version numbers for callers that cannot see the header's macros. */
#include "ebm.h"

const char *ebm_version_string(void) { return EBM_VERSION_STRING; }
int ebm_version_number(void) { return EBM_VERSION_NUMBER; }
int ebm_abi_version(void) { return EBM_ABI_VERSION; }
