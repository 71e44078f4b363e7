"""Marshalling of arguments: arrays and scalars as the C calls take them.

 - States are 2-D float32 arrays, one row per configuration, layers side by
   side (Model.layer_offset). Other real or integer arrays are converted to
   float32 explicitly (a copy; float64 values are rounded to float32);
   complex, object and string arrays are refused with TypeError. Rows whose
   elements are not adjacent are copied; rows at any stride are read in
   place.
 - Integers are checked against their C types (RangeError) and reals must be
   real numbers: ctypes would wrap or truncate them silently.
"""
import enum
import numbers
import operator

import numpy as np

from ._lib import INT64 as _INT64
from ._lib import check_range as _check_range

_f32 = np.float32

# Arrays


def _float_array(a, name, dtype=_f32):
    """a as an ndarray of dtype (float32 unless said): as is if it has it, else
    converted from real, integer or boolean values; complex, object and
    string arrays raise TypeError (numpy would drop imaginary parts and parse
    strings)."""
    a = np.asarray(a)
    if a.dtype != dtype:
        if a.dtype.kind not in "biuf":
            raise TypeError("%s: dtype %s is not a real or integer type" % (name, a.dtype))
        a = a.astype(dtype)
    return a


def _dense(a, name, dtype=_f32):
    """_float_array(a, name, dtype), contiguous and aligned to its elements
    (copied if not): for a vector the library reads whole. (C reads a float
    at an odd address as undefined behaviour; ascontiguousarray keeps such
    an array as it is.)"""
    return np.require(_float_array(a, name, dtype), requirements="CA")


def _ld(a):
    """The row stride of a in elements, copying a's rows to make them dense if needed."""
    n, c = a.shape
    if n == 0:
        return max(c, 1)
    s0, s1 = a.strides
    if s1 != 4 and c > 1:
        raise _NeedsCopy
    if n <= 1:
        return max(c, 1)
    if s0 >= 4 * c and s0 % 4 == 0:
        return s0 // 4
    raise _NeedsCopy


class _NeedsCopy(Exception):
    pass


def _readable(a, name, cols=None):
    """(array, ld) for a read-only argument: rows read in place when possible."""
    a = _float_array(a, name)
    if a.ndim != 2:
        raise ValueError("%s must be 2-D (rows, columns), not of shape %s" % (name, a.shape))
    if cols is not None and a.shape[1] != cols:
        raise ValueError("%s has %d columns, expected %d" % (name, a.shape[1], cols))
    try:
        if a.flags.aligned:
            return a, _ld(a)
    except _NeedsCopy:
        pass
    a = np.array(a, order="C")  # a new array: dense and aligned
    return a, max(a.shape[1], 1)


def _writable(a, name, cols):
    """(a, ld) for chains moved in place: float32, writable, rows with unit stride."""
    if not isinstance(a, np.ndarray) or a.dtype != _f32:
        raise TypeError("%s must be a float32 numpy array (it is moved in place), not %s" %
                        (name, getattr(a, "dtype", type(a).__name__)))
    if a.ndim != 2 or a.shape[1] != cols:
        raise ValueError("%s must have shape (rows, %d), not %s" % (name, cols, a.shape))
    if not a.flags.writeable:
        raise ValueError("%s is read-only" % name)
    if not a.flags.aligned:
        raise ValueError("%s is not aligned to its float32 elements (address %#x); pass "
                         "a copy" % (name, _ptr(a)))
    try:
        return a, _ld(a)
    except _NeedsCopy:
        raise ValueError("%s: its elements are not adjacent within rows (strides %s); pass "
                         "np.ascontiguousarray(%s)" % (name, a.strides, name)) from None


def _ptr(a):
    return a.ctypes.data


def _mask_array(clamp, n, width, name="clamp"):
    """(uint8 array, ldc) for a clamp mask: None, one row of width, or (n, width)."""
    if clamp is None:
        return None, 0
    c = np.asarray(clamp)
    if c.dtype.kind not in "biuf":
        raise TypeError("%s must be boolean or numeric (nonzero: clamped), not %s" %
                        (name, c.dtype))
    c = np.ascontiguousarray(c != 0, dtype=np.uint8)
    if c.ndim == 1 and c.shape[0] == width:
        return c, 0
    if c.ndim == 2 and c.shape == (n, width):
        return c, width
    raise ValueError("%s must have shape (%d,) or (%d, %d), not %s" % (name, width, n, width,
                                                                      c.shape))


def _out_vector(out, n):
    """out, or a new float32 vector of n, for a result written in place."""
    if out is None:
        return np.empty(n, _f32)
    if not (isinstance(out, np.ndarray) and out.dtype == _f32 and out.flags.c_contiguous
            and out.flags.writeable and out.flags.aligned and out.shape == (n,)):
        raise ValueError("out must be a writable, contiguous and aligned float32 array of "
                         "shape (%d,)" % n)
    return out



def _enum_value(cls, value, what):
    """An enum member from a member, its name (any case) or its int value;
    a float (int() would truncate 1.5 to 1) or another enum's member raises
    TypeError."""
    if isinstance(value, str):
        try:
            return cls[value.upper()]
        except KeyError:
            names = ", ".join(repr(m.name.lower()) for m in cls)
            raise ValueError("%s: unknown value %r (one of %s)" % (what, value, names)) from None
    if isinstance(value, enum.Enum) and not isinstance(value, cls):
        raise TypeError("%s must be a %s, not %r" % (what, cls.__name__, value))
    try:
        return cls(operator.index(value))
    except TypeError:
        raise TypeError("%s must be a name or an integer, not %r" % (what, value)) from None
    except ValueError:
        raise ValueError("%s: unknown value %r" % (what, value)) from None


def _real(value, what):
    """value as a Python float: a real number (or a 0-d real array), not a
    bool, string or complex number (float() parses "2" and numpy's complex
    scalars lose their imaginary part), else TypeError naming what."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a real number, not %r" % (what, value))
    return float(value)


def _check_int(value, what, bounds=_INT64):
    """value as a Python int within bounds (default: int64_t's), else
    TypeError, or a RangeError (OverflowError and ValueError) naming what:
    ctypes and numpy would wrap it."""
    if not isinstance(value, (int, np.integer, np.bool_)):
        raise TypeError("%s must be an integer, not %r" % (what, value))
    return _check_range(int(value), bounds, what)



def _seed(value, what):
    return _check_int(value, what, (0, (1 << 64) - 1))

