// The public header compiles as C++ (with -pedantic -Werror) and links.
#include <ebm.h>

int main()
{
    ebm_model_t *m = nullptr;
    int64_t sizes[2] = {2, 2};
    int rc = ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_SPIN, nullptr, 0);
    ebm_model_destroy(m);
    return rc == EBM_OK ? 0 : 1;
}
