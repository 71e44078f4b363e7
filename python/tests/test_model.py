"""Model computations against float64 numpy references (conftest.Ref) on
tiny models of every unit kind: enumeration where the library sums out
analytically, closed forms where it integrates a Gaussian layer."""
import itertools

import numpy as np
import pytest

import ebm

ALL = ["rbm_binary", "rbm_spin", "rbm_spin_vis_binary_hid", "grbm", "grbm_spin",
       "dbm_binary", "dbm_spin", "gdbm", "dbm4"]

# The library forms energies in double from float parameters; sums of float
# products (layer inputs, GEMMs) are float.
RTOL, ATOL = 2e-5, 2e-5


def non_adjacent_sets(n_layers):
    out = []
    for k in range(n_layers + 1):
        for s in itertools.combinations(range(n_layers), k):
            if all(b - a > 1 for a, b in zip(s, s[1:])):
                out.append(s)
    return out


@pytest.fixture(params=ALL)
def model(request, ref):
    return ref.make_model(request.param, seed=ALL.index(request.param))


# ---------------------------------------------------------------------------
# Parameters


def test_param_layout(model):
    """[W_1 .. W_L | b_0 .. b_L | logvar_0]: consecutive blocks covering the
    vector, and weight()/bias()/logvar() read those blocks."""
    p = model.params()
    assert p.dtype == np.float32 and p.shape == (model.param_count,)
    L = model.n_layers - 1
    blocks = [("weight", l) for l in range(1, L + 1)] + [("bias", l) for l in range(L + 1)]
    if model.units[0] == ebm.Units.GAUSSIAN:
        blocks.append(("logvar", 0))
    pos = 0
    for kind, l in blocks:
        off, rows, cols = model.param_block(kind, l)
        assert off == pos, (kind, l)
        if kind == "weight":
            assert (rows, cols) == (model.sizes[l - 1], model.sizes[l])
            np.testing.assert_array_equal(model.weight(l),
                                          p[off:off + rows * cols].reshape(rows, cols))
        elif kind == "bias":
            assert (rows, cols) == (1, model.sizes[l])
            np.testing.assert_array_equal(model.bias(l), p[off:off + cols])
            assert np.all(model.bias(l) != 0)  # make_model set random biases
        else:
            assert (rows, cols) == (1, model.sizes[0])
            np.testing.assert_array_equal(model.logvar(), p[off:off + cols])
        pos += rows * cols
    assert pos == model.param_count
    if model.units[0] != ebm.Units.GAUSSIAN:
        with pytest.raises(ebm.EbmError) as e:
            model.logvar()
        assert e.value.code == ebm.Status.EUNSUPPORTED


def test_set_params_and_axpy(model):
    rs = np.random.default_rng(3)
    p = rs.normal(0, 0.3, model.param_count).astype(np.float32)
    model.set_params(p)
    np.testing.assert_array_equal(model.params(), p)
    g = rs.normal(0, 1, model.param_count).astype(np.float32)
    model.axpy_params(0.25, g)
    np.testing.assert_allclose(model.params(), p + np.float32(0.25) * g, rtol=1e-6, atol=1e-7)


def test_init_is_deterministic_and_uses_the_scale(ref):
    a, b = ebm.RBM(6, 4), ebm.RBM(6, 4)
    a.init(ebm.Generator(7), scale=0.5)
    b.init(ebm.Generator(7), scale=0.5)
    np.testing.assert_array_equal(a.params(), b.params())
    # orthogonal: W^T W = scale^2 I (n_0 >= n_1: orthonormal columns)
    W = a.weight(1).astype(np.float64)
    np.testing.assert_allclose(W.T @ W, 0.25 * np.eye(4), atol=1e-5)
    b.init(ebm.Generator(8), scale=0.5)
    assert not np.array_equal(a.params(), b.params())


# ---------------------------------------------------------------------------
# Energies and free energies


def test_energy(model, ref):
    r = ref.Ref(model)
    x = ref.random_states(model, 16, seed=1)
    e = model.energy(x)
    assert e.dtype == np.float64 and e.shape == (16,)
    np.testing.assert_allclose(e, r.energy(x), rtol=RTOL, atol=ATOL)


def test_energy_formula_by_hand(ref):
    """The reference itself, on a hand-checked 2-2 binary RBM."""
    m = ebm.RBM(2, 2)
    p = np.zeros(m.param_count, np.float32)
    p[:4] = [1, 2, 3, 4]          # W_1 = [[1, 2], [3, 4]]
    p[4:6] = [0.5, -0.5]          # b_0
    p[6:8] = [0.25, 1.0]          # b_1
    m.set_params(p)
    x = np.array([[1, 1, 1, 0], [0, 1, 0, 1], [1, 0, 1, 1]], np.float32)
    # -(b0.v + b1.h + v^T W h)
    want = [-(0 + 0.25 + 1 + 3), -(-0.5 + 1 + 4), -(0.5 + 1.25 + 1 + 2)]
    np.testing.assert_allclose(m.energy(x), want)
    np.testing.assert_allclose(ref.Ref(m).energy(x), want)


def test_grbm_energy_formula_by_hand():
    m = ebm.GRBM(1, 1)
    off_w = m.param_block("weight", 1)[0]
    off_mu = m.param_block("bias", 0)[0]
    off_b = m.param_block("bias", 1)[0]
    off_s = m.param_block("logvar", 0)[0]
    p = np.zeros(m.param_count, np.float32)
    p[[off_w, off_mu, off_b, off_s]] = [0.5, 1.0, -0.25, np.log(4.0)]
    m.set_params(p)
    v, h = 2.0, 1.0
    # 0.5 ((v - mu)/sigma)^2 - (v / sigma^2) W h - b h
    want = 0.5 * (v - 1.0) ** 2 / 4 - v / 4 * 0.5 * h + 0.25 * h
    np.testing.assert_allclose(m.energy(np.array([[v, h]], np.float32)), [want], rtol=1e-6)


def test_free_energy_all_sum_out_sets(model, ref):
    r = ref.Ref(model)
    x = ref.random_states(model, 8, seed=2)
    for S in non_adjacent_sets(model.n_layers):
        f = model.free_energy(x, sum_out=list(S))
        np.testing.assert_allclose(f, r.free_energy(x, S), rtol=RTOL, atol=ATOL,
                                   err_msg="sum_out=%s" % (S,))
        # the values of the summed-out layers are ignored
        y = x.copy()
        for l in S:
            y[:, model.offsets[l]:model.offsets[l] + model.sizes[l]] = \
                ref.random_states(model, 8, seed=99)[:, model.offsets[l]:
                                                     model.offsets[l] + model.sizes[l]]
        np.testing.assert_array_equal(model.free_energy(y, sum_out=list(S)), f)
    np.testing.assert_array_equal(model.free_energy(x, sum_out=[]), model.energy(x))


def test_free_energy_odd_even(model, ref):
    r = ref.Ref(model)
    x = ref.random_states(model, 8, seed=3)
    odd = range(1, model.n_layers, 2)
    even = range(0, model.n_layers, 2)
    np.testing.assert_allclose(model.free_energy(x, "odd"), r.free_energy(x, odd),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.free_energy(x, "even"), r.free_energy(x, even),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(model.free_energy(x, "odd"), model.free_energy(x, list(odd)))


def test_free_energy_sums_to_partition(model, ref):
    """sum over the kept layers of exp(-F_S) = Z, for S = odd (enumerate the
    even layers; a Gaussian layer 0 needs S = even instead)."""
    r = ref.Ref(model)
    S = "even" if model.units[0] == ebm.Units.GAUSSIAN else "odd"
    kept = [l for l in range(model.n_layers) if l % 2 == (1 if S == "even" else 0)]
    xs = r._all_states(kept).astype(np.float32)
    f = model.free_energy(xs, S)
    np.testing.assert_allclose(ref.logsumexp(-f), r.log_partition(), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("spec", ["rbm_binary", "rbm_spin", "grbm", "grbm_spin"])
def test_free_energy_of_visible_rows(spec, ref):
    """An RBM's free_energy(v) on n_visible columns sums out layer 1."""
    m = ref.make_model(spec, seed=5)
    r = ref.Ref(m)
    x = ref.random_states(m, 10, seed=4)
    v = x[:, :m.n_visible].copy()
    f = m.free_energy(v)
    np.testing.assert_array_equal(f, m.free_energy(x, sum_out=[1]))
    np.testing.assert_allclose(f, r.free_energy(x, [1]), rtol=RTOL, atol=ATOL)


def test_gaussian_closed_form_by_quadrature(ref):
    """The reference's Gaussian integral against numerical quadrature, on a
    1-visible GRBM: -log int exp(-E(v, h)) dv."""
    m = ref.make_model(([1, 2], "gaussian", "binary"), seed=4)
    r = ref.Ref(m)
    sd = np.sqrt(r.var()[0])
    grid = np.linspace(-14 * sd, 14 * sd, 40001) + r.b(0)[0]
    for h in ([0, 0], [1, 0], [1, 1]):
        x = np.zeros((grid.size, 3))
        x[:, 0] = grid
        x[:, 1:] = h
        numeric = -np.log(np.trapz(np.exp(-r.energy(x)), grid))
        closed = r.free_energy(np.array([[0.0] + h]), [0])[0]
        np.testing.assert_allclose(closed, numeric, rtol=1e-7)
        np.testing.assert_allclose(m.free_energy(np.array([[0.0] + h], np.float32), [0])[0],
                                   numeric, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------
# Exact partition function and likelihood


@pytest.mark.parametrize("spec", ALL)
def test_log_partition_exact(spec, ref):
    m = ref.make_model(spec, seed=11)
    np.testing.assert_allclose(m.log_partition("exact"), ref.Ref(m).log_partition(),
                               rtol=1e-6, atol=1e-5)
    assert m.log_partition() == m.log_partition("exact")


@pytest.mark.parametrize("spec", ["rbm_binary", "rbm_spin", "rbm_spin_vis_binary_hid",
                                  "dbm_binary", "dbm_spin", "dbm4"])
def test_log_likelihood_discrete(spec, ref):
    """Against enumeration, and exp(ll) over every visible vector sums to 1."""
    m = ref.make_model(spec, seed=12)
    r = ref.Ref(m)
    v = ref.configurations(m.units[0], m.n_visible).astype(np.float32)
    ll = m.log_likelihood(v)
    assert ll.shape == (len(v),) and np.all(ll < 0)
    np.testing.assert_allclose(ll, r.log_likelihood(v), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.exp(ll).sum(), 1.0, rtol=1e-6)
    # with log Z given, and from full states (only layer 0 is read)
    log_z = m.log_partition()
    np.testing.assert_array_equal(m.log_likelihood(v, log_z=log_z), ll)
    np.testing.assert_allclose(m.log_likelihood(v, log_z=log_z + 1), ll - 1, atol=1e-12)
    full = ref.random_states(m, len(v), seed=1)
    full[:, :m.n_visible] = v
    np.testing.assert_array_equal(m.log_likelihood(full), ll)


@pytest.mark.parametrize("spec", ["grbm", "grbm_spin", "gdbm"])
def test_log_likelihood_gaussian(spec, ref):
    m = ref.make_model(spec, seed=13)
    r = ref.Ref(m)
    v = ref.random_states(m, 12, seed=5)[:, :m.n_visible]
    np.testing.assert_allclose(m.log_likelihood(v), r.log_likelihood(v), rtol=1e-5, atol=1e-5)


def test_log_likelihood_gaussian_density_integrates_to_one(ref):
    m = ref.make_model(([1, 3], "gaussian", "binary"), seed=6)
    grid = np.linspace(-25, 25, 20001, dtype=np.float64)
    ll = m.log_likelihood(grid.astype(np.float32)[:, None])
    np.testing.assert_allclose(np.trapz(np.exp(ll), grid), 1.0, rtol=1e-4)


# ---------------------------------------------------------------------------
# Conditionals


def test_layer_input_and_mean(model, ref):
    r = ref.Ref(model)
    x = ref.random_states(model, 10, seed=6)
    for l in range(model.n_layers):
        a = model.layer_input(x, l)
        assert a.dtype == np.float32 and a.shape == (10, model.sizes[l])
        np.testing.assert_allclose(a, r.layer_input(x, l), rtol=1e-5, atol=1e-5)
        mean = model.layer_mean(x, l)
        a64 = a.astype(np.float64)
        u = model.units[l]
        want = (1 / (1 + np.exp(-a64)) if u == ebm.Units.BINARY else
                np.tanh(a64) if u == ebm.Units.SPIN else a64)
        np.testing.assert_allclose(mean, want, rtol=1e-5, atol=1e-6)
        # the layer's own values are ignored
        y = x.copy()
        o, k = model.offsets[l], model.sizes[l]
        y[:, o:o + k] = ref.random_states(model, 10, seed=7)[:, o:o + k]
        np.testing.assert_array_equal(model.layer_input(y, l), a)


def test_layer_logprob(model, ref):
    """log p(x_l | rest) against the reference, and summing to 1 over all
    configurations of a binary/spin layer."""
    r = ref.Ref(model)
    x = ref.random_states(model, 6, seed=8)
    for l in range(model.n_layers):
        o, k = model.offsets[l], model.sizes[l]
        xl = ref.random_states(model, 6, seed=9)[:, o:o + k]
        lp = model.layer_logprob(x, l, xl)
        assert lp.dtype == np.float64 and lp.shape == (6,)
        np.testing.assert_allclose(lp, r.layer_logprob(x, l, xl), rtol=1e-5, atol=1e-5)
        if model.units[l] == ebm.Units.GAUSSIAN:
            continue
        configs = ref.configurations(model.units[l], k).astype(np.float32)
        for row in range(3):
            xr = np.repeat(x[row:row + 1], len(configs), axis=0)
            lp = model.layer_logprob(xr, l, configs)
            np.testing.assert_allclose(ref.logsumexp(lp), 0.0, atol=1e-6)


def test_layer_argmin(model, ref):
    r = ref.Ref(model)
    x = ref.random_states(model, 10, seed=10)
    for l in range(model.n_layers):
        y = model.layer_argmin(x, l)
        o, k = model.offsets[l], model.sizes[l]
        a = r.layer_input(x, l)
        u = model.units[l]
        want = (np.where(a >= 0, 1.0, 0.0) if u == ebm.Units.BINARY else
                np.where(a >= 0, 1.0, -1.0) if u == ebm.Units.SPIN else a)
        np.testing.assert_allclose(y[:, o:o + k], want, rtol=1e-5, atol=1e-5)
        rest = np.ones(model.state_width, bool)
        rest[o:o + k] = False
        np.testing.assert_array_equal(y[:, rest], x[:, rest])


# ---------------------------------------------------------------------------
# Gradients


def test_energy_grad_analytic(model, ref):
    """sum_out = None: dE/dtheta against the analytic formula, with the
    default coefficients (1/n) and with signed ones; out accumulates."""
    r = ref.Ref(model)
    x = ref.random_states(model, 7, seed=11)
    g = model.energy_grad(x)
    assert g.dtype == np.float32 and g.shape == (model.param_count,)
    np.testing.assert_allclose(g, r.energy_grad(x, np.full(7, 1 / 7)), rtol=1e-4, atol=1e-5)
    coef = np.random.default_rng(0).normal(size=7)
    g = model.energy_grad(x, coef=coef)
    np.testing.assert_allclose(g, r.energy_grad(x, coef), rtol=1e-4, atol=1e-5)
    out = np.ones(model.param_count, np.float32)
    res = model.energy_grad(x, coef=coef, out=out)
    assert res is out
    np.testing.assert_allclose(out, 1 + r.energy_grad(x, coef), rtol=1e-4, atol=1e-5)


def test_energy_grad_analytic_matches_finite_differences(model, ref):
    """The analytic reference itself against central differences of E."""
    r = ref.Ref(model)
    x = ref.random_states(model, 3, seed=12)
    coef = np.array([0.5, -1.0, 2.0])
    analytic = r.energy_grad(x, coef)
    h = 1e-6
    fd = np.empty_like(analytic)
    for i in range(len(r.p)):
        d = np.zeros_like(r.p)
        d[i] = h
        fd[i] = coef @ (r.with_params(r.p + d).energy(x) - r.with_params(r.p - d).energy(x)) / (2 * h)
    np.testing.assert_allclose(analytic, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("spec", ["rbm_binary", "rbm_spin", "grbm", "dbm_binary", "gdbm"])
def test_free_energy_grad_finite_differences(spec, ref):
    """dF_S/dtheta for sum-out sets against central differences of the
    enumerated reference free energy."""
    m = ref.make_model(spec, seed=14)
    r = ref.Ref(m)
    x = ref.random_states(m, 4, seed=13)
    coef = np.array([1.0, -0.5, 0.25, 2.0])
    for S in ["odd", "even"]:
        layers = list(range(1 if S == "odd" else 0, m.n_layers, 2))
        g = m.energy_grad(x, coef=coef, sum_out=S)
        h = 1e-6
        fd = np.empty(m.param_count)
        for i in range(m.param_count):
            d = np.zeros(m.param_count)
            d[i] = h
            fd[i] = coef @ (r.with_params(r.p + d).free_energy(x, layers) -
                            r.with_params(r.p - d).free_energy(x, layers)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-4, atol=2e-5, err_msg=S)


def test_energy_grad_input(model, ref):
    """sum_out = None: dE/dx_l = -(layer input) for binary/spin layers;
    (v - mu)/sigma^2 - W_1 x_1 / sigma^2 for a Gaussian layer 0."""
    r = ref.Ref(model)
    x = ref.random_states(model, 5, seed=14)
    for l in range(model.n_layers):
        d = model.energy_grad_input(x, l)
        if model.units[l] == ebm.Units.GAUSSIAN:
            v = x[:, :model.n_visible].astype(np.float64)
            want = (v - r.layer_input(x, 0)) / r.var()
        else:
            want = -r.layer_input(x, l)
        np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Annealed importance sampling


def test_ais_close_to_exact(ref):
    """log_partition("ais") within 4 standard errors (+ 0.01 for the bias of
    a log of a mean) of the exact value. If the estimate were normal with
    the reported standard error, a correct library would fail this with
    probability about 6e-5 for a random seed (over 20 seeds the z-scores
    ranged from -1.9 to 2.4); the seed is fixed, so the test is
    deterministic."""
    m = ref.make_model(([6, 5], "binary", "binary"), seed=21, scale=2.0)
    exact = m.log_partition("exact")
    g = ebm.Generator(2024)
    state = g.state
    est, se = m.log_partition("ais", rng=g, chains=200, betas=1000, return_std=True)
    assert 0 < se < 0.02
    assert abs(est - exact) <= 4 * se + 0.01, (est, se, exact)
    assert not np.array_equal(g.state, state)  # the generator moved
    g.state = state
    assert m.log_partition("ais", rng=g, chains=200, betas=1000, return_std=True) == (est, se)
    # AIS with a single temperature is worse, not a copy of the exact value
    crude = m.log_partition("ais", rng=ebm.Generator(1), chains=64, betas=1)
    assert crude != est
    # log Z_0 of the uniform start is far off: the test is not vacuous
    assert abs(exact - 11 * np.log(2)) > 1
    with pytest.raises(ValueError):
        m.log_partition("ais")  # no rng


def test_log_likelihood_is_approaches_exact(ref):
    """ebm_model_log_likelihood_is on an enumerable DBM: below log p(v) on
    average, within 0.01 nats of it with 4096 samples, above the mean-field
    bound; an RBM's is exact."""
    dbm = ref.make_model("dbm_binary", seed=5)
    v = ref.random_states(dbm, 8, seed=6)[:, :dbm.n_visible].copy()
    exact = dbm.log_likelihood(v)
    est = np.mean([dbm.log_likelihood_is(v, ebm.Generator(s), samples=4096) for s in range(4)],
                  axis=0)
    assert np.all(np.abs(est - exact) < 0.01)
    assert est.mean() >= dbm.log_likelihood_bound(v).mean()
    rbm = ref.make_model("rbm_binary", seed=3)
    w = ref.random_states(rbm, 4, seed=4)[:, :rbm.n_visible].copy()
    np.testing.assert_allclose(rbm.log_likelihood_is(w, ebm.Generator(1), samples=3),
                               rbm.log_likelihood(w), rtol=0, atol=1e-9)
