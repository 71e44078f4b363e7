"""dReLU hidden units from Python: creation and refusals, the shape block
(its layout and its rows, pinned by the energy), exact log-likelihoods that
sum to one and a log Z checked by quadrature, Gibbs draws against the exact
law, a short PCD training that raises the likelihood, the estimators and
calls the library refuses, pickling, and Potts visible units. The exact
proofs are in C (the dReLU tests against quadrature references)."""
import itertools
import pickle

import numpy as np
import pytest

import ebm

TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz  # numpy 2 renamed it


def set_shape(m, log_gamma_plus, log_gamma_minus, delta):
    """Write the shape block (rows log gamma+, log gamma-, delta) through the
    flat parameter vector."""
    p = m.params()
    off, rows, cols = m.param_block("shape", 1)
    p[off:off + rows * cols] = np.concatenate([log_gamma_plus, log_gamma_minus, delta])
    m.set_params(p)


def tiny(seed=1, sizes=(4, 2), visible="binary", scale=1.0):
    """A dReLU RBM with orthogonal weights, random biases and a random shape block
    (gammas from exp(-0.5) to exp(0.5), delta from -0.5 to 1)."""
    m = ebm.Model(list(sizes), visible, "drelu")
    m.init(ebm.Generator(seed), scale=scale)
    rs = np.random.default_rng(100 + seed)
    p = m.params()
    for l in range(2):
        off, _, cols = m.param_block("bias", l)
        p[off:off + cols] = rs.normal(0, 0.5, cols)
    m.set_params(p)
    n1 = m.sizes[1]
    set_shape(m, rs.uniform(-0.5, 0.5, n1), rs.uniform(-0.5, 0.5, n1), rs.uniform(-0.5, 1, n1))
    return m


def visible_states(m):
    """Every visible state of a binary or spin layer, (2^n0, n0) float32."""
    vals = (0.0, 1.0) if m.units[0] == ebm.Units.BINARY else (-1.0, 1.0)
    return np.array(list(itertools.product(vals, repeat=m.n_visible)), np.float32)


def drelu_energy(m, x):
    """E(v, h) = -b_0.v - b_1.h - v^T W h + sum_j S_j(h_j) in float64, with
    S(h) = gamma+ (h+)^2 / 2 + gamma- (h-)^2 / 2 - delta |h| from shape()."""
    x = np.asarray(x, np.float64)
    v, h = x[:, :m.n_visible], x[:, m.n_visible:]
    W, b0, b1 = (a.astype(np.float64) for a in (m.weight(1), m.bias(0), m.bias(1)))
    lgp, lgm, delta = m.shape_params().astype(np.float64)
    hp, hm = np.maximum(h, 0), np.minimum(h, 0)
    s = np.exp(lgp) * hp ** 2 / 2 + np.exp(lgm) * hm ** 2 / 2 - delta * np.abs(h)
    return -v @ b0 - h @ b1 - np.sum((v @ W) * h, axis=1) + s.sum(axis=1)


def quadrature_free_energy(m, v):
    """F(v) = -log int exp(-E(v, h)) dh by the trapezoid rule on [-40, 40]."""
    v = np.asarray(v, np.float64)
    W, b0, b1 = (a.astype(np.float64) for a in (m.weight(1), m.bias(0), m.bias(1)))
    lgp, lgm, delta = m.shape_params().astype(np.float64)
    h = np.linspace(-40.0, 40.0, 160001)
    hp, hm = np.maximum(h, 0), np.minimum(h, 0)
    f = -v @ b0
    a = b1 + v @ W
    for j in range(m.sizes[1]):
        s = np.exp(lgp[j]) * hp ** 2 / 2 + np.exp(lgm[j]) * hm ** 2 / 2 - delta[j] * np.abs(h)
        e = a[:, j, None] * h[None, :] - s[None, :]
        top = e.max(axis=1, keepdims=True)
        f -= top[:, 0] + np.log(TRAPEZOID(np.exp(e - top), h, axis=1))
    return f


# ---------------------------------------------------------------------------
# Creation, the shape block, refusals


def test_create_kinds_and_shape_block():
    m = ebm.Model([4, 3], "binary", "drelu")
    assert m.units == (ebm.Units.BINARY, ebm.Units.DRELU) and m.units[1] == 4
    assert repr(m) == "<ebm.Model 4-3 binary/drelu>"
    assert ebm.RBM(4, 3, "spin", "drelu").units == (ebm.Units.SPIN, ebm.Units.DRELU)
    # [W_1 | b_0 | b_1 | shape_1]: 12 + 4 + 3 + 3 x 3
    assert m.param_count == 28
    assert m.param_block("shape", 1) == (19, 3, 3)
    assert m.param_block(ebm.ParamKind.SHAPE, 1) == m.param_block("SHAPE", 1) == (19, 3, 3)
    assert m.param_block("bias", 1) == (16, 1, 3)
    s = m.shape_params()
    assert s.shape == (3, 3) and s.dtype == np.float32 and np.all(s == 0)
    # init leaves the shapes at 0 (gamma+- = 1, delta = 0)
    m.init(ebm.Generator(2), scale=0.5)
    assert np.all(m.shape_params() == 0) and np.any(m.weight(1) != 0)
    rs = np.random.default_rng(0)
    p = rs.normal(0, 0.3, m.param_count).astype(np.float32)
    m.set_params(p)
    np.testing.assert_array_equal(m.shape_params(), p[19:].reshape(3, 3))
    # a copy, like weight() and bias()
    s = m.shape_params()
    s[:] = 5.0
    np.testing.assert_array_equal(m.shape_params(), p[19:].reshape(3, 3))
    # the block of a 4-5 model is 3 x 5
    assert ebm.Model([4, 5], "binary", "drelu").shape_params().shape == (3, 5)


def test_refusals_name_the_rule():
    with pytest.raises(ebm.EbmValueError, match="RBM") as e:
        ebm.Model([4, 3, 2], "binary", "drelu")
    assert e.value.code == ebm.Status.EUNSUPPORTED and e.value.function == "ebm_model_create"
    with pytest.raises(ebm.EbmValueError, match="Gaussian") as e:
        ebm.Model([4, 3], "gaussian", "drelu")
    assert e.value.code == ebm.Status.EUNSUPPORTED
    with pytest.raises(ebm.EbmValueError, match="RBM") as e:
        ebm.Model([6, 3, 2], "potts", "drelu", categories=3)
    assert e.value.code == ebm.Status.EUNSUPPORTED
    with pytest.raises(ebm.EbmValueError) as e:  # dReLU visible units
        ebm.Model([4, 3], "drelu", "binary")
    assert e.value.code == ebm.Status.EVALUE
    with pytest.raises(ebm.EbmValueError, match="dReLU layer, and this model has none") as e:
        ebm.Model([4, 3], "binary", "binary").shape_params()
    assert e.value.code == ebm.Status.EUNSUPPORTED
    m = ebm.Model([4, 3], "binary", "drelu")
    with pytest.raises(ebm.EbmValueError) as e:
        m.param_block("shape", 0)
    assert e.value.code == ebm.Status.ESHAPE
    with pytest.raises(ebm.EbmValueError) as e:
        m.logvar()
    assert e.value.code == ebm.Status.EUNSUPPORTED
    with pytest.raises(ValueError, match="unknown value 'shapes'"):
        m.param_block("shapes", 1)


def test_log_gammas_are_bounded():
    m = ebm.Model([2, 2], "binary", "drelu")
    before = m.to_bytes()
    off = m.param_block("shape", 1)[0]
    p = m.params()
    p[off + 2] = 31.0  # log gamma-_0
    with pytest.raises(ebm.EbmValueError, match=r"log_gamma_minus_1\[0\].*30"):
        m.set_params(p)
    p[off + 2] = 0.0
    p[off + 4] = 31.0  # delta_0: not a log gamma, so unbounded
    m.set_params(p)
    assert m.shape_params()[2, 0] == 31.0
    m.set_params(np.zeros(m.param_count, np.float32))
    assert m.to_bytes() == before


def test_axpy_keeps_log_gammas_bounded():
    m = ebm.Model([2, 2], "binary", "drelu")
    g = np.zeros(m.param_count, np.float32)
    g[m.param_block("shape", 1)[0]] = 1.0
    with pytest.raises(ebm.EbmValueError, match="30"):
        m.axpy_params(35.0, g)
    assert np.all(m.shape_params() == 0)


# ---------------------------------------------------------------------------
# The law


def test_energy_pins_the_rows_of_the_shape_block():
    m = tiny(seed=3, sizes=(3, 4))
    # distinct rows, so that a swapped row or a transposed block shows
    set_shape(m, [0.1, -0.2, 0.3, 0.4], [-0.3, 0.5, 0.0, -0.1], [0.7, -0.4, 0.2, 1.1])
    np.testing.assert_array_equal(m.shape_params()[1], np.float32([-0.3, 0.5, 0.0, -0.1]))
    rs = np.random.default_rng(4)
    x = np.concatenate([visible_states(m), rs.normal(0, 1.5, (8, 4)).astype(np.float32)], 1)
    np.testing.assert_allclose(m.energy(x), drelu_energy(m, x), rtol=1e-6, atol=1e-6)
    # h > 0 reads gamma+, h < 0 gamma-: E(h e_0) - E(0) = gamma h^2 / 2 - delta |h| - b h
    z = np.zeros((3, m.state_width), np.float32)
    z[1, 3], z[2, 3] = 2.0, -2.0
    e = m.energy(z)
    b = float(m.bias(1)[0])
    np.testing.assert_allclose(e[1] - e[0], np.exp(0.1) * 2 - 0.7 * 2 - 2 * b, rtol=1e-6)
    np.testing.assert_allclose(e[2] - e[0], np.exp(-0.3) * 2 - 0.7 * 2 + 2 * b, rtol=1e-6)


@pytest.mark.parametrize("visible", ["binary", "spin"])
def test_likelihood_sums_to_one_and_log_z_by_quadrature(visible):
    m = tiny(seed=5, sizes=(4, 2), visible=visible)
    v = visible_states(m)
    ll = m.log_likelihood(v)
    assert ll.shape == (16,) and np.all(np.isfinite(ll))
    assert np.isclose(np.exp(ll).sum(), 1.0, atol=1e-9)
    f = quadrature_free_energy(m, v)
    np.testing.assert_allclose(m.free_energy(v), f, rtol=1e-6, atol=1e-6)
    log_z = np.logaddexp.reduce(-f)
    assert abs(m.log_partition() - log_z) < 1e-6
    # the twin: without the shape terms (delta = 0, gammas 1) log Z differs
    twin = m.copy()
    set_shape(twin, np.zeros(2), np.zeros(2), np.zeros(2))
    assert abs(twin.log_partition() - log_z) > 0.1


def test_gibbs_draws_follow_the_exact_law():
    m = tiny(seed=7, sizes=(4, 2), scale=0.8)
    v = visible_states(m)
    p = np.exp(m.log_likelihood(v))
    s = ebm.Sampler(m, "gibbs")
    x = m.random_state(ebm.Generator(8), 8000)
    assert np.all(np.isin(x[:, :4], (0.0, 1.0)))
    rng = ebm.Generator(9)
    for _ in range(60):
        s.step(x, rng)
    assert len(np.unique(x[:, 4:])) > 1000  # real hidden values
    idx = (x[:, :4] @ (2.0 ** np.arange(3, -1, -1))).astype(int)
    emp = np.bincount(idx, minlength=16) / len(x)
    # Total variation from the exact law: generator seeds 0..29 under the
    # Haswell and SandyBridge kernels gave 0.012 to 0.025 (mean 0.017, sd
    # 0.003), so 0.04 is 7 sd above the mean; the twin's is about 0.24.
    assert 0.5 * np.abs(emp - p).sum() < 0.04
    # the twin: the law of a model with another delta is far from the draws
    twin = m.copy()
    lgp, lgm, delta = m.shape_params()
    set_shape(twin, lgp, lgm, delta + 1.5)
    q = np.exp(twin.log_likelihood(v))
    assert 0.5 * np.abs(emp - q).sum() > 0.15


# ---------------------------------------------------------------------------
# Training and the estimators


BARS = np.array([[1, 1, 0, 0, 0], [0, 0, 1, 1, 1], [1, 1, 0, 0, 1], [0, 0, 1, 1, 0]],
                np.float32)


def test_pcd_training_raises_the_likelihood():
    m = ebm.Model([5, 3], "binary", "drelu")
    m.init(ebm.Generator(0), scheme="gaussian", scale=0.1)
    est = ebm.Estimator(m, "pcd", k=1, chains=256)
    rng = ebm.Generator(1)
    batch = np.tile(BARS, (8, 1))
    start = m.log_likelihood(BARS).mean()
    for _ in range(300):
        m.axpy_params(0.01, est.gradient(batch, rng))
    end = m.log_likelihood(BARS).mean()
    # Generator seeds 1..30 under the Haswell and SandyBridge kernels gained
    # 1.04 to 1.16 nats (mean 1.08, sd 0.03) from -3.46.
    assert end <= -np.log(4) + 1e-9
    assert end - start > 0.7, (start, end)
    assert np.any(m.shape_params() != 0)  # the shapes are trained too
    chains = est.chains
    assert chains.shape == (256, 8) and np.all(np.isin(chains[:, :5], (0.0, 1.0)))


def test_pcd_gradient_is_the_exact_one_on_average():
    """PCD-1 from stationary chains is unbiased; the exact ascent direction is
    -mean_data dF/dtheta + E_model dF/dtheta, by enumeration of v."""
    m = tiny(seed=11, sizes=(4, 2), scale=0.5)
    v = visible_states(m)
    p = np.exp(m.log_likelihood(v))
    data = v[[0, 3, 5, 12, 15]]
    exact = m.energy_grad(data, coef=np.full(5, -0.2), sum_out=[1])
    exact = m.energy_grad(v, coef=p, sum_out=[1], out=exact).astype(np.float64)
    est = ebm.Estimator(m, "pcd", k=1, chains=1000)
    rng = ebm.Generator(12)
    for _ in range(20):
        est.gradient(data, rng)
    mean = np.mean([est.gradient(data, rng) for _ in range(150)], axis=0)
    shape_off = m.param_block("shape", 1)[0]
    assert np.abs(exact[shape_off:]).max() > 0.05  # the shape gradient is not trivial
    # The largest error over the parameters: generator seeds 0..29 under the
    # Haswell and SandyBridge kernels gave 0.0009 to 0.0104 (mean 0.0042, sd
    # 0.0022), so 0.02 is 7 sd above the mean.
    np.testing.assert_allclose(mean, exact, atol=0.02)


@pytest.mark.parametrize("kind,options", [("ucd", {}), ("ucd_lmi", {}),
                                          ("pt", {"ladder": [0.5, 1.0]})])
def test_unsupported_estimators(kind, options):
    m = tiny()
    with pytest.raises(ebm.EbmValueError, match="not supported for dReLU") as e:
        ebm.Estimator(m, kind, **options)
    assert e.value.code == ebm.Status.EUNSUPPORTED
    assert e.value.function == "ebm_estimator_create"
    assert ebm.Estimator(m, "cd").kind == ebm.EstimatorKind.CD


def test_unsupported_calls_change_nothing():
    m = tiny()
    before = m.to_bytes()
    x = m.random_state(ebm.Generator(1), 4)
    calls = [
        lambda: ebm.Sampler(m, "mh_uniform"),
        lambda: ebm.Sampler(m, "tempering", ladder=[0.5, 1.0]),
        lambda: ebm.Sampler(m, "gibbs").coupled_step(x.copy(), x.copy(), ebm.Generator(2)),
        lambda: m.local_search(x, ebm.Generator(3)),
        lambda: m.mean_field(x),
        lambda: m.log_likelihood_bound(x[:, :4]),
        lambda: m.set_centring_offsets(np.r_[np.zeros(4), 0.5, 0.0].astype(np.float32)),
    ]
    for call in calls:
        with pytest.raises(ebm.EbmValueError) as e:
            call()
        assert e.value.code == ebm.Status.EUNSUPPORTED, e.value
        assert "dReLU" in e.value.message, e.value
    assert m.to_bytes() == before
    # visible offsets are allowed (the hidden ones stay 0), and keep the law
    ll = m.log_likelihood(visible_states(m))
    m.set_centring_offsets(np.r_[np.full(4, 0.5), 0.0, 0.0].astype(np.float32), keep_law=True)
    np.testing.assert_allclose(m.log_likelihood(visible_states(m)), ll, atol=1e-5)


# ---------------------------------------------------------------------------
# Files and Potts visible units


def test_pickle_and_files_keep_kind_and_shape(tmp_path):
    m = tiny(seed=13, sizes=(4, 3), visible="spin")
    data = m.to_bytes()
    assert int.from_bytes(data[8:12], "little") == 2
    assert int.from_bytes(data[20:24], "little") == 4  # the hidden unit kind
    back = pickle.loads(pickle.dumps(m))
    assert back.units == (ebm.Units.SPIN, ebm.Units.DRELU) and back.sizes == (4, 3)
    np.testing.assert_array_equal(back.params(), m.params())
    np.testing.assert_array_equal(back.shape_params(), m.shape_params())
    assert np.any(back.shape_params() != 0) and back.to_bytes() == data
    m.save(tmp_path / "m.ebm")
    loaded = ebm.load(tmp_path / "m.ebm")
    assert loaded.units[1] == ebm.Units.DRELU and loaded.to_bytes() == data


def test_potts_visible_units():
    m = ebm.Model([2 * 3, 2], "potts", "drelu", categories=3)
    assert m.units == (ebm.Units.POTTS, ebm.Units.DRELU) and m.categories == (3, 1)
    assert repr(m) == "<ebm.Model 6-2 potts/drelu>"
    assert m.param_block("shape", 1) == (6 * 2 + 6 + 2, 3, 2) and m.shape_params().shape == (3, 2)
    m.init(ebm.Generator(1), scale=1.0)
    set_shape(m, [0.2, -0.3], [0.4, 0.1], [0.6, -0.2])
    cats = np.array(list(itertools.product(range(3), repeat=2)))
    v = np.zeros((9, 6), np.float32)
    for i in range(2):
        v[np.arange(9), 3 * i + cats[:, i]] = 1.0
    ll = m.log_likelihood(v)
    assert np.isclose(np.exp(ll).sum(), 1.0, atol=1e-9)
    np.testing.assert_allclose(m.free_energy(v), quadrature_free_energy(m, v), rtol=1e-6,
                               atol=1e-6)
    x = m.random_state(ebm.Generator(2), 500)
    s = ebm.Sampler(m, "gibbs")
    rng = ebm.Generator(3)
    for _ in range(5):
        s.step(x, rng)
    assert np.all(x[:, :6].reshape(500, 2, 3).sum(axis=2) == 1)
    est = ebm.Estimator(m, "pcd", chains=50)
    g = est.gradient(v[:4], ebm.Generator(4))
    assert g.shape == (m.param_count,) and np.all(np.isfinite(g))
    back = pickle.loads(pickle.dumps(m))
    assert back.categories == (3, 1) and back.to_bytes() == m.to_bytes()
