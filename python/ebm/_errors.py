"""EbmError and its subclasses: a failed C call as a Python exception.

A failed call raises EbmError (with .code, .name, the library's message and
the C function's name), which is also a ValueError, MemoryError or OSError
by its code. As in C, a failed call changes nothing.
"""
from ._abi import Status
from ._lib import checked as _C

# Errors


class EbmError(Exception):
    """A libebm call failed.

    .code is the result code (a negative int), .name its constant name
    ("EBM_EVALUE"), .message the library's message and .function the C
    function that failed. Errors of shape and value (ENULL, ESHAPE, EVALUE,
    EFORMAT, EUNSUPPORTED) are also ValueError, ENOMEM is also MemoryError
    and EIO also OSError.
    """

    def __init__(self, code, message, function=""):
        self.code = int(code)
        self.name = _C.ebm_error_name(self.code).decode()
        self.message = message
        self.function = function
        super().__init__("%s: %s: %s" % (function, self.name, message) if function else
                         "%s: %s" % (self.name, message))

    def __reduce__(self):
        return (_raise_type(self.code), (self.code, self.message, self.function))


class EbmValueError(EbmError, ValueError):
    """EbmError for ENULL, ESHAPE, EVALUE, EFORMAT and EUNSUPPORTED."""


class EbmMemoryError(EbmError, MemoryError):
    """EbmError for ENOMEM."""


class EbmIOError(EbmError, OSError):
    """EbmError for EIO."""


_ERROR_TYPES = {
    Status.ENULL: EbmValueError,
    Status.ESHAPE: EbmValueError,
    Status.EVALUE: EbmValueError,
    Status.EFORMAT: EbmValueError,
    Status.EUNSUPPORTED: EbmValueError,
    Status.ENOMEM: EbmMemoryError,
    Status.EIO: EbmIOError,
}


def _raise_type(code):
    return _ERROR_TYPES.get(code, EbmError)


def _fail(code, function, message):
    raise _raise_type(code)(code, message, function)


def _check(rc, function, errmsg, handle):
    """rc if it is not an error, else raise with the message of handle."""
    if rc < 0:
        msg = errmsg(handle)
        _fail(rc, function, msg.decode(errors="replace") if msg else "")
    return rc

