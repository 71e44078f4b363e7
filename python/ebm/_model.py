"""Model: a layered Boltzmann machine (RBM, DBM, GRBM) over ebm_model_t.

Methods return new arrays and never write into their inputs; the C
functions are bound once (ebm._lib.checked) and called with the model held
for the call (_Handle).
"""
import ctypes
import os
import warnings

import numpy as np

from ._abi import InitScheme, ParamKind, Units
from ._arrays import (_INT64, _check_int, _dense, _enum_value, _f32, _float_array, _mask_array,
                      _out_vector, _ptr, _readable, _real)
from ._errors import _fail
from ._generator import _generator
from ._handle import _Handle, _held_call, _using
from ._lib import checked as _C

MAX_LAYERS = _C.ebm_max_layers()
_ERRBUF = 512


def _deprecated(old, new):
    """The DeprecationWarning of a name kept one release, at the caller's line."""
    warnings.warn("%s is deprecated and will be removed in the next release; use %s" %
                  (old, new), DeprecationWarning, stacklevel=3)


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
    Tubiana et al. 2019; their parameters are shape_params()) are for an RBM (two
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
            fn = _C.ebm_model_create_potts
            rc = fn(ctypes.byref(out), len(sizes), arr, q, hid, err, _ERRBUF)
        else:
            fn = _C.ebm_model_create
            rc = fn(ctypes.byref(out), len(sizes), arr, vis, hid, err, _ERRBUF)
        if rc < 0:
            _fail(rc, fn.__name__, err.value.decode(errors="replace"))
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

    def _call(self, fn, *args):
        """fn (a bound C function of ebm._lib.checked) on this model and args; a
        _Handle among args (a generator) is passed as its handle, held for the
        call."""
        return _held_call((self,), fn, _model_errmsg, args)

    # -- parameters ---------------------------------------------------------

    def init(self, rng, scheme="orthogonal", scale=1.0):
        """Initialise all parameters (ebm_model_init); rng is a Generator or a seed."""
        s = _enum_value(InitScheme, scheme, "scheme")
        self._call(_C.ebm_model_init, _generator(rng), s, _real(scale, "scale"))
        return self

    def params(self):
        """A float32 copy of all parameters, in the library's flat layout."""
        out = np.empty(self.param_count, _f32)
        self._call(_C.ebm_model_get_params, _ptr(out))
        return out

    @staticmethod
    def _vector(v, name, n):
        """v as a dense float32 vector of n values (ValueError naming it otherwise)."""
        v = _dense(v, name)
        if v.shape != (n,):
            raise ValueError("%s must have shape (%d,), not %s" % (name, n, v.shape))
        return v

    def set_params(self, p):
        """Replace all parameters by p (param_count values)."""
        p = self._vector(p, "p", self.param_count)
        self._call(_C.ebm_model_set_params, _ptr(p))

    def axpy_params(self, alpha, g):
        """theta += alpha * g over the whole parameter vector."""
        g = self._vector(g, "g", self.param_count)
        self._call(_C.ebm_model_axpy_params, _real(alpha, "alpha"), _ptr(g))

    @property
    def centring_offsets(self):
        """A float32 copy of the centring offsets mu (ebm_model_get_offsets),
        one per unit: a state row's width, layer l at layer_offset(l); all 0
        unless set. (`offsets` is the layers' first columns.)"""
        out = np.empty(self.state_width, _f32)
        self._call(_C.ebm_model_get_offsets, _ptr(out))
        return out

    def set_centring_offsets(self, mu, keep_law=False):
        """Centre the model: E = -sum b.(x - mu) - sum (x - mu)^T W (x' - mu').

        mu: one offset per unit, in [0, 1] for binary units and [-1, 1] for
        spin units. keep_law=True first moves the biases so that the
        distribution stays the same; False keeps the parameters.
        """
        mu = self._vector(mu, "mu", self.state_width)
        self._call(_C.ebm_model_set_offsets, _ptr(mu), 1 if keep_law else 0)

    def move_centring_offsets(self, rate, target):
        """mu <- mu + rate (target - mu), keeping the distribution (the offset
        update of centred training; rate in [0, 1])."""
        target = self._vector(target, "target", self.state_width)
        self._call(_C.ebm_model_move_offsets, _real(rate, "rate"), _ptr(target))

    def param_block(self, kind, l):
        """(offset, rows, cols) of a block: kind "weight" (l = 1..L), "bias", "logvar",
        "shape" (l = 1)."""
        k = _enum_value(ParamKind, kind, "kind")
        off, rows, cols = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        self._call(_C.ebm_model_param_block, k, _check_int(l, "l"), ctypes.byref(off),
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

    def shape_params(self):
        """A copy of the dReLU hidden layer's shape block (ParamKind.SHAPE), an
        array of shape (3, n_1): the rows log gamma+, log gamma- and delta."""
        off, rows, cols = self.param_block(ParamKind.SHAPE, 1)
        return self.params()[off:off + rows * cols].reshape(rows, cols)

    def shape(self):
        """Deprecated name of shape_params() (it hid numpy's .shape); removed in
        the next release."""
        _deprecated("Model.shape()", "Model.shape_params()")
        return self.shape_params()

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
        self._call(_C.ebm_model_energy, x.shape[0], _ptr(x), ld, _ptr(out))
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
        self._call(_C.ebm_model_free_energy, mask, x.shape[0], _ptr(x), ld, _ptr(out))
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
        self._call(_C.ebm_model_energy_grad, mask, n, _ptr(x), ld, _ptr(coef), _ptr(out))
        return out

    def energy_grad_input(self, x, l, sum_out=None):
        """dF_S/dx_l, shape (n, n_l)."""
        l = self._layer(l)
        mask = _layers_mask(sum_out, self.n_layers)
        x, ld = self._states(x, "x", self._reads(mask))
        out = np.empty((x.shape[0], self.sizes[l]), _f32)
        self._call(_C.ebm_model_energy_grad_input, mask, l, x.shape[0], _ptr(x), ld, _ptr(out),
                   self.sizes[l])
        return out

    def _layer_out(self, fn, x, l):
        l = self._layer(l)
        x, ld = self._states(x, "x", self._neighbours(l))
        out = np.empty((x.shape[0], self.sizes[l]), _f32)
        self._call(fn, l, x.shape[0], _ptr(x), ld, _ptr(out), self.sizes[l])
        return out

    def layer_input(self, x, l):
        """The input a of layer l given its neighbours in x, shape (n, n_l)."""
        return self._layer_out(_C.ebm_model_layer_input, x, l)

    def layer_mean(self, x, l):
        """E[x_l | neighbours], shape (n, n_l)."""
        return self._layer_out(_C.ebm_model_layer_mean, x, l)

    def layer_logprob(self, x, l, xl):
        """log p(x_l = xl | neighbours in x), float64 of shape (n,)."""
        l = self._layer(l)
        x, ld = self._states(x, "x", self._neighbours(l))
        xl, ldl = _readable(xl, "xl", self.sizes[l])
        if xl.shape[0] != x.shape[0]:
            raise ValueError("xl has %d rows, x has %d" % (xl.shape[0], x.shape[0]))
        out = np.empty(x.shape[0])
        self._call(_C.ebm_model_layer_logprob, l, x.shape[0], _ptr(x), ld, _ptr(xl), ldl,
                   _ptr(out))
        return out

    def layer_argmin(self, x, l):
        """Full states with layer l replaced by its conditional argmin (a new array)."""
        l = self._layer(l)
        x, ld = self._copy_states(x, "x", self._neighbours(l))
        self._call(_C.ebm_model_layer_argmin, l, x.shape[0], _ptr(x), ld)
        return x

    def layer_sample(self, x, l, rng):
        """Full states with layer l drawn from its conditional (a new array)."""
        l = self._layer(l)
        x, ld = self._copy_states(x, "x", self._neighbours(l))
        self._call(_C.ebm_model_layer_sample, l, _generator(rng), x.shape[0], _ptr(x), ld)
        return x

    def sample_layer(self, x, l, rng):
        """Deprecated name of layer_sample() (the C function is
        ebm_model_layer_sample); removed in the next release."""
        _deprecated("Model.sample_layer()", "Model.layer_sample()")
        return self.layer_sample(x, l, rng)

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
        self._call(_C.ebm_model_random_state, _generator(rng), x.shape[0], _ptr(x), ld,
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
        capped = self._call(_C.ebm_model_local_search, _generator(rng), x.shape[0], _ptr(x),
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
        missed = self._call(_C.ebm_model_mean_field, mu.shape[0], _ptr(mu), ld,
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
            self._call(_C.ebm_model_log_partition_exact, ctypes.byref(out))
        elif method == "ais":
            if rng is None:
                raise ValueError("log_partition(method='ais') needs rng")
            b = None
            if base is not None:
                b = _dense(base, "base")
                if b.shape != (self.n_visible,):
                    raise ValueError("base must have shape (%d,), not %r" %
                                     (self.n_visible, b.shape))
            self._call(_C.ebm_model_log_partition_ais_base, _generator(rng),
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
        self._call(_C.ebm_model_log_likelihood, _real(log_z, "log_z"), v.shape[0], _ptr(v), ld,
                   _ptr(out))
        return out

    def log_likelihood_bound(self, v, log_z=None):
        """The mean-field lower bound on log p(v) of visible rows; log Z exact if not given."""
        v, ld = self._visible(v)
        if log_z is None:
            log_z = self.log_partition("exact")
        out = np.empty(v.shape[0])
        self._call(_C.ebm_model_log_likelihood_bound, _real(log_z, "log_z"), v.shape[0], _ptr(v),
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
        self._call(_C.ebm_model_log_likelihood_is, _generator(rng), _real(log_z, "log_z"),
                   _check_int(samples, "samples"), v.shape[0], _ptr(v), ld, _ptr(out))
        return out

    # -- files and copies ---------------------------------------------------

    def save(self, path):
        """Write the model to path in the library's format, atomically."""
        self._call(_C.ebm_model_save, _path(path))

    def to_bytes(self):
        """The model in the library's file format."""
        with _using(self) as (p,):
            size = _C.ebm_model_save_size(p)
        buf = ctypes.create_string_buffer(max(size, 1))
        used = ctypes.c_size_t()
        self._call(_C.ebm_model_save_buffer, buf, size, ctypes.byref(used))
        return buf.raw[:used.value]

    def copy(self):
        return from_bytes(self.to_bytes())

    def __reduce__(self):
        return (from_bytes, (self.to_bytes(),))


def _loaded(fn, *args):
    """The model a loader fn (ebm_model_load, ebm_model_load_buffer) makes of args."""
    out, err = ctypes.c_void_p(), ctypes.create_string_buffer(_ERRBUF)
    rc = fn(ctypes.byref(out), *args, err, _ERRBUF)
    if rc < 0:
        _fail(rc, fn.__name__, err.value.decode(errors="replace"))
    return Model._adopt(out.value)


def load(path):
    """A model from a file written by Model.save (or by the C library)."""
    return _loaded(_C.ebm_model_load, _path(path))


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
    return _loaded(_C.ebm_model_load_buffer, data, len(data))


def RBM(n_visible, n_hidden, visible="binary", hidden="binary"):
    """A restricted Boltzmann machine: Model([n_visible, n_hidden], visible, hidden)."""
    return Model([n_visible, n_hidden], visible, hidden)


def DBM(sizes, units="binary", visible=None):
    """A deep Boltzmann machine with layers sizes (visible first), all of kind units."""
    return Model(sizes, units if visible is None else visible, units)


def GRBM(n_visible, n_hidden, hidden="binary"):
    """A Gaussian-Bernoulli RBM with learned means and variances (Liao et al. 2022)."""
    return Model([n_visible, n_hidden], "gaussian", hidden)

