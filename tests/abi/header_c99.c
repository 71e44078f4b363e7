/* The public header compiles alone as C99 with -pedantic -Werror, and a
 * <stddef.h> included after it is whole (ebm.h takes only size_t from it). */
#include <ebm.h>
#include <stddef.h>

struct pair { char c; double d; };

int main(void)
{
    ptrdiff_t off = (ptrdiff_t)offsetof(struct pair, d);
    return ebm_abi_version() == EBM_ABI_VERSION && off > 0 ? 0 : 1;
}
