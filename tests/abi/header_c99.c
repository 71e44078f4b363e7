/* The public header compiles alone as C99 with -pedantic -Werror. */
#include <ebm.h>

int main(void) { return ebm_abi_version() == EBM_ABI_VERSION ? 0 : 1; }
