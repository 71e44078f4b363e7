"""The Python objects: errors, failed calls that change nothing, array
handling, lifetimes, pickling and the generator."""
import gc
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ebm

F32 = np.float32


@pytest.fixture
def rbm(ref):
    return ref.make_model("rbm_binary", seed=3)


@pytest.fixture
def data(rbm, ref):
    return ref.random_states(rbm, 6, seed=4)[:, :rbm.n_visible].copy()


def errmsg(m):
    return ebm.lib.ebm_model_errmsg(m._p).decode()


def check_error(exc, code, pytype=None):
    """The EbmError conventions of _errors.py for one raised exception."""
    e = exc.value
    assert isinstance(e, ebm.EbmError)
    assert e.code == int(code) and e.code < 0
    assert e.name == "EBM_" + ebm.Status(code).name
    assert e.message and e.message in str(e)
    assert e.name in str(e)
    for t in (ValueError, MemoryError, OSError):
        assert isinstance(e, t) == (t is pytype), t
    return e


# ---------------------------------------------------------------------------
# Errors


def test_evalue_invalid_state(rbm, ref):
    x = ref.random_states(rbm, 3, seed=1)
    x[1, 2] = 0.5
    with pytest.raises(ebm.EbmValueError) as exc:
        rbm.energy(x)
    e = check_error(exc, ebm.Status.EVALUE, ValueError)
    assert e.message == errmsg(rbm)            # the library's message, verbatim
    assert "0.5" in e.message and "row 1" in e.message
    assert e.function == "ebm_model_energy"


def test_eshape_raw_call_and_param_block(rbm):
    x = np.zeros((2, rbm.state_width), F32)
    a = np.zeros((2, 8), F32)
    rc = ebm.lib.ebm_model_layer_input(rbm._p, 7, 2, x.ctypes.data, rbm.state_width,
                                       a.ctypes.data, 8)
    assert rc == ebm.Status.ESHAPE
    assert "7" in errmsg(rbm)
    for kind, l in (("weight", 0), ("weight", 2), ("bias", 2), ("bias", -1)):
        with pytest.raises(ebm.EbmValueError) as exc:
            rbm.param_block(kind, l)
        e = check_error(exc, ebm.Status.ESHAPE, ValueError)
        assert e.message == errmsg(rbm)


def test_eunsupported_message_from_model(rbm):
    with pytest.raises(ebm.EbmValueError) as exc:
        ebm.Estimator(rbm, "grbm_cd")
    e = check_error(exc, ebm.Status.EUNSUPPORTED, ValueError)
    assert "GRBM" in e.message
    assert e.message == errmsg(rbm)


def test_eformat(rbm):
    with pytest.raises(ebm.EbmValueError) as exc:
        ebm.from_bytes(b"garbage")
    check_error(exc, ebm.Status.EFORMAT, ValueError)
    good = rbm.to_bytes()
    with pytest.raises(ebm.EbmValueError) as exc:
        ebm.from_bytes(good[:-1])
    check_error(exc, ebm.Status.EFORMAT, ValueError)


def test_eio(tmp_path, rbm):
    missing = tmp_path / "missing.ebm"
    with pytest.raises(OSError) as exc:
        ebm.load(missing)
    e = check_error(exc, ebm.Status.EIO, OSError)
    assert "missing.ebm" in e.message
    with pytest.raises(ebm.EbmIOError) as exc:
        rbm.save(tmp_path)  # a directory
    check_error(exc, ebm.Status.EIO, OSError)
    rbm.save(tmp_path / "ok.ebm")
    np.testing.assert_array_equal(ebm.load(str(tmp_path / "ok.ebm")).params(), rbm.params())


def test_enomem():
    # 2^58 parameters: 2^61 bytes of doubles, more than any address space, so
    # calloc fails whatever the overcommit policy (the library's ELIMIT
    # checks stop at 2^59 weights per block and SIZE_MAX bytes).
    with pytest.raises(MemoryError) as exc:
        ebm.Model([2 ** 29, 2 ** 29])
    e = check_error(exc, ebm.Status.ENOMEM, MemoryError)
    assert isinstance(e, ebm.EbmMemoryError)
    assert "memory" in e.message


def test_elimit():
    with pytest.raises(ebm.EbmError) as exc:
        ebm.RBM(33, 34).log_partition("exact")  # 2^33 states at least
    check_error(exc, ebm.Status.ELIMIT, None)
    with pytest.raises(ebm.EbmError) as exc:
        ebm.Model([2 ** 30, 2 ** 30])  # state width past 2^31 - 1
    check_error(exc, ebm.Status.ELIMIT, None)


def test_create_errors_use_the_buffer():
    with pytest.raises(ebm.EbmValueError) as exc:
        ebm.Model([3, 0])
    e = check_error(exc, ebm.Status.ESHAPE, ValueError)
    assert "sizes[1]" in e.message
    with pytest.raises(ValueError):
        ebm.Model([3, 2], hidden="gaussian")


def test_errors_pickle():
    try:
        ebm.from_bytes(b"garbage")
    except ebm.EbmError as exc:
        e2 = pickle.loads(pickle.dumps(exc))
        assert type(e2) is type(exc) and isinstance(e2, ValueError)
        assert (e2.code, e2.name, e2.message, e2.function, str(e2)) == \
            (exc.code, exc.name, exc.message, exc.function, str(exc))


# ---------------------------------------------------------------------------
# A failed call changes nothing


def test_failed_params_calls_change_nothing(rbm):
    p = rbm.params()
    bad = p.copy()
    bad[3] = np.nan
    with pytest.raises(ebm.EbmValueError):
        rbm.set_params(bad)
    np.testing.assert_array_equal(rbm.params(), p)
    with pytest.raises(ebm.EbmValueError):
        rbm.axpy_params(3e38, np.full(rbm.param_count, 3e38, F32))  # overflows
    np.testing.assert_array_equal(rbm.params(), p)
    g = ebm.Generator(1)
    s = g.state
    with pytest.raises(ebm.EbmValueError):
        rbm.init(g, scale=-1.0)
    np.testing.assert_array_equal(rbm.params(), p)
    np.testing.assert_array_equal(g.state, s)


def test_failed_gradient_keeps_pcd_chains_rng_and_out(rbm, data):
    est = ebm.Estimator(rbm, "pcd", chains=4, k=2)
    est.gradient(data, ebm.Generator(5))
    assert est.num_chains == 4
    chains, stats = est.chains, est.stats
    twin = pickle.loads(pickle.dumps(est))
    g = ebm.Generator(6)
    state = g.state
    out = np.full(rbm.param_count, 7.0, F32)
    bad = data.copy()
    bad[-1, 0] = 0.5
    with pytest.raises(ebm.EbmValueError) as exc:
        est.gradient(bad, g, out=out)
    assert exc.value.code == ebm.Status.EVALUE
    np.testing.assert_array_equal(est.chains, chains)
    after = est.stats
    assert after.keys() == stats.keys()
    for name, value in stats.items():   # NaN (a statistic this kind does not have) too
        assert after[name] == value or (np.isnan(after[name]) and np.isnan(value)), name
    np.testing.assert_array_equal(g.state, state)
    np.testing.assert_array_equal(out, 7.0)
    # ... so the next gradient is the one the failure did not precede
    np.testing.assert_array_equal(est.gradient(data, g), twin.gradient(data, ebm.Generator(6)))


def test_failed_calls_keep_the_generator(rbm, ref):
    g = ebm.Generator(9)
    g.uniform(3)
    state = g.state
    x = ref.random_states(rbm, 4, seed=1)
    x[2, 0] = 2.0
    with pytest.raises(ebm.EbmValueError):
        rbm.layer_sample(x, 1, g)
    with pytest.raises(ebm.EbmValueError):
        rbm.log_partition("ais", rng=g, chains=1, betas=10)
    with pytest.raises(ebm.EbmValueError):
        rbm.local_search(x, g)
    np.testing.assert_array_equal(g.state, state)
    twin = ebm.Generator(9)
    twin.uniform(3)
    np.testing.assert_array_equal(g.uniform(4), twin.uniform(4))


def test_failed_sampler_step_changes_nothing(rbm, ref):
    s = ebm.Sampler(rbm)
    x = ref.random_states(rbm, 5, seed=2)
    s.step(x, ebm.Generator(1))
    x[3, 5] = 0.5            # one invalid row among valid ones
    before = x.copy()
    g = ebm.Generator(2)
    state, it = g.state, s.stats["iteration"]
    with pytest.raises(ebm.EbmValueError):
        s.step(x, g)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(g.state, state)
    assert s.stats["iteration"] == it == 1
    y = ref.random_states(rbm, 5, seed=3)
    ybefore = y.copy()
    with pytest.raises(ebm.EbmValueError):
        s.coupled_step(x, y, g)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(y, ybefore)
    np.testing.assert_array_equal(g.state, state)


# ---------------------------------------------------------------------------
# Arrays


def _views(x):
    """Non-contiguous views of x (valid states of a binary model whatever
    the column order), by name. Rows 1 and 2 get patterns that a misread
    (reversed, or read with the wrong stride) cannot reproduce."""
    x = x.copy()
    n, w = x.shape
    x[1] = ([1, 1, 1, 0, 0, 1, 0] * w)[:w]
    x[2] = ([0, 1, 1, 1, 1, 0, 1] * w)[:w]
    big = np.zeros((n, 3 * w), F32)
    big[:, w:2 * w] = x
    wide = np.zeros((n, 2 * w), F32)
    wide[:, ::2] = x
    return {
        "reversed_columns": x[:, ::-1],
        "strided_rows": np.repeat(x, 2, axis=0)[::2],
        "reversed_rows": x[::-1],
        "fortran": np.asfortranarray(x),
        "window": big[:, w:2 * w],
        "strided_columns": wide[:, ::2],
        "one_row_reversed": x[1:2, ::-1],
        "one_row_strided": wide[2:3, ::2],
    }


VIEWS = list(_views(np.zeros((4, 4), F32)))


@pytest.mark.parametrize("view", VIEWS)
def test_noncontiguous_states_read_correctly(view, rbm, ref):
    """Every view gives what its contiguous copy gives (never misread)."""
    x = ref.random_states(rbm, 6, seed=7)
    v = _views(x)[view]
    c = np.ascontiguousarray(v)
    assert v.shape == c.shape and v.shape[1] == rbm.state_width
    np.testing.assert_array_equal(rbm.energy(v), rbm.energy(c))
    np.testing.assert_array_equal(rbm.free_energy(v, "odd"), rbm.free_energy(c, "odd"))
    np.testing.assert_array_equal(rbm.layer_input(v, 1), rbm.layer_input(c, 1))
    np.testing.assert_array_equal(rbm.layer_mean(v, 0), rbm.layer_mean(c, 0))
    hv = _views(ref.random_states(rbm, 6, seed=8))[view][:, :rbm.sizes[1]]
    np.testing.assert_array_equal(rbm.layer_logprob(v, 1, hv),
                                  rbm.layer_logprob(c, 1, np.ascontiguousarray(hv)))
    np.testing.assert_array_equal(rbm.energy_grad(v), rbm.energy_grad(c))
    np.testing.assert_array_equal(rbm.energy_grad_input(v, 0), rbm.energy_grad_input(c, 0))
    np.testing.assert_array_equal(rbm.layer_argmin(v, 1), rbm.layer_argmin(c, 1))
    np.testing.assert_array_equal(rbm.layer_sample(v, 1, ebm.Generator(4)),
                                  rbm.layer_sample(c, 1, ebm.Generator(4)))
    est = ebm.Estimator(rbm, "pcd")
    est.chains = v
    np.testing.assert_array_equal(est.chains, c)
    # visible rows
    vis = _views(x[:, :rbm.n_visible].copy())[view]
    visc = np.ascontiguousarray(vis)
    np.testing.assert_array_equal(rbm.log_likelihood(vis), rbm.log_likelihood(visc))
    np.testing.assert_array_equal(rbm.free_energy(vis), rbm.free_energy(visc))
    est = ebm.Estimator(rbm, "ucd")
    np.testing.assert_array_equal(est.gradient(vis, ebm.Generator(3)),
                                  est.gradient(visc, ebm.Generator(3)))


def test_noncontiguous_parameter_vectors(rbm):
    p = np.random.default_rng(0).normal(0, 0.2, rbm.param_count).astype(F32)
    wide = np.zeros(2 * rbm.param_count, F32)
    wide[::2] = p
    rbm.set_params(wide[::2])
    np.testing.assert_array_equal(rbm.params(), p)
    rbm.set_params(p[::-1][::-1])
    rbm.axpy_params(1.0, wide[::2])
    np.testing.assert_array_equal(rbm.params(), p + p)


def test_dtype_conversion(ref):
    m = ref.make_model("grbm", seed=2)
    x64 = ref.random_states(m, 5, seed=3).astype(np.float64)
    x64[:, :m.n_visible] = np.random.default_rng(0).normal(size=(5, m.n_visible))
    x = x64.astype(F32)                 # float64 values are rounded to float32
    assert not np.array_equal(x, x64)
    np.testing.assert_array_equal(m.energy(x64), m.energy(x))
    np.testing.assert_array_equal(m.layer_mean(x64, 1), m.layer_mean(x, 1))
    np.testing.assert_array_equal(m.log_likelihood(x64[:, :3]), m.log_likelihood(x[:, :3]))
    b = ref.make_model("rbm_binary", seed=2)
    xb = ref.random_states(b, 5, seed=3)
    for conv in (xb.astype(np.int64), xb.astype(np.uint8), xb.astype(bool),
                 xb.astype(np.float16), xb.astype(">f4"), xb.tolist()):
        np.testing.assert_array_equal(b.energy(conv), b.energy(xb))
    v = xb[:, :b.n_visible]
    np.testing.assert_array_equal(b.log_likelihood(v.astype(int)), b.log_likelihood(v))
    p = b.params()
    b.set_params(p.astype(np.float64))
    np.testing.assert_array_equal(b.params(), p)
    e = ebm.Estimator(b, "cd")
    np.testing.assert_array_equal(e.gradient(v.astype(np.int32), ebm.Generator(1)),
                                  e.gradient(v, ebm.Generator(1)))


def test_dtype_refused(rbm, ref, data):
    x = ref.random_states(rbm, 3, seed=1)
    for bad in (x.astype(complex), x.astype(object), x.astype(str)):
        with pytest.raises(TypeError):
            rbm.energy(bad)
        with pytest.raises(TypeError):
            rbm.layer_mean(bad, 1)
    with pytest.raises(TypeError):
        rbm.set_params(rbm.params().astype(complex))
    with pytest.raises(TypeError):
        ebm.Estimator(rbm, "cd").gradient(data.astype(complex), 1)
    with pytest.raises(TypeError):
        rbm.log_likelihood(data.astype(object))


def test_one_dimensional_refused(rbm, ref, data):
    x = ref.random_states(rbm, 3, seed=1)
    with pytest.raises(ValueError):
        rbm.energy(x[0])
    with pytest.raises(ValueError):
        rbm.layer_mean(x[0], 1)
    with pytest.raises(ValueError):
        rbm.free_energy(data[0])
    with pytest.raises(ValueError):
        rbm.log_likelihood(data[0])
    with pytest.raises(ValueError):
        ebm.Estimator(rbm, "cd").gradient(data[0], 1)
    with pytest.raises(ValueError):
        rbm.energy(x[:, :5])  # neither full states nor visible rows


def test_sampler_step_refuses_what_it_cannot_move(rbm, ref):
    s = ebm.Sampler(rbm)
    x = ref.random_states(rbm, 4, seed=1)
    with pytest.raises(TypeError):
        s.step(x.astype(np.float64), 1)
    with pytest.raises(TypeError):
        s.step(x.tolist(), 1)
    ro = x.copy()
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        s.step(ro, 1)
    with pytest.raises(ValueError):
        s.step(x[:, :3], 1)
    np.testing.assert_array_equal(x, ref.random_states(rbm, 4, seed=1))


BAD_CHAINS = ["reversed_columns", "fortran", "strided_columns", "one_row_reversed",
              "one_row_strided"]


@pytest.mark.parametrize("view", BAD_CHAINS)
def test_sampler_step_refuses_noncontiguous_rows(view, rbm, ref):
    """Chains whose rows are not dense cannot be moved in place: ValueError,
    and no element of the underlying buffer changes."""
    s = ebm.Sampler(rbm)
    x = ref.random_states(rbm, 4, seed=1)
    v = _views(x)[view]
    base = v.base if v.base is not None else v
    keep = base.copy()
    with pytest.raises(ValueError):
        s.step(v, 1)
    np.testing.assert_array_equal(base, keep)


def test_sampler_step_moves_in_place(rbm, ref):
    s = ebm.Sampler(rbm)
    x = ref.random_states(rbm, 8, seed=2)
    x0 = x.copy()
    out = s.step(x, ebm.Generator(5))
    assert out is x
    assert not np.array_equal(x, x0)
    y = x0.copy()
    s.step(y, ebm.Generator(5))
    np.testing.assert_array_equal(x, y)
    # rows at a stride (a view of every other row) move in place, the others stay
    big = np.repeat(x0, 2, axis=0)
    s.step(big[::2], ebm.Generator(5))
    np.testing.assert_array_equal(big[::2], y)
    np.testing.assert_array_equal(big[1::2], x0)


def test_model_methods_do_not_modify_inputs(ref):
    for spec in ("rbm_binary", "grbm", "dbm_binary"):
        m = ref.make_model(spec, seed=1)
        x = ref.random_states(m, 5, seed=2)
        v = x[:, :m.n_visible].copy()
        hl = ref.random_states(m, 5, seed=3)[:, m.offsets[1]:m.offsets[1] + m.sizes[1]].copy()
        p, g, coef = m.params(), np.ones(m.param_count, F32) * 1e-3, np.ones(5)
        args = [x, v, hl, p, g, coef]
        keep = [a.copy() for a in args]
        r = ebm.Generator(1)
        m.energy(x)
        m.free_energy(x, "odd")
        m.energy_grad(x, coef=coef)
        m.energy_grad(x, sum_out="even")
        m.energy_grad_input(x, 1)
        m.layer_input(x, 1)
        m.layer_mean(x, 0)
        m.layer_logprob(x, 1, hl)
        m.layer_argmin(x, 1)
        m.layer_sample(x, 1, r)
        m.random_state(r, x=x, clamp=np.arange(m.state_width) < m.n_visible)
        if m.units[0] != ebm.Units.GAUSSIAN:
            m.local_search(x, r)
        m.mean_field(x, clamp=np.arange(m.state_width) < m.n_visible)
        m.log_likelihood(v)
        m.set_params(p)
        m.axpy_params(1.0, g)
        est = ebm.Estimator(m, "cd")
        est.gradient(v, r)
        est = ebm.Estimator(m, "pcd")
        est.chains = x
        for a, k in zip(args, keep):
            np.testing.assert_array_equal(a, k)


# ---------------------------------------------------------------------------
# Lifetimes


def test_objects_outlive_the_model_variable(ref):
    m = ref.make_model("rbm_binary", seed=1)
    s = ebm.Sampler(m)
    e = ebm.Estimator(m, "pcd", chains=3)
    x = ref.random_states(m, 4, seed=1)
    v = x[:, :m.n_visible].copy()
    del m
    gc.collect()
    s.step(x, ebm.Generator(1))
    g = e.gradient(v, ebm.Generator(2))
    assert np.all(np.isfinite(g)) and e.num_chains == 3
    assert not s.model.closed and s.model is e.model


def test_close_twice_and_use_after_close(ref):
    m = ref.make_model("rbm_binary", seed=1)
    x = ref.random_states(m, 2, seed=1)
    g = ebm.Generator(1)
    s = ebm.Sampler(m)
    e = ebm.Estimator(m, "cd")
    for obj in (s, e, g):
        obj.close()
        obj.close()
        assert obj.closed
    with pytest.raises(ValueError):
        g.uniform(2)
    with pytest.raises(ValueError):
        g.state
    with pytest.raises(ValueError):
        s.step(x, 1)
    with pytest.raises(ValueError):
        e.gradient(x[:, :m.n_visible], 1)
    with pytest.raises(ValueError):
        ebm.Sampler(m).step(x, g)  # a closed generator
    m.close()
    m.close()
    assert m.closed
    for call in (lambda: m.energy(x), lambda: m.params(), lambda: m.to_bytes(),
                 lambda: ebm.Sampler(m), lambda: ebm.Estimator(m), lambda: pickle.dumps(m)):
        with pytest.raises(ValueError):
            call()
    assert "closed" in repr(m) and "closed" in repr(s) and "closed" in repr(g)


def test_context_managers(ref):
    with ebm.Generator(1) as g:
        g.uniform(1)
    assert g.closed
    with ref.make_model("rbm_binary", seed=1) as m:
        with ebm.Sampler(m) as s, ebm.Estimator(m) as e:
            pass
        assert s.closed and e.closed and not m.closed
    assert m.closed


def test_closing_the_model_of_a_live_sampler_is_safe():
    """A Sampler or Estimator whose model was closed explicitly must refuse
    to run (ValueError), not use the freed C model. In a subprocess: the
    failure mode is a crash."""
    code = textwrap.dedent("""
        import numpy as np, ebm
        m = ebm.RBM(4, 3)
        m.init(ebm.Generator(1))
        s, e = ebm.Sampler(m), ebm.Estimator(m, "cd")
        m.close()
        x = np.zeros((3, 7), np.float32)
        for call in (lambda: s.step(x, 1), lambda: e.gradient(x[:, :4], 1)):
            try:
                call()
                print("ran")
            except ValueError:
                print("ValueError")
    """)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=dict(os.environ),
                          timeout=60)
    assert proc.returncode == 0, "exit status %d (%s)" % (proc.returncode, proc.stderr[-500:])
    assert proc.stdout.split() == ["ValueError", "ValueError"]


def test_generator_seed_checks():
    for bad in (-1, 2 ** 64):
        with pytest.raises(ValueError):
            ebm.Generator(bad)
        with pytest.raises(ValueError):
            ebm.Generator(0, bad)
    with pytest.raises(TypeError):
        ebm.Generator(1.5)
    ebm.Generator(2 ** 64 - 1, 2 ** 64 - 1).uniform(1)
    with pytest.raises(ValueError):
        ebm.Generator(1).derive(-1)


# ---------------------------------------------------------------------------
# Pickling


def test_pickle_model(ref):
    for spec in ("rbm_spin", "grbm", "dbm_binary"):
        m = ref.make_model(spec, seed=2)
        m2 = pickle.loads(pickle.dumps(m))
        assert m2 is not m and m2._p != m._p
        assert (m2.sizes, m2.units) == (m.sizes, m.units)
        np.testing.assert_array_equal(m2.params(), m.params())
        x = ref.random_states(m, 5, seed=1)
        np.testing.assert_array_equal(m2.energy(x), m.energy(x))
        np.testing.assert_array_equal(m2.copy().params(), m.params())


def test_pickle_generator():
    g = ebm.Generator(3, 4)
    g.uniform(5)
    g.normal(1)  # leaves a spare normal in the state
    g2 = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(g2.normal(3), g.normal(3))
    np.testing.assert_array_equal(g2.uniform(7), g.uniform(7))


def test_pickle_estimator_keeps_chains(rbm, data):
    e = ebm.Estimator(rbm, "pcd", chains=5, k=3)
    e.gradient(data, ebm.Generator(1))
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.kind == ebm.EstimatorKind.PCD and e2.num_chains == 5
    np.testing.assert_array_equal(e2.chains, e.chains)
    np.testing.assert_array_equal(e2.model.params(), rbm.params())
    g1, g2 = ebm.Generator(2), ebm.Generator(2)
    np.testing.assert_array_equal(e2.gradient(data, g2), e.gradient(data, g1))
    np.testing.assert_array_equal(e2.chains, e.chains)
    # a different k would give a different gradient: the option was kept
    e3 = ebm.Estimator(rbm, "pcd", chains=5, k=1)
    e3.chains = e2.chains
    assert not np.array_equal(e3.gradient(data, ebm.Generator(3)),
                              e2.gradient(data, ebm.Generator(3)))


def test_pickle_sampler(rbm, ref):
    s = ebm.Sampler(rbm, "mh_uniform", clamp_layers=1, adjust_after=2)
    x = ref.random_states(rbm, 6, seed=2)
    s.step(x, ebm.Generator(1))
    s.step(x, ebm.Generator(2))
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.kind == s.kind and s2.stats["iteration"] == 2
    y = x.copy()
    s.step(x, ebm.Generator(3))
    s2.step(y, ebm.Generator(3))
    np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(x[:, :rbm.n_visible], ref.random_states(rbm, 6, seed=2)
                                  [:, :rbm.n_visible])  # clamp kept


# ---------------------------------------------------------------------------
# Generator


def test_generator_streams():
    a, b = ebm.Generator(11), ebm.Generator(11)
    u = a.uniform(16)
    assert u.dtype == np.float32 and np.all((u >= 0) & (u < 1))
    np.testing.assert_array_equal(u, b.uniform(16))
    np.testing.assert_array_equal(a.normal(9), b.normal(9))
    assert not np.array_equal(ebm.Generator(12).uniform(16), u)
    assert not np.array_equal(ebm.Generator(11, 1).uniform(16), u)
    # fills continue one stream
    c = ebm.Generator(11)
    np.testing.assert_array_equal(np.concatenate([c.uniform(3), c.uniform(13)]), u)


def test_generator_derive():
    p = ebm.Generator(5)
    p.uniform(2)
    state = p.state
    c1 = p.derive(0)
    np.testing.assert_array_equal(p.state, state)       # the parent did not move
    c1b, c2 = p.derive(0), p.derive(1)
    d1 = c1.uniform(8)
    np.testing.assert_array_equal(c1b.uniform(8), d1)
    assert not np.array_equal(c2.uniform(8), d1)
    assert not np.array_equal(p.uniform(8), d1)
    c1.close()
    p.uniform(1)
    assert not np.array_equal(p.derive(0).uniform(8), d1)  # depends on the position


def test_generator_state_restores_draws():
    g = ebm.Generator(8)
    g.normal(1)  # a spare normal is part of the state
    s = g.state
    assert s.dtype == np.uint64 and s.shape == (ebm.RNG_STATE_WORDS,)
    n1, u1 = g.normal(5), g.uniform(5)
    g.state = s
    np.testing.assert_array_equal(g.normal(5), n1)
    np.testing.assert_array_equal(g.uniform(5), u1)
    h = ebm.Generator(0)
    bad = s.copy()
    bad[-1] ^= np.uint64(1)
    with pytest.raises(ebm.EbmValueError) as exc:
        h.state = bad
    assert exc.value.code == ebm.Status.EVALUE
    assert exc.value.message == ebm.lib.ebm_rng_errmsg(h._p).decode()
    with pytest.raises(ValueError):
        h.state = s[:3]


def test_generator_state_from_python_ints():
    """A state saved as Python ints (state.tolist(), e.g. in a JSON
    checkpoint) restores the generator: words of 2^63 and above included."""
    g = ebm.Generator(8)
    g.normal(1)
    s = g.state
    assert max(s) >= 2 ** 63   # the format tag's word, at least in this state
    words = s.tolist()
    n1 = g.normal(5)
    h = ebm.Generator(0)
    h.state = words
    np.testing.assert_array_equal(h.normal(5), n1)


def test_row_offsets_split_a_batch(rbm, data):
    """row_offset and chain_offset (docs/distributed.md): slices of a batch,
    each with its first row as offset and the same generator state, make the
    whole batch's sampling decisions and, weighted by their rows, its
    gradient; numbered from 0 instead, they do not. The slices' GEMMs have
    other shapes than the whole batch's, whose last bits the library does not
    promise (docs/conventions.md, "Same bits"): a last-bit difference changes
    a decision only where its uniform falls within rounding of the
    probability, about 2^-24 each, so these few hundred decisions agree
    except with probability below 1e-4; the gradients are compared within
    float rounding."""
    n = len(data)
    for kind in ("ucd", "pcd"):
        full, g0 = ebm.Estimator(rbm, kind), ebm.Generator(8)
        g_full = full.gradient(data, g0)
        taus = full.stats["tau_mean"] * n
        for offsets in (True, False):
            total, tau_sum = np.zeros(g_full.shape), 0.0
            for lo, hi in ((0, 2), (2, 6)):
                first = lo if offsets else 0
                est = ebm.Estimator(rbm, kind, row_offset=first, chain_offset=first)
                g = ebm.Generator(8)
                total += (hi - lo) * est.gradient(data[lo:hi], g).astype(np.float64)
                tau_sum += est.stats["tau_mean"] * (hi - lo)
                np.testing.assert_array_equal(g.state, g0.state)
            same = (np.allclose(total / n, g_full, rtol=0, atol=2e-5) and
                    round(tau_sum) == round(taus))
            assert same == offsets, (kind, offsets)
