"""Objects over the C handles: Generator, Model, Sampler, Estimator.

Conventions (python/README.md has the long form):
 - States are 2-D float32 arrays, one row per configuration, layers side by
   side (Model.layer_offset). Other real or integer arrays are converted to
   float32 explicitly (a copy; float64 values are rounded to float32);
   complex, object and string arrays are refused with TypeError. Rows whose
   elements are not adjacent are copied; rows at any stride are read in
   place.
 - Methods of Model return new arrays and never write into their inputs;
   Sampler.step and Sampler.coupled_step move the caller's chains in place,
   as the C calls do, so they take only float32 arrays they can write.
 - A failed C call raises EbmError (with .code, .name and the library's
   message), which is also a ValueError, MemoryError or OSError by its code.
   As in C, a failed call changes nothing.
"""
import contextlib
import ctypes
import enum
import numbers
import operator
import os
import threading

import numpy as np

from . import _abi
from ._abi import (Coupling, EstimatorKind, EstimatorOption, EstimatorStat, InitScheme,
                   Marginalize, ParamKind, PositivePhase, SamplerKind, SamplerOption,
                   SamplerStat, Status, Units)
from ._lib import INT64 as _INT64
from ._lib import check_range as _check_range
from ._lib import checked as _C

__all__ = ["EbmError", "Generator", "Model", "Sampler", "Estimator", "RBM", "DBM", "GRBM",
           "load", "from_bytes", "version"]

_f32 = np.float32
MAX_LAYERS = _C.ebm_max_layers()
RNG_STATE_WORDS = _C.ebm_rng_state_words()


def version():
    """The version of the libebm in use, e.g. "0.1.0"."""
    return _C.ebm_version_string().decode()


# ---------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------
# Handles


# Guards every handle's count of calls in flight (_Handle._users).
_USE_LOCK = threading.Lock()


class _Handle:
    """Owns one C handle: freed once, by close(), `with` or garbage collection.

    Calls that pass the handle to the library hold it (_using) for the call:
    ctypes releases the GIL, so another thread may close() meanwhile; the
    object is then closed at once (calls after it raise ValueError) and freed
    when the last call in flight returns. The C library lets one thread at a
    time use a generator, sampler or estimator (their calls move state and
    grow scratch buffers): for those (_exclusive) a hold also takes the
    object's lock, so that calls from several threads run one after another
    instead of corrupting the handle. Model calls are not serialised: the
    library lets const calls on one model run at once."""

    _destroy = None  # the C destructor
    _exclusive = False  # calls take _lock (above)
    _p = None
    _lock = None  # made by the first hold of an _exclusive handle
    _users = 0  # calls in flight
    _closing = False  # close() was called while calls were in flight

    def close(self):
        """Close the object: calls after this raise ValueError. The C object is
        freed now, or when the calls other threads have in flight return. Safe
        to call more than once."""
        with _USE_LOCK:
            if self._users > 0:
                self._closing = True
                return
            p, self._p = self._p, None
        if p is not None and self._destroy is not None:
            type(self)._destroy(p)

    @property
    def closed(self):
        return self._p is None or self._closing

    def _h(self):
        """The handle, for a call the caller holds it for (_using)."""
        if self.closed:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._p

    def _hold(self):
        with _USE_LOCK:
            p = self._h()
            self._users += 1
            if self._exclusive and self._lock is None:
                self._lock = threading.RLock()  # reentrant: a held call may hold it again
            lock = self._lock
        if lock is not None:
            lock.acquire()  # outside _USE_LOCK: the wait may be a whole call of another thread
        return p

    def _release(self):
        if self._lock is not None:
            self._lock.release()
        with _USE_LOCK:
            self._users -= 1
            if self._users > 0 or not self._closing:
                return
            p, self._p, self._closing = self._p, None, False
        if self._destroy is not None:
            type(self)._destroy(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


@contextlib.contextmanager
def _using(*handles):
    """Holds each handle for the block (none is freed before it ends) and
    gives their pointers; raises ValueError if one is closed."""
    held = []
    try:
        for h in handles:
            h._hold()
            held.append(h)
        yield [h._p for h in handles]
    finally:
        for h in reversed(held):
            h._release()


def _held_call(handles, fn, name, errmsg, args):
    """fn(the last of handles' pointer, *args), checked (_check) with errmsg,
    with handles and each _Handle among args (a generator, passed as its
    pointer) held for the call."""
    with _using(*handles, *(a for a in args if isinstance(a, _Handle))) as ps:
        p = ps[len(handles) - 1]
        return _check(fn(p, *(a._p if isinstance(a, _Handle) else a for a in args)), name,
                      errmsg, p)


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


# ---------------------------------------------------------------------------
# Generator


def _seed(value, what):
    return _check_int(value, what, (0, (1 << 64) - 1))


class Generator(_Handle):
    """A libebm random generator (Philox4x32-10, keyed by (seed, stream)).

    Draws are bit-identical with the C library's for the same seed, stream
    and calls. The state can be read and restored exactly (.state).
    """

    _destroy = _C.ebm_rng_destroy
    _exclusive = True

    def __init__(self, seed=0, stream=0):
        seed, stream = _seed(seed, "seed"), _seed(stream, "stream")
        out = ctypes.c_void_p()
        rc = _C.ebm_rng_create(ctypes.byref(out), seed, stream)
        if rc < 0:
            _fail(rc, "ebm_rng_create", "seed %d, stream %d" % (seed, stream))
        self._p = out.value

    @classmethod
    def _adopt(cls, p):
        g = cls.__new__(cls)
        g._p = p
        return g

    def _call(self, fn, name, *args):
        """fn(this generator's handle, *args), held for the call."""
        return _held_call((self,), fn, name, _C.ebm_rng_errmsg, args)

    def derive(self, index):
        """The child generator number index; this generator does not move."""
        index = _seed(index, "index")
        out = ctypes.c_void_p()
        with _using(self) as (p,):
            _check(_C.ebm_rng_derive(ctypes.byref(out), p, index), "ebm_rng_derive",
                   _C.ebm_rng_errmsg, p)
        return Generator._adopt(out.value)

    @property
    def state(self):
        """The state as RNG_STATE_WORDS uint64 words (a copy); assign to restore it."""
        s = np.empty(RNG_STATE_WORDS, np.uint64)
        self._call(_C.ebm_rng_get_state, "ebm_rng_get_state", _ptr(s))
        return s

    @state.setter
    def state(self, value):
        if isinstance(value, np.ndarray) and (value.ndim != 1 or value.dtype.kind not in "iu"):
            raise ValueError("state must be %d integer words, not %s of %s" %
                             (RNG_STATE_WORDS, value.shape, value.dtype))
        # Word by word as Python ints (a JSON checkpoint's too), each checked:
        # numpy would make -1 the word 2^64 - 1.
        try:
            words = [operator.index(w) for w in value]
        except TypeError as exc:
            raise ValueError("state must be %d integer words: %s" %
                             (RNG_STATE_WORDS, exc)) from None
        if len(words) != RNG_STATE_WORDS:
            raise ValueError("state must be %d integer words, not %d" % (RNG_STATE_WORDS,
                                                                          len(words)))
        for i, w in enumerate(words):
            _check_range(w, (0, (1 << 64) - 1), "state[%d]" % i)
        s = np.array(words, np.uint64)
        self._call(_C.ebm_rng_set_state, "ebm_rng_set_state", _ptr(s))

    def _fill(self, fn, name, n):
        n = _check_int(n, "n")
        out = np.empty(max(n, 0), _f32)
        self._call(fn, name, n, _ptr(out))
        return out

    def uniform(self, n):
        """n float32 uniforms in [0, 1) (24 random bits each)."""
        return self._fill(_C.ebm_rng_uniform, "ebm_rng_uniform", n)

    def normal(self, n):
        """n float32 standard normals."""
        return self._fill(_C.ebm_rng_normal, "ebm_rng_normal", n)

    def __reduce__(self):
        return (_generator_from_state, (self.state,))

    def __repr__(self):
        return "<ebm.Generator%s>" % (" closed" if self.closed else "")


def _generator_from_state(state):
    g = Generator(0, 0)
    g.state = state
    return g


def _generator(rng):
    """rng as a Generator: a Generator, or an int seed (stream 0). Callers
    pass the object itself to _call, which holds it for the C call: a
    Generator made here from a seed is freed with its last reference, so
    `_generator(rng)._h()` would pass a freed one."""
    if isinstance(rng, Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return Generator(int(rng))
    raise TypeError("rng must be an ebm.Generator or an integer seed, not %r" % (rng,))


# ---------------------------------------------------------------------------
# Model


_ERRBUF = 512


def _model_errmsg(p):
    return _C.ebm_model_errmsg(p)


def _layers_mask(sum_out, n_layers):
    """A sum-out bitmask from layer indices, "odd" or "even"."""
    if sum_out is None:
        return 0
    if isinstance(sum_out, str):
        parity = {"even": 0, "odd": 1}.get(sum_out)
        if parity is None:
            raise ValueError("sum_out: %r is not 'odd', 'even' or a list of layers" % sum_out)
        return sum(1 << l for l in range(parity, n_layers, 2))
    if isinstance(sum_out, (int, np.integer)):
        raise TypeError("sum_out must be a list of layers, 'odd' or 'even', not %r (for "
                        "layer %d alone: [%d])" % (sum_out, sum_out, sum_out))
    mask = 0
    for l in sum_out:
        l = _check_int(l, "sum_out layer")
        if not 0 <= l < n_layers:
            raise ValueError("sum_out: layer %d is not in 0..%d" % (l, n_layers - 1))
        mask |= 1 << l
    return mask


class Model(_Handle):
    """A layered Boltzmann machine: RBM, DBM, GRBM (see include/ebm.h).

    Model(sizes, visible="binary", hidden="binary", categories=None): layer
    l has sizes[l] units; visible is "binary", "spin", "gaussian" or
    "potts", hidden "binary", "spin" or "drelu". Potts visible units need
    categories (q): the visible layer is sizes[0] / q sites of q one-hot
    columns (ebm_model_create_potts). dReLU hidden units (real values,
    Tubiana et al. 2019; their parameters are shape()) are for an RBM (two
    layers) over binary, spin or Potts visible units; the library refuses
    any other model (EBM_EUNSUPPORTED). All parameters start at zero; call
    init().
    """

    _destroy = _C.ebm_model_destroy

    def __init__(self, sizes, visible="binary", hidden="binary", categories=None):
        sizes = [_check_int(s, "sizes[%d]" % i) for i, s in enumerate(sizes)]
        vis = _enum_value(Units, visible, "visible")
        hid = _enum_value(Units, hidden, "hidden")
        arr = (ctypes.c_int64 * len(sizes))(*sizes)
        out, err = ctypes.c_void_p(), ctypes.create_string_buffer(_ERRBUF)
        if vis == Units.POTTS or categories is not None:
            if vis != Units.POTTS:
                raise ValueError("categories is for Potts visible units (visible=\"potts\")")
            if categories is None:
                raise ValueError("Potts visible units need categories=q (the categories of a "
                                 "site)")
            q = _check_int(categories, "categories")
            rc = _C.ebm_model_create_potts(ctypes.byref(out), len(sizes), arr, q, hid, err,
                                           _ERRBUF)
            name = "ebm_model_create_potts"
        else:
            rc = _C.ebm_model_create(ctypes.byref(out), len(sizes), arr, vis, hid, err, _ERRBUF)
            name = "ebm_model_create"
        if rc < 0:
            _fail(rc, name, err.value.decode(errors="replace"))
        self._p = out.value
        self._shape()

    @classmethod
    def _adopt(cls, p):
        m = cls.__new__(cls)
        m._p = p
        m._shape()
        return m

    def _shape(self):
        p = self._p
        n = _C.ebm_model_num_layers(p)
        self._sizes = tuple(_C.ebm_model_layer_size(p, l) for l in range(n))
        self._offsets = tuple(_C.ebm_model_layer_offset(p, l) for l in range(n))
        self._units = tuple(Units(_C.ebm_model_layer_units(p, l)) for l in range(n))
        self._categories = tuple(_C.ebm_model_layer_categories(p, l) for l in range(n))
        self._state_width = _C.ebm_model_state_width(p)
        self._param_count = _C.ebm_model_param_count(p)

    # -- shape --------------------------------------------------------------
    # Read from the library once and read-only: calls size the arrays the
    # library writes by them (a param_count set by hand would let params()
    # overflow its array).

    sizes = property(lambda self: self._sizes, doc="The layers' sizes, visible first.")
    offsets = property(lambda self: self._offsets,
                       doc="The first column of each layer in a state row.")
    units = property(lambda self: self._units, doc="The layers' unit kinds (Units).")
    categories = property(lambda self: self._categories,
                          doc="The categories of each layer's units (q for Potts, else 1).")
    state_width = property(lambda self: self._state_width,
                           doc="The columns of a full state row (the sum of sizes).")
    param_count = property(lambda self: self._param_count,
                           doc="The length of the flat parameter vector.")

    @property
    def n_layers(self):
        """L + 1."""
        return len(self.sizes)

    @property
    def n_visible(self):
        return self.sizes[0]

    def layer_offset(self, l):
        """The first column of layer l in a state row."""
        return self.offsets[self._layer(l)]

    def layer_size(self, l):
        return self.sizes[self._layer(l)]

    def _layer(self, l):
        l = _check_int(l, "layer")
        if not 0 <= l < self.n_layers:
            raise ValueError("layer %d is not in 0..%d" % (l, self.n_layers - 1))
        return l

    def __repr__(self):
        names = [u.name.lower() for u in self.units]
        kinds = names[0] if len(set(names)) == 1 else "%s/%s" % (names[0], names[1])
        return "<ebm.Model %s %s%s>" % ("-".join(map(str, self.sizes)), kinds,
                                        " closed" if self.closed else "")

    def _call(self, name, *args):
        """The library's function name on this model and args; a _Handle among
        args (a generator) is passed as its handle, held for the call."""
        return _held_call((self,), getattr(_C, name), name, _model_errmsg, args)

    # -- parameters ---------------------------------------------------------

    def init(self, rng, scheme="orthogonal", scale=1.0):
        """Initialise all parameters (ebm_model_init); rng is a Generator or a seed."""
        s = _enum_value(InitScheme, scheme, "scheme")
        self._call("ebm_model_init", _generator(rng), s, _real(scale, "scale"))
        return self

    def params(self):
        """A float32 copy of all parameters, in the library's flat layout."""
        out = np.empty(self.param_count, _f32)
        self._call("ebm_model_get_params", _ptr(out))
        return out

    def _vector(self, p, name):
        p = _dense(p, name)
        if p.shape != (self.param_count,):
            raise ValueError("%s must have shape (%d,), not %s" % (name, self.param_count,
                                                                  p.shape))
        return p

    def set_params(self, p):
        """Replace all parameters by p (param_count values)."""
        p = self._vector(p, "p")
        self._call("ebm_model_set_params", _ptr(p))

    def axpy_params(self, alpha, g):
        """theta += alpha * g over the whole parameter vector."""
        g = self._vector(g, "g")
        self._call("ebm_model_axpy_params", _real(alpha, "alpha"), _ptr(g))

    @property
    def centring_offsets(self):
        """A float32 copy of the centring offsets mu (ebm_model_get_offsets),
        one per unit: a state row's width, layer l at layer_offset(l); all 0
        unless set. (`offsets` is the layers' first columns.)"""
        out = np.empty(self.state_width, _f32)
        self._call("ebm_model_get_offsets", _ptr(out))
        return out

    def _offsets_vector(self, mu, name):
        mu = _dense(mu, name)
        if mu.shape != (self.state_width,):
            raise ValueError("%s must have shape (%d,), not %s" % (name, self.state_width,
                                                                  mu.shape))
        return mu

    def set_centring_offsets(self, mu, keep_law=False):
        """Centre the model: E = -sum b.(x - mu) - sum (x - mu)^T W (x' - mu').

        mu: one offset per unit, in [0, 1] for binary units and [-1, 1] for
        spin units. keep_law=True first moves the biases so that the
        distribution stays the same; False keeps the parameters.
        """
        mu = self._offsets_vector(mu, "mu")
        self._call("ebm_model_set_offsets", _ptr(mu), 1 if keep_law else 0)

    def move_centring_offsets(self, rate, target):
        """mu <- mu + rate (target - mu), keeping the distribution (the offset
        update of centred training; rate in [0, 1])."""
        target = self._offsets_vector(target, "target")
        self._call("ebm_model_move_offsets", _real(rate, "rate"), _ptr(target))

    def param_block(self, kind, l):
        """(offset, rows, cols) of a block: kind "weight" (l = 1..L), "bias", "logvar",
        "shape" (l = 1)."""
        k = _enum_value(ParamKind, kind, "kind")
        off, rows, cols = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        self._call("ebm_model_param_block", k, _check_int(l, "l"), ctypes.byref(off),
                   ctypes.byref(rows), ctypes.byref(cols))
        return off.value, rows.value, cols.value

    def _block(self, kind, l):
        off, rows, cols = self.param_block(kind, l)
        return self.params()[off:off + rows * cols]

    def weight(self, l):
        """A copy of W_l, shape (n_{l-1}, n_l)."""
        off, rows, cols = self.param_block(ParamKind.WEIGHT, l)
        return self.params()[off:off + rows * cols].reshape(rows, cols)

    def bias(self, l):
        """A copy of b_l (the mean mu of a Gaussian layer 0)."""
        return self._block(ParamKind.BIAS, l)

    def logvar(self):
        """A copy of log sigma^2 of a Gaussian visible layer."""
        return self._block(ParamKind.LOGVAR, 0)

    def shape(self):
        """A copy of the dReLU hidden layer's shape block, shape (3, n_1): the rows
        log gamma+, log gamma- and delta."""
        off, rows, cols = self.param_block(ParamKind.SHAPE, 1)
        return self.params()[off:off + rows * cols].reshape(rows, cols)

    # -- states -------------------------------------------------------------

    def _neighbours(self, l):
        return {k for k in (l - 1, l + 1) if 0 <= k < self.n_layers}

    def _states(self, x, name, reads):
        """(array, ld) of full states; visible rows are padded when only layer 0 is read."""
        x = _float_array(x, name)
        if x.ndim == 2 and x.shape[1] == self.n_visible and self.n_visible != self.state_width:
            if not reads <= {0}:
                raise ValueError(
                    "%s has %d columns (visible rows), but this call reads layers %s: pass "
                    "full states of width %d" % (name, x.shape[1], sorted(reads),
                                                 self.state_width))
            full = np.zeros((x.shape[0], self.state_width), _f32)
            full[:, :self.n_visible] = x
            return full, self.state_width
        if x.ndim == 2 and x.shape[1] != self.state_width:
            raise ValueError("%s has %d columns: expected full states (%d columns%s)" % (
                name, x.shape[1], self.state_width,
                "" if reads - {0} else ", or %d visible columns" % self.n_visible))
        return _readable(x, name, self.state_width)

    def _copy_states(self, x, name, reads):
        """A new dense float32 copy of full states (padded from visible rows as above)."""
        a, _ = self._states(x, name, reads)
        return np.array(a, dtype=_f32, order="C"), self.state_width

    def _reads(self, sum_out):
        return {l for l in range(self.n_layers) if not sum_out >> l & 1}

    def energy(self, x):
        """E(x) of full states, float64 of shape (n,)."""
        x, ld = self._states(x, "x", set(range(self.n_layers)))
        out = np.empty(x.shape[0])
        self._call("ebm_model_energy", x.shape[0], _ptr(x), ld, _ptr(out))
        return out

    def free_energy(self, x, sum_out=None):
        """F_S(x): layers S summed out (indices, "odd", "even"; float64, shape (n,)).

        x holds full states, or visible rows when every other layer is
        summed out. sum_out=None sums out the layers x does not hold: none
        for full states, the hidden layer for an RBM's visible rows.
        """
        if sum_out is None and np.ndim(x) == 2 and np.shape(x)[1] == self.n_visible != \
                self.state_width:
            sum_out = range(1, self.n_layers)
        mask = _layers_mask(sum_out, self.n_layers)
        x, ld = self._states(x, "x", self._reads(mask))
        out = np.empty(x.shape[0])
        self._call("ebm_model_free_energy", mask, x.shape[0], _ptr(x), ld, _ptr(out))
        return out

    def energy_grad(self, x, coef=None, sum_out=None, out=None):
        """out += sum_r coef[r] dF_S(x_r)/dtheta (coef defaults to 1/n; out to zeros).

        Returns out: a float32 array of param_count, in the parameter layout.
        """
        mask = _layers_mask(sum_out, self.n_layers)
        x, ld = self._states(x, "x", self._reads(mask))
        n = x.shape[0]
        coef = np.full(n, 1.0 / max(n, 1)) if coef is None else _dense(coef, "coef",
                                                                      np.float64)
        if coef.shape != (n,):
            raise ValueError("coef must have shape (%d,), not %s" % (n, coef.shape))
        if out is None:
            out = np.zeros(self.param_count, _f32)
        out = _out_vector(out, self.param_count)
        self._call("ebm_model_energy_grad", mask, n, _ptr(x), ld, _ptr(coef), _ptr(out))
        return out

    def energy_grad_input(self, x, l, sum_out=None):
        """dF_S/dx_l, shape (n, n_l)."""
        l = self._layer(l)
        mask = _layers_mask(sum_out, self.n_layers)
        x, ld = self._states(x, "x", self._reads(mask))
        out = np.empty((x.shape[0], self.sizes[l]), _f32)
        self._call("ebm_model_energy_grad_input", mask, l, x.shape[0], _ptr(x), ld, _ptr(out),
                   self.sizes[l])
        return out

    def _layer_out(self, name, x, l):
        l = self._layer(l)
        x, ld = self._states(x, "x", self._neighbours(l))
        out = np.empty((x.shape[0], self.sizes[l]), _f32)
        self._call(name, l, x.shape[0], _ptr(x), ld, _ptr(out), self.sizes[l])
        return out

    def layer_input(self, x, l):
        """The input a of layer l given its neighbours in x, shape (n, n_l)."""
        return self._layer_out("ebm_model_layer_input", x, l)

    def layer_mean(self, x, l):
        """E[x_l | neighbours], shape (n, n_l)."""
        return self._layer_out("ebm_model_layer_mean", x, l)

    def layer_logprob(self, x, l, xl):
        """log p(x_l = xl | neighbours in x), float64 of shape (n,)."""
        l = self._layer(l)
        x, ld = self._states(x, "x", self._neighbours(l))
        xl, ldl = _readable(xl, "xl", self.sizes[l])
        if xl.shape[0] != x.shape[0]:
            raise ValueError("xl has %d rows, x has %d" % (xl.shape[0], x.shape[0]))
        out = np.empty(x.shape[0])
        self._call("ebm_model_layer_logprob", l, x.shape[0], _ptr(x), ld, _ptr(xl), ldl,
                   _ptr(out))
        return out

    def layer_argmin(self, x, l):
        """Full states with layer l replaced by its conditional argmin (a new array)."""
        l = self._layer(l)
        x, ld = self._copy_states(x, "x", self._neighbours(l))
        self._call("ebm_model_layer_argmin", l, x.shape[0], _ptr(x), ld)
        return x

    def sample_layer(self, x, l, rng):
        """Full states with layer l drawn from its conditional (a new array)."""
        l = self._layer(l)
        x, ld = self._copy_states(x, "x", self._neighbours(l))
        self._call("ebm_model_layer_sample", l, _generator(rng), x.shape[0], _ptr(x), ld)
        return x

    def random_state(self, rng, n=None, x=None, clamp=None):
        """Uniform random states: n new rows, or copies of x with the unclamped units drawn.

        clamp: None, a (width,) mask for every row, or an (n, width) mask;
        clamped units keep x's values (zero when x is not given).
        """
        if x is None:
            if n is None:
                raise ValueError("random_state needs n or x")
            x = np.zeros((_check_int(n, "n", (0, _INT64[1])), self.state_width), _f32)
            ld = self.state_width
        else:
            x, ld = self._copy_states(x, "x", set())
        c, ldc = _mask_array(clamp, x.shape[0], self.state_width)
        self._call("ebm_model_random_state", _generator(rng), x.shape[0], _ptr(x), ld,
                   None if c is None else _ptr(c), ldc)
        return x

    def local_search(self, x, rng, clamp=None, max_sweeps=10000):
        """Local minima of E from x (Taniguchi et al. 2023, Algs. 1 and 5).

        Returns (states, sweeps, capped): new states, int64 sweeps per row,
        and the number of rows stopped by max_sweeps before converging.
        """
        x, ld = self._copy_states(x, "x", set(range(self.n_layers)))
        c, ldc = _mask_array(clamp, x.shape[0], self.state_width)
        sweeps = np.zeros(x.shape[0], np.int64)
        capped = self._call("ebm_model_local_search", _generator(rng), x.shape[0], _ptr(x),
                            ld, None if c is None else _ptr(c), ldc,
                            _check_int(max_sweeps, "max_sweeps"), _ptr(sweeps))
        return x, sweeps, capped

    def mean_field(self, mu, clamp=None, max_iter=100, tol=1e-5):
        """The mean-field fixed point of the unclamped units, from means mu.

        Returns (means, missed): new means and the number of rows that did
        not reach tol within max_iter.
        """
        mu, ld = self._copy_states(mu, "mu", set(range(self.n_layers)))
        c, ldc = _mask_array(clamp, mu.shape[0], self.state_width)
        missed = self._call("ebm_model_mean_field", mu.shape[0], _ptr(mu), ld,
                            None if c is None else _ptr(c), ldc, _check_int(max_iter, "max_iter"),
                            _real(tol, "tol"))
        return mu, missed

    # -- evaluation ---------------------------------------------------------

    def log_partition(self, method="exact", rng=None, chains=100, betas=10000,
                      return_std=False, base=None):
        """log Z: "exact" (enumeration) or "ais" (annealed importance sampling).

        AIS uses rng, chains runs and betas inverse temperatures; base (None,
        or n_visible biases: e.g. the log-odds of the data's pixel means)
        starts it from independent visible units with those inputs
        (ebm_model_log_partition_ais_base). With return_std=True it returns
        (log_z, standard error).
        """
        out, err = ctypes.c_double(), ctypes.c_double(0.0)
        if method == "exact":
            self._call("ebm_model_log_partition_exact", ctypes.byref(out))
        elif method == "ais":
            if rng is None:
                raise ValueError("log_partition(method='ais') needs rng")
            b = None
            if base is not None:
                b = _dense(base, "base")
                if b.shape != (self.n_visible,):
                    raise ValueError("base must have shape (%d,), not %r" %
                                     (self.n_visible, b.shape))
            self._call("ebm_model_log_partition_ais_base", _generator(rng),
                       _check_int(chains, "chains"), _check_int(betas, "betas"),
                       None if b is None else _ptr(b), ctypes.byref(out), ctypes.byref(err))
        else:
            raise ValueError("method must be 'exact' or 'ais', not %r" % (method,))
        return (out.value, err.value) if return_std else out.value

    def _visible(self, v):
        v, ld = _readable(v, "v")
        if v.shape[1] not in (self.n_visible, self.state_width):
            raise ValueError("v has %d columns: expected %d visible columns" %
                             (v.shape[1], self.n_visible))
        return v, ld

    def log_likelihood(self, v, log_z=None):
        """Exact log p(v) of visible rows (float64, shape (n,)); log Z exact if not given."""
        v, ld = self._visible(v)
        if log_z is None:
            log_z = self.log_partition("exact")
        out = np.empty(v.shape[0])
        self._call("ebm_model_log_likelihood", _real(log_z, "log_z"), v.shape[0], _ptr(v), ld,
                   _ptr(out))
        return out

    def log_likelihood_bound(self, v, log_z=None):
        """The mean-field lower bound on log p(v) of visible rows; log Z exact if not given."""
        v, ld = self._visible(v)
        if log_z is None:
            log_z = self.log_partition("exact")
        out = np.empty(v.shape[0])
        self._call("ebm_model_log_likelihood_bound", _real(log_z, "log_z"), v.shape[0], _ptr(v),
                   ld, _ptr(out))
        return out

    def log_likelihood_is(self, v, rng, samples=1000, log_z=None):
        """An importance-sampled estimate of log p(v) (ebm_model_log_likelihood_is): a
        lower bound in expectation that tightens with samples per row; log Z exact
        if not given."""
        v, ld = self._visible(v)
        if log_z is None:
            log_z = self.log_partition("exact")
        out = np.empty(v.shape[0])
        self._call("ebm_model_log_likelihood_is", _generator(rng), _real(log_z, "log_z"),
                   _check_int(samples, "samples"), v.shape[0], _ptr(v), ld, _ptr(out))
        return out

    # -- files and copies ---------------------------------------------------

    def save(self, path):
        """Write the model to path in the library's format, atomically."""
        self._call("ebm_model_save", _path(path))

    def to_bytes(self):
        """The model in the library's file format."""
        with _using(self) as (p,):
            size = _C.ebm_model_save_size(p)
        buf = ctypes.create_string_buffer(max(size, 1))
        used = ctypes.c_size_t()
        self._call("ebm_model_save_buffer", buf, size, ctypes.byref(used))
        return buf.raw[:used.value]

    def copy(self):
        return from_bytes(self.to_bytes())

    def __reduce__(self):
        return (from_bytes, (self.to_bytes(),))


def _loaded(fn, name, *args):
    out, err = ctypes.c_void_p(), ctypes.create_string_buffer(_ERRBUF)
    rc = fn(ctypes.byref(out), *args, err, _ERRBUF)
    if rc < 0:
        _fail(rc, name, err.value.decode(errors="replace"))
    return Model._adopt(out.value)


def load(path):
    """A model from a file written by Model.save (or by the C library)."""
    return _loaded(_C.ebm_model_load, "ebm_model_load", _path(path))


def _path(path):
    """path (str, bytes or os.PathLike) as bytes for the library; ValueError if
    it holds a NUL byte, where C would end it (save("a\0b") wrote "a"), as
    open() does."""
    b = os.fsencode(path)
    if b"\0" in b:
        raise ValueError("path %r contains a NUL byte" % (path,))
    return b


def from_bytes(data):
    """A model from the bytes of Model.to_bytes (any bytes-like object)."""
    try:
        data = memoryview(data).tobytes()
    except TypeError:  # bytes(n) would make n zero bytes of an int, bytes(str) fail unclearly
        raise TypeError("data must be a bytes-like object (bytes, bytearray, memoryview), not "
                        "%s" % type(data).__name__) from None
    return _loaded(_C.ebm_model_load_buffer, "ebm_model_load_buffer", data, len(data))


def RBM(n_visible, n_hidden, visible="binary", hidden="binary"):
    """A restricted Boltzmann machine: Model([n_visible, n_hidden], visible, hidden)."""
    return Model([n_visible, n_hidden], visible, hidden)


def DBM(sizes, units="binary", visible=None):
    """A deep Boltzmann machine with layers sizes (visible first), all of kind units."""
    return Model(sizes, units if visible is None else visible, units)


def GRBM(n_visible, n_hidden, hidden="binary"):
    """A Gaussian-Bernoulli RBM with learned means and variances (Liao et al. 2022)."""
    return Model([n_visible, n_hidden], "gaussian", hidden)


# ---------------------------------------------------------------------------
# Options shared by samplers and estimators


_DOUBLE_OPTIONS = {"step_size", "mean_field_tol"}
_OPTION_ENUMS = {"coupling": Coupling, "marginalize": Marginalize, "positive": PositivePhase,
                 "sampler": SamplerKind}


def _option_value(name, value):
    if name in _OPTION_ENUMS:
        return int(_enum_value(_OPTION_ENUMS[name], value, name))
    if name in _DOUBLE_OPTIONS:
        return _real(value, name)
    return _check_int(value, name)


def _out_vector(out, n):
    """out, or a new float32 vector of n, for a result written in place."""
    if out is None:
        return np.empty(n, _f32)
    if not (isinstance(out, np.ndarray) and out.dtype == _f32 and out.flags.c_contiguous
            and out.flags.writeable and out.flags.aligned and out.shape == (n,)):
        raise ValueError("out must be a writable, contiguous and aligned float32 array of "
                         "shape (%d,)" % n)
    return out


class _OnModel(_Handle):
    """A sampler or estimator: a C object that points to its model.

    Subclasses name their C prefix, kind enum, option lookup and stat enum.
    """

    _prefix = ""  # "ebm_sampler" or "ebm_estimator"
    _kinds = _stat_enum = None
    _exclusive = True

    def __init__(self, model, kind, options):
        if not isinstance(model, Model):
            raise TypeError("model must be an ebm.Model, not %r" % (model,))
        self._model = model
        self._kind = _enum_value(self._kinds, kind, "kind")
        out, create = ctypes.c_void_p(), self._prefix + "_create"
        # A failed create leaves its message in the model.
        with _using(model) as (mp,):
            _check(getattr(_C, create)(ctypes.byref(out), mp, int(self.kind)), create,
                   _model_errmsg, mp)
        self._p = out.value
        self._options = {}
        self.set(**options)

    # Read-only: the C object points to this model, which the Python object
    # keeps alive (another model put here would leave it to a freed one).
    model = property(lambda self: self._model, doc="The model (kept alive by this object).")
    kind = property(lambda self: self._kind, doc="The kind, an enum member.")

    def _h(self):
        if self.model.closed:
            raise ValueError("the model of this %s is closed" % type(self).__name__)
        return _Handle._h(self)

    def _call(self, suffix, *args):
        """As Model._call; the model, which the C object uses, is held too."""
        name = self._prefix + suffix
        return _held_call((self.model, self), getattr(_C, name), name,
                          getattr(_C, self._prefix + "_errmsg"), args)

    def set(self, **options):
        """Set options by name; on an error the ones before it stay set.

        ladder=[beta_0, ..., 1] sets the ladder of a tempering sampler or a
        PT estimator (set_ladder)."""
        for name, value in options.items():
            if name == "ladder":
                self.set_ladder(value)
                continue
            v = _option_value(name, value)
            self._call("_set_double" if isinstance(v, float) else "_set_int",
                       self._option(name), v)
            self._options[name] = v
        return self

    def set_ladder(self, betas):
        """Set the inverse temperatures of parallel tempering (tempering sampler,
        PT estimator): 2 to 1024 values in [0, 1], increasing, the last 1."""
        b = _dense(betas, "betas", np.float64)
        if b.ndim != 1:
            raise ValueError("betas must be one-dimensional, not of shape %r" % (b.shape,))
        self._call("_set_ladder", b.shape[0], b.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        self._options["ladder"] = [float(v) for v in b]
        return self

    @property
    def ladder(self):
        """The ladder set by set_ladder (a list), or None."""
        return self._options.get("ladder")

    def swap_counts(self):
        """The replica exchanges of the last call (a sampler's step, an estimator's
        gradient), per adjacent pair of the ladder: (accepted, proposed), two
        int64 arrays of len(ladder) - 1."""
        n = len(self.ladder) - 1 if self.ladder is not None else 0
        acc, prop = np.zeros(n, np.int64), np.zeros(n, np.int64)
        i64 = ctypes.POINTER(ctypes.c_int64)
        self._call("_swap_counts", n, acc.ctypes.data_as(i64), prop.ctypes.data_as(i64))
        return acc, prop

    @property
    def stats(self):
        """The statistics of the last call, by name ("tau_mean", "accept_rate", ...)."""
        stat = getattr(_C, self._prefix + "_stat")
        with _using(self.model, self) as (_, p):
            return {m.name.lower(): stat(p, int(m)) for m in self._stat_enum if m.name != "COUNT"}

    def __repr__(self):
        return "<ebm.%s %s%s>" % (type(self).__name__, self.kind.name.lower(),
                                  " closed" if self.closed else "")


def _unknown_option(what, name, enums):
    names = [m.name.lower() for e in enums for m in e if m.name != "SAMPLER_OPTION"]
    return TypeError("unknown %s option %r (one of %s)" % (what, name, ", ".join(names)))


# ---------------------------------------------------------------------------
# Sampler


class Sampler(_OnModel):
    """A transition kernel on a model's states, single or coupled (ebm_sampler_t).

    Sampler(model, kind="gibbs", **options): kind "gibbs", "mh_uniform",
    "langevin", "gibbs_langevin" or "tempering"; options by name (clamp_layers,
    coupling="blockwise"|"crn"|"maximal", langevin_steps, step_size, cosine,
    adjust_after, scale_by_variance, closed_form, iteration, precondition,
    row_offset, and ladder=[beta_0, ..., 1] for "tempering", whose rows are
    chains of len(ladder) replicas, the last of each at beta = 1). The sampler
    keeps its model alive. Chains belong to the caller: step() and
    coupled_step() move float32 arrays in place.
    """

    _destroy = _C.ebm_sampler_destroy
    _prefix, _kinds, _stat_enum = "ebm_sampler", SamplerKind, SamplerStat

    def __init__(self, model, kind="gibbs", **options):
        super().__init__(model, kind, options)

    @staticmethod
    def _option(name):
        try:
            return int(SamplerOption[name.upper()])
        except KeyError:
            raise _unknown_option("sampler", name, (SamplerOption,)) from None

    def step(self, x, rng):
        """One transition of every row of the float32 chains x, in place; returns x."""
        x, ld = _writable(x, "x", self.model.state_width)
        self._call("_step", _generator(rng), x.shape[0], _ptr(x), ld)
        return x

    def coupled_step(self, x, y, rng):
        """x_t -> x_{t+1}, y_{t-1} -> y_t in place; returns a bool array: rows that met."""
        x, ldx = _writable(x, "x", self.model.state_width)
        y, ldy = _writable(y, "y", self.model.state_width)
        if y.shape[0] != x.shape[0]:
            raise ValueError("x has %d rows, y has %d" % (x.shape[0], y.shape[0]))
        if np.shares_memory(x, y):
            raise ValueError("x and y share memory")
        met = np.zeros(x.shape[0], np.uint8)
        self._call("_coupled_step", _generator(rng), x.shape[0], _ptr(x), ldx, _ptr(y), ldy,
                   _ptr(met))
        return met.astype(bool)

    def __reduce__(self):
        options = dict(self._options)
        options["iteration"] = int(self.stats["iteration"])
        return (_sampler, (self.model, self.kind, options))


def _sampler(model, kind, options):
    return Sampler(model, kind, **options)


# ---------------------------------------------------------------------------
# Estimator


class Estimator(_OnModel):
    """A gradient estimator (ebm_estimator_t): CD, PCD, UCD, UCD-LMI, GRBM modified
    CD, PT (PCD on parallel-tempering chains).

    Estimator(model, kind="ucd", **options): kind "cd", "pcd", "ucd",
    "ucd_lmi", "grbm_cd" or "pt" (with ladder=[beta_0, ..., 1]); options by
    name: ladder, k, max_steps, chains,
    marginalize ("none"|"even"|"odd"|"both"), positive ("auto"|"exact"|
    "mean_field"|"coupled"|"sampled"), sampler ("gibbs"|"langevin"|
    "gibbs_langevin"), burn_in, search_sweeps, mean_field_iters,
    mean_field_tol, step_limit, row_offset and chain_offset (the global
    numbers of the first data row and chain: data-parallel training,
    docs/distributed.md), and any sampler option (coupling, step_size,
    ...), which goes to the estimator's samplers. The estimator keeps its
    model alive.
    """

    _destroy = _C.ebm_estimator_destroy
    _prefix, _kinds, _stat_enum = "ebm_estimator", EstimatorKind, EstimatorStat

    def __init__(self, model, kind="ucd", **options):
        super().__init__(model, kind, options)

    @staticmethod
    def _option(name):
        key = name.upper()
        if key in EstimatorOption.__members__ and key != "SAMPLER_OPTION":
            return int(EstimatorOption[key])
        if key in SamplerOption.__members__:
            return int(EstimatorOption.SAMPLER_OPTION) + int(SamplerOption[key])
        raise _unknown_option("estimator", name, (EstimatorOption, SamplerOption))

    def gradient(self, data, rng, out=None):
        """The estimate of (1/n) sum_r d log p(v_r)/dtheta over the visible rows data.

        Returns a float32 array of param_count in the parameter layout (the
        ascent direction), written into out if given. data is (n, n_visible)
        (full states are accepted: only layer 0 is read).
        """
        m = self.model
        data, ld = _readable(data, "data")
        if data.shape[1] not in (m.n_visible, m.state_width):
            raise ValueError("data has %d columns: expected %d visible columns" %
                             (data.shape[1], m.n_visible))
        out = _out_vector(out, m.param_count)
        self._call("_gradient", _generator(rng), data.shape[0], _ptr(data), ld, _ptr(out))
        return out

    @property
    def num_chains(self):
        """The number of persistent chain rows (PCD: chains; PT: chains x replicas)."""
        with _using(self.model, self) as (_, p):
            return _C.ebm_estimator_num_chains(p)

    @property
    def chains(self):
        """A copy of the persistent chains (num_chains full states); assign to replace."""
        w = self.model.state_width
        # One hold for the count and the copy: the library writes as many rows
        # as the estimator has, which another thread could change in between.
        with _using(self.model, self):
            out = np.empty((self.num_chains, w), _f32)
            self._call("_get_chains", _ptr(out), w)
        return out

    @chains.setter
    def chains(self, x):
        w = self.model.state_width
        x, ld = _readable(np.zeros((0, w), _f32) if x is None else x, "chains", w)
        self._call("_set_chains", x.shape[0], _ptr(x), ld)

    def __reduce__(self):
        return (_estimator, (self.model, self.kind, dict(self._options), self.chains))


def _estimator(model, kind, options, chains):
    e = Estimator(model, kind, **options)
    if len(chains):
        e.chains = chains
    return e
