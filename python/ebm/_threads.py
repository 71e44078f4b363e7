"""The threads of the library's own row loops (ebm.h, "Threads")."""
import ctypes

from ._errors import _fail
from ._lib import checked as _C

_ERRBUF = 512


def set_num_threads(n=0):
    """Set the threads of the library's row loops for the process: 1 to 256,
    or 0 for the default (the environment variable EBM_NUM_THREADS, else the
    CPUs the process may run on). Results are the same bits for every count;
    the BLAS keeps its own threads (OPENBLAS_NUM_THREADS, ...)."""
    err = ctypes.create_string_buffer(_ERRBUF)
    rc = _C.ebm_set_num_threads(n, err, _ERRBUF)
    if rc < 0:
        _fail(rc, "ebm_set_num_threads", err.value.decode(errors="replace"))


def get_num_threads():
    """The threads the library's row loops may use now."""
    return _C.ebm_get_num_threads()
