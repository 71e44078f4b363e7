"""The shared library and its functions, with ctypes signatures.

ctypes, not cffi: it is in the standard library, so the package needs no
compiler and no dependency beyond numpy, and the header's declarations are
simple enough (no structs, no callbacks, no varargs) that nothing is lost.
The signatures are not written by hand: they are parsed from the header's
own declarations (ebm._abi.DECLARATIONS, generated from include/ebm.h), and
python/tests/test_abi.py checks those against cffi's parse of the header and
against the library's exported symbols.

Which library: $EBM_LIBRARY if set; else the copy installed inside this
package (libebm.so.0, put there by `make python`); else lib/libebm.so.0 of
the source tree this package sits in; else the system's libebm.so.0.
"""
import ctypes
import operator
import os
import re
import types

from . import _abi

_SCALARS = {
    "void": None,
    "int": ctypes.c_int,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "uint32_t": ctypes.c_uint32,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
}

_DECL = re.compile(r"^(?P<ret>.+?)\s*(?P<name>ebm_\w+)\((?P<args>.*)\)$")


def _ctype(decl, is_result):
    """ctypes type of a C type as the header writes it ('const float *x')."""
    if "*" not in decl:
        words = [w for w in decl.split() if w != "const"]
        if not words:
            raise ValueError("no type in %r" % decl)
        return _SCALARS[words[0]]
    if is_result:
        if decl.replace(" ", "") != "constchar*":
            raise ValueError("unexpected result type %r" % decl)
        return ctypes.c_char_p
    # Arrays and handles go by address: numpy gives them as integers.
    return ctypes.c_void_p


def parse(decl):
    """(name, restype, [argtypes]) of one declaration."""
    m = _DECL.match(decl)
    if m is None:
        raise ValueError("cannot parse %r" % decl)
    args = m.group("args").strip()
    argtypes = [] if args == "void" else [_ctype(a, False) for a in args.split(",")]
    return m.group("name"), _ctype(m.group("ret"), True), argtypes


def _candidates():
    env = os.environ.get("EBM_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(here, "libebm.so.0"),
        os.path.join(os.path.dirname(os.path.dirname(here)), "lib", "libebm.so.0"),
        "libebm.so.0",
    ]


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (missing)" % path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as exc:
            tried.append("%s (%s)" % (path, exc))
    raise ImportError("ebm: cannot load libebm: tried " + "; ".join(tried) +
                      ". Build it with `make` and install the package with `make python`, "
                      "or set EBM_LIBRARY to the library's path.")


lib, path = _load()

# The values each integer type of the header holds.
_RANGES = {
    ctypes.c_int: (-(1 << 31), (1 << 31) - 1),
    ctypes.c_int64: (-(1 << 63), (1 << 63) - 1),
    ctypes.c_uint64: (0, (1 << 64) - 1),
    ctypes.c_uint32: (0, (1 << 32) - 1),
    ctypes.c_size_t: (0, (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1),
}


INT64 = _RANGES[ctypes.c_int64]


class RangeError(OverflowError, ValueError):
    """An integer argument outside what its C type, or the binding, takes:
    an OverflowError as Python's own C conversions raise, and a ValueError
    as the binding's other bad values."""


def check_range(value, bounds, what):
    """value (an int) if lo <= value <= hi, else RangeError naming what."""
    if not bounds[0] <= value <= bounds[1]:
        raise RangeError("%s is %d; it must be from %d to %d" % (what, value, *bounds))
    return value


class _Checked:
    """A library function whose integer arguments are checked against their
    C types before the call: ctypes passes 2^64 + 3 as 3 without a word.
    (An instance, not a function, so that it stays unbound as a class
    attribute, as ctypes functions do.)"""

    __slots__ = ("fn", "name", "checks")

    def __init__(self, fn, name, checks):
        self.fn, self.name, self.checks = fn, name, checks

    @property
    def __name__(self):
        """The C function's name, as a ctypes function has it."""
        return self.name

    def __call__(self, *args):
        for i, param, bounds in self.checks:
            try:
                v = operator.index(args[i])
            except TypeError:
                continue  # not an integer: ctypes refuses it itself
            check_range(v, bounds, "%s: %s" % (self.name, param))
        return self.fn(*args)


def _param_names(decl):
    args = _DECL.match(decl).group("args").strip()
    return [] if args == "void" else [a.split()[-1].lstrip("*") for a in args.split(",")]


# name -> the C declaration it was bound from; `checked`: the functions, the
# ones with integer arguments as _Checked (the binding calls these).
bound = {}
checked = types.SimpleNamespace()
for _decl in _abi.DECLARATIONS:
    _name, _restype, _argtypes = parse(_decl)
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        raise ImportError("ebm: %s does not export %s: the package and the library are from "
                          "different versions" % (path, _name)) from None
    _fn.restype = _restype
    _fn.argtypes = _argtypes
    bound[_name] = _decl
    _checks = tuple((i, p, _RANGES[t]) for i, (t, p) in
                    enumerate(zip(_argtypes, _param_names(_decl))) if t in _RANGES)
    setattr(checked, _name, _Checked(_fn, _name, _checks) if _checks else _fn)


def version():
    """The version of the libebm in use, e.g. "0.1.0"."""
    return checked.ebm_version_string().decode()
