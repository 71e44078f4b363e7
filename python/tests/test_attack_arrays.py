"""Attack on the array arguments: every array a call reads, on every kind of
model (conftest.ATTACK_KINDS), given in bad dtypes, layouts, shapes and
values, and the arrays the calls write (out, chains moved in place).

The promises (python/README.md, "Arrays" and "Errors and lifetimes"): an
array of a complex, object, string or other non-real dtype raises TypeError
naming the argument; one of the wrong shape, or with values the library
refuses (NaN, infinities), raises ValueError; a refused call changes
nothing (the model, the generator, the array and the memory under it); an
accepted array, in any dtype, layout or alignment, gives what its dense
float32 copy gives and is never written; arrays written in place must be
writable, aligned float32 with adjacent elements in a row, and are left as
they were when refused."""
import numpy as np
import pytest

import ebm

F32 = np.float32
N = 4  # rows of every states argument


# ---------------------------------------------------------------------------
# Valid arguments, by form


def _states(m, seed=1):
    return m.random_state(ebm.Generator(seed), N)


def _layer1(m, seed=2):
    o, k = m.offsets[1], m.sizes[1]
    return np.ascontiguousarray(_states(m, seed)[:, o:o + k])


def _offsets(m):
    """Centring offsets inside the library's ranges: binary units in (0, 1),
    spin units in (-1, 1), 0 for the others (which take none)."""
    mu = np.zeros(m.state_width, F32)
    for o, k, u in zip(m.offsets, m.sizes, m.units):
        if u == ebm.Units.BINARY:
            mu[o:o + k] = np.linspace(0.1, 0.9, k)
        elif u == ebm.Units.SPIN:
            mu[o:o + k] = np.linspace(-0.5, 0.5, k)
    return mu


def _clamp(m):
    return np.arange(m.state_width) < m.n_visible


# form -> (the argument's name in messages, valid value of a model)
FORMS = {
    "x": ("x", _states),
    "v": ("v", lambda m: np.ascontiguousarray(_states(m)[:, :m.n_visible])),
    "vx": ("x", lambda m: np.ascontiguousarray(_states(m)[:, :m.n_visible])),
    "data": ("data", lambda m: np.ascontiguousarray(_states(m)[:, :m.n_visible])),
    "chains": ("chains", _states),
    "mu": ("mu", _states),  # mean_field's means: valid states are valid means
    "xl": ("xl", _layer1),
    "p": ("p", lambda m: m.params() * F32(0.5)),
    "g": ("g", lambda m: np.full(m.param_count, 1e-3, F32)),
    "offsets": ("mu", _offsets),
    "target": ("target", _offsets),
    "coef": ("coef", lambda m: np.linspace(0.5, 1.5, N)),
    "base": ("base", lambda m: np.linspace(-1.0, 1.0, m.n_visible).astype(F32)),
    "clamp": ("clamp", lambda m: _clamp(m)),
    "betas": ("betas", lambda m: np.array([0.25, 0.5, 1.0])),
}


def _pcd_chains(m, a, g):
    e = ebm.Estimator(m, "pcd")
    e.chains = a
    return e.chains


def _tempering(cls, m, kind):
    """A tempering sampler or PT estimator of m; of a binary RBM for dReLU
    units, which have none (a ladder's checks do not depend on the model)."""
    if ebm.Units.DRELU in m.units:
        m = ebm.RBM(4, 3)
    return cls(m, kind)


# call -> (form of its attacked argument, call(model, argument, generator))
CALLS = {
    "energy": ("x", lambda m, a, g: m.energy(a)),
    "free_energy": ("x", lambda m, a, g: m.free_energy(a, "odd")),
    "free_energy_visible": ("vx", lambda m, a, g: m.free_energy(a)),
    "energy_grad": ("x", lambda m, a, g: m.energy_grad(a)),
    "energy_grad_coef": ("coef", lambda m, a, g: m.energy_grad(_states(m), coef=a)),
    "energy_grad_input": ("x", lambda m, a, g: m.energy_grad_input(a, 0)),
    "layer_input": ("x", lambda m, a, g: m.layer_input(a, 1)),
    "layer_mean": ("x", lambda m, a, g: m.layer_mean(a, 0)),
    "layer_mean_visible": ("vx", lambda m, a, g: m.layer_mean(a, 1)),
    "layer_logprob": ("x", lambda m, a, g: m.layer_logprob(a, 1, _layer1(m))),
    "layer_logprob_xl": ("xl", lambda m, a, g: m.layer_logprob(_states(m), 1, a)),
    "layer_argmin": ("x", lambda m, a, g: m.layer_argmin(a, 1)),
    "layer_sample": ("x", lambda m, a, g: m.layer_sample(a, 1, g)),
    "random_state": ("x", lambda m, a, g: m.random_state(g, x=a, clamp=_clamp(m))),
    "random_state_clamp": ("clamp", lambda m, a, g: m.random_state(g, x=_states(m), clamp=a)),
    "local_search": ("x", lambda m, a, g: m.local_search(a, g, max_sweeps=20)),
    "mean_field": ("mu", lambda m, a, g: m.mean_field(a, max_iter=5)),
    "log_likelihood": ("v", lambda m, a, g: m.log_likelihood(a, log_z=1.0)),
    "log_likelihood_bound": ("v", lambda m, a, g: m.log_likelihood_bound(a, log_z=1.0)),
    "log_likelihood_is": ("v", lambda m, a, g: m.log_likelihood_is(a, g, samples=2, log_z=1.0)),
    "log_partition_base": ("base", lambda m, a, g: m.log_partition("ais", g, chains=2, betas=3,
                                                                   base=a)),
    "set_params": ("p", lambda m, a, g: m.set_params(a)),
    "axpy_params": ("g", lambda m, a, g: m.axpy_params(0.5, a)),
    "set_centring_offsets": ("offsets", lambda m, a, g: m.set_centring_offsets(a)),
    "move_centring_offsets": ("target", lambda m, a, g: m.move_centring_offsets(0.5, a)),
    "gradient_cd": ("data", lambda m, a, g: ebm.Estimator(m, "cd").gradient(a, g)),
    "gradient_pcd": ("data", lambda m, a, g: ebm.Estimator(m, "pcd", chains=3).gradient(a, g)),
    "estimator_chains": ("chains", _pcd_chains),
    "sampler_set_ladder": ("betas", lambda m, a, g: _tempering(ebm.Sampler, m, "tempering")
                           .set_ladder(a).ladder),
    "estimator_set_ladder": ("betas", lambda m, a, g: _tempering(ebm.Estimator, m, "pt")
                             .set_ladder(a).ladder),
}
ROWS = {"x", "v", "vx", "data", "chains", "mu", "xl"}  # forms with one row per state


def _flat(r):
    if isinstance(r, tuple):
        return tuple(_flat(v) for v in r)
    if isinstance(r, np.ndarray):
        return r.dtype.str, r.shape, r.tobytes()
    return repr(r)


def outcome(model, call, a):
    """What the call does with a, on a copy of model: its result or its error
    (type and message), the model's bytes and the generator's state after."""
    m, g = model.copy(), ebm.Generator(7)
    try:
        got = ("ok", _flat(CALLS[call][1](m, a, g)))
    except (TypeError, ValueError) as e:
        got = ("error", type(e).__name__, str(e))
    return got, m.to_bytes(), g.state.tobytes()


def refused(attack, model, call, a, errors, match=None):
    """Asserts that the call on model with a raises one of errors (matching
    match) and changes nothing; returns the exception."""
    g = ebm.Generator(7)
    g.normal(1)  # a spare normal, so that any move of the generator shows
    snap = attack.Snapshot(model, g, a)
    with pytest.raises(errors, match=match) as e:
        CALLS[call][1](model, a, g)
    snap.check()
    return e.value


# ---------------------------------------------------------------------------
# Layouts: views whose contents are a valid argument


# (test_objects.py reads more views of a binary RBM's states.)
# layout -> view(attack helpers, a)
LAYOUTS_2D = {
    "fortran": lambda t, a: np.asfortranarray(a),
    "reversed_rows": lambda t, a: a[::-1].copy()[::-1],
    "strided_rows": lambda t, a: np.repeat(a, 3, axis=0)[::3],
    "window": lambda t, a: np.pad(a, ((1, 1), (2, 3)))[1:-1, 2:-3],
    "unaligned": lambda t, a: t.unaligned(a),
    "readonly": lambda t, a: t.readonly(a),
    "broadcast_row": lambda t, a: np.broadcast_to(a[1], a.shape),  # row stride 0
    "overlapping_rows": lambda t, a: np.lib.stride_tricks.as_strided(  # rows share elements
        np.tile(a[1], len(a)), a.shape, (a.itemsize, a.itemsize), writeable=False),
}
LAYOUTS_1D = {
    "strided": lambda t, a: np.repeat(a, 2)[::2],
    "reversed": lambda t, a: a[::-1].copy()[::-1],
    "unaligned": lambda t, a: t.unaligned(a),
    "readonly": lambda t, a: t.readonly(a),
    "broadcast": lambda t, a: np.broadcast_to(a[:1], a.shape),
}


def _layout_cases():
    for call, (form, _) in CALLS.items():
        layouts = LAYOUTS_2D if form in ROWS else LAYOUTS_1D
        for layout in layouts:
            yield pytest.param(call, layout, id="%s-%s" % (call, layout))


@pytest.mark.parametrize("call, layout", list(_layout_cases()))
def test_layout_reads_as_its_dense_copy(model_kind, attack, call, layout):
    """Any layout gives what the view's dense copy gives (a result or the same
    error), and neither the view nor the memory under it is written."""
    m = attack.model(model_kind)
    form = CALLS[call][0]
    a = FORMS[form][1](m)
    layouts = LAYOUTS_2D if form in ROWS else LAYOUTS_1D
    view = layouts[layout](attack, a)
    dense = np.array(view, order="C")
    snap = attack.Snapshot(view)
    assert outcome(m, call, view) == outcome(m, call, dense)
    snap.check()


# ---------------------------------------------------------------------------
# Dtypes

REFUSED_DTYPES = {
    "object": object,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "str": np.str_,
    "bytes": "S12",
    "datetime64": "M8[s]",
    "timedelta64": "m8[s]",
    "void": "V4",
}


def _as(a, dtype):
    if np.dtype(dtype).kind in "MmV":
        return np.zeros(a.shape, dtype)
    return a.astype(dtype)


def _by_kind(values, everywhere, few):
    """(model kind, value) pairs: every value on the kinds of everywhere, the
    values of few on the others (the binding checks dtypes before the
    library sees the array, whatever the model)."""
    return [(k, v) for k in ATTACK_KINDS_NAMES for v in values
            if k in everywhere or v in few]


ATTACK_KINDS_NAMES = ["rbm", "spin", "dbm", "grbm", "potts", "drelu", "centred"]


@pytest.mark.parametrize("model_kind, dtype",
                         _by_kind(REFUSED_DTYPES, {"rbm"}, {"object", "str"}))
@pytest.mark.parametrize("call", list(CALLS))
def test_dtype_refused_by_name(model_kind, attack, call, dtype):
    m = attack.model(model_kind)
    form = CALLS[call][0]
    a = _as(FORMS[form][1](m), REFUSED_DTYPES[dtype])
    refused(attack, m, call, a, TypeError, match=r"^%s\b" % FORMS[form][0])


CONVERTED_DTYPES = ["bool", "int8", "uint8", "int64", "float16", "float64", ">f4", ">f8"]


@pytest.mark.parametrize("model_kind, dtype",
                         _by_kind(CONVERTED_DTYPES, {"rbm", "spin", "grbm"}, {"float64", ">f4"}))
@pytest.mark.parametrize("call", list(CALLS))
def test_dtype_converted_as_float32(model_kind, attack, call, dtype):
    """A real, integer or boolean array gives what its float32 conversion gives
    (a result, or the same refusal of its values: bool states of a spin
    layer, say), and is not written."""
    m = attack.model(model_kind)
    good = FORMS[CALLS[call][0]][1](m)
    a = good.astype(dtype)
    snap = attack.Snapshot(a)
    # the reference: a converted to the dtype the argument has when valid
    # (float64 for coef and ladders, float32 else; a mask is read as != 0)
    native = good.dtype if good.dtype == np.float64 else F32
    assert outcome(m, call, a) == outcome(m, call, a.astype(native))
    snap.check()


# ---------------------------------------------------------------------------
# Shapes

SHAPES_2D = {
    "one_row_1d": lambda a: a[1],
    "3d": lambda a: a[None],
    "scalar": lambda a: a[1, 0],
    "extra_column": lambda a: np.hstack([a, a[:, :1]]),
    "missing_column": lambda a: a[:, :-1],
    "no_columns": lambda a: a[:, :0],
    "nested_list": lambda a: [a.tolist()],
}
SHAPES_1D = {
    "2d": lambda a: a[None],
    "short": lambda a: a[:-1],
    "long": lambda a: np.concatenate([a, a[:1]]),
    "empty": lambda a: a[:0],
    "scalar": lambda a: a[0],
}


def _shape_cases():
    for call, (form, _) in CALLS.items():
        for shape in (SHAPES_2D if form in ROWS else SHAPES_1D):
            yield pytest.param(call, shape, id="%s-%s" % (call, shape))


@pytest.mark.parametrize("call, shape", list(_shape_cases()))
def test_wrong_shape_refused(model_kind, attack, call, shape):
    """ValueError (the binding's or the library's), nothing changed."""
    m = attack.model(model_kind)
    form = CALLS[call][0]
    a = FORMS[form][1](m)
    bad = (SHAPES_2D if form in ROWS else SHAPES_1D)[shape](a)
    if not isinstance(bad, np.ndarray):
        bad = np.asarray(bad)
    refused(attack, m, call, bad, ValueError)


@pytest.mark.parametrize("call", [c for c, (form, _) in CALLS.items() if form in ROWS])
def test_zero_rows(model_kind, attack, call):
    """No rows: an empty result, or a ValueError that changes nothing."""
    m = attack.model(model_kind)
    a = FORMS[CALLS[call][0]][1](m)[:0]
    g = ebm.Generator(7)
    snap = attack.Snapshot(m, a)
    try:
        r = CALLS[call][1](m, a, g)
    except ValueError:
        snap.check()
        return
    for v in (r if isinstance(r, tuple) else (r,)):
        if isinstance(v, np.ndarray) and v.ndim >= 1:
            assert v.shape[0] in (0, m.param_count), (call, v.shape)  # energy_grad: a vector


MISMATCHED_ROWS = {
    "layer_logprob": lambda m, g: m.layer_logprob(_states(m)[:3], 1, _layer1(m)),
    "energy_grad_coef": lambda m, g: m.energy_grad(_states(m), coef=np.ones(N + 1)),
    "random_state_clamp": lambda m, g: m.random_state(
        g, x=_states(m), clamp=np.ones((N + 1, m.state_width), bool)),
    "coupled_step": lambda m, g: ebm.Sampler(m).coupled_step(_states(m), _states(m, 3)[:3], g),
}


@pytest.mark.parametrize("call", list(MISMATCHED_ROWS))
def test_mismatched_rows_refused(model_kind, attack, call):
    m = attack.model(model_kind)
    g = ebm.Generator(7)
    snap = attack.Snapshot(m, g)
    with pytest.raises(ValueError, match="rows|shape"):
        MISMATCHED_ROWS[call](m, g)
    snap.check()


# ---------------------------------------------------------------------------
# Values the library refuses

# random_state never reads x (include/ebm.h: clamped units keep whatever
# they hold) and a clamp mask's nonzero entries, NaN among them, clamp.
READ_VALUES = [c for c, (form, _) in CALLS.items() if c not in ("random_state",)
               and form != "clamp"]


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("call", READ_VALUES)
def test_nonfinite_refused(model_kind, attack, call, value):
    """NaN or an infinity in row 1 (or element 1): EbmValueError, nothing changed."""
    m = attack.model(model_kind)
    a = FORMS[CALLS[call][0]][1](m).copy()
    a[1] = value
    e = refused(attack, m, call, a, ValueError)
    if isinstance(e, ebm.EbmError):
        assert e.code < 0 and e.message


# ---------------------------------------------------------------------------
# Arrays written in place: out, and the chains of Sampler.step and coupled_step


def _bad_outputs(t, a):
    """Arrays the calls must refuse to write, by name, from a good one (t: the
    attack helpers)."""
    two_d = a.ndim == 2
    bad = {
        "readonly": t.readonly(a),
        "float64": a.astype(np.float64),
        "big_endian": a.astype(">f4"),
        "unaligned": t.unaligned(a),
        "reversed": a[::-1, ::-1].copy()[::-1, ::-1] if two_d else a[::-1].copy()[::-1],
        "strided": np.repeat(a, 2, axis=-1)[..., ::2],
        "broadcast": np.broadcast_to(a[:1], a.shape),
        "short": a[..., :-1].copy(),
        "list": a.tolist(),
    }
    if two_d:
        bad["fortran"] = np.asfortranarray(a)
    else:
        bad["2d"] = a[None].copy()
    return bad


OUTPUTS = {
    "gradient_out": lambda m, a, g: ebm.Estimator(m, "cd").gradient(
        FORMS["data"][1](m), g, out=a),
    "energy_grad_out": lambda m, a, g: m.energy_grad(_states(m), out=a),
    "step_x": lambda m, a, g: ebm.Sampler(m).step(a, g),
    "coupled_step_x": lambda m, a, g: ebm.Sampler(m).coupled_step(a, _states(m, 3), g),
    "coupled_step_y": lambda m, a, g: ebm.Sampler(m).coupled_step(_states(m, 3), a, g),
}


BAD_OUTPUTS = ["readonly", "float64", "big_endian", "unaligned", "reversed", "strided",
               "broadcast", "short", "list"]


def _output_cases():
    for target in OUTPUTS:
        for bad in BAD_OUTPUTS + (["2d"] if target.endswith("_out") else ["fortran"]):
            yield pytest.param(target, bad, id="%s-%s" % (target, bad))


@pytest.mark.parametrize("target, bad", list(_output_cases()))
def test_output_refused_and_not_written(model_kind, attack, target, bad):
    m = attack.model(model_kind)
    good = np.full(m.param_count, 7.0, F32) if target.endswith("_out") else _states(m)
    a = _bad_outputs(attack, good)[bad]
    g = ebm.Generator(7)
    snap = attack.Snapshot(m, g, *([a] if isinstance(a, np.ndarray) else []))
    name = target.rsplit("_", 1)[1]
    with pytest.raises((TypeError, ValueError), match=name):
        OUTPUTS[target](m, a, g)
    snap.check()


@pytest.mark.parametrize("alias", ["same", "overlapping_view"])
def test_coupled_chains_that_share_memory_refused(model_kind, attack, alias):
    m = attack.model(model_kind)
    x = np.vstack([_states(m), _states(m, 3)])
    y = x if alias == "same" else x[1:]
    x = x if alias == "same" else x[:-1]
    g = ebm.Generator(7)
    s = ebm.Sampler(m)
    snap = attack.Snapshot(m, g, s, x)
    with pytest.raises(ValueError, match="share memory"):
        s.coupled_step(x, y, g)
    snap.check()


@pytest.mark.parametrize("layout", ["strided_rows", "window"])
def test_chains_moved_in_place_at_a_row_stride(model_kind, attack, layout):
    """Rows at a stride move in place as their dense copy does; the memory
    between them is not written."""
    m = attack.model(model_kind)
    view = LAYOUTS_2D[layout](attack, _states(m))
    base = view.base
    before, dense = base.copy(), view.copy()
    ebm.Sampler(m).step(view, ebm.Generator(9))
    ebm.Sampler(m).step(dense, ebm.Generator(9))
    np.testing.assert_array_equal(view, dense)
    # the view's elements, marked in a twin of its base: the others must stay
    marks = np.zeros(base.shape, F32)
    np.ndarray(view.shape, F32, marks, view.ctypes.data - base.ctypes.data,
               view.strides)[...] = 1
    np.testing.assert_array_equal(base[marks == 0], before[marks == 0])
    assert np.count_nonzero(marks) == view.size


# ---------------------------------------------------------------------------
# Refused steps and gradients change nothing, for every sampler and estimator


SAMPLER_KINDS = {"gibbs": {}, "mh_uniform": {}, "langevin": {}, "gibbs_langevin": {},
                 "tempering": {"ladder": [0.5, 1.0]}}
ESTIMATOR_KINDS = {"cd": {}, "pcd": {"chains": 4}, "ucd": {}, "ucd_lmi": {}, "grbm_cd": {},
                   "pt": {"ladder": [0.5, 1.0], "chains": 2}}


@pytest.mark.parametrize("kind", list(SAMPLER_KINDS))
def test_refused_step_changes_nothing(model_kind, attack, kind):
    m = attack.model(model_kind)
    s = attack.made(ebm.Sampler, m, kind, **SAMPLER_KINDS[kind])
    if s is None:
        return
    x, y = _states(m), _states(m, 3)
    g = ebm.Generator(7)
    try:
        s.step(x, g)
        runs = True
    except ebm.EbmError:
        runs = False  # a kind the model makes but does not run (MH on a free Gaussian layer)
    x[2, -1] = np.nan
    snap = attack.Snapshot(m, g, s, x, y)
    with pytest.raises(ValueError, match="nan" if runs else None):
        s.step(x, g)
    with pytest.raises(ValueError):
        s.coupled_step(x, y, g)
    with pytest.raises(ValueError):
        s.coupled_step(y, x, g)
    snap.check()


@pytest.mark.parametrize("kind", list(ESTIMATOR_KINDS))
def test_refused_gradient_changes_nothing(model_kind, attack, kind):
    m = attack.model(model_kind)
    e = attack.made(ebm.Estimator, m, kind, **ESTIMATOR_KINDS[kind])
    if e is None:
        return
    data = FORMS["data"][1](m)
    g = ebm.Generator(7)
    e.gradient(data, g)  # PCD and PT: chains to keep
    data[1, 0] = np.nan
    out = np.full(m.param_count, 3.0, F32)
    snap = attack.Snapshot(m, g, e, data, out)
    with pytest.raises(ValueError, match="nan"):
        e.gradient(data, g, out=out)
    with pytest.raises(ValueError):
        e.chains = np.full((2, m.state_width), np.nan, F32)
    snap.check()


def test_kind_names_are_conftests(attack):
    assert ATTACK_KINDS_NAMES == list(attack.kinds)
