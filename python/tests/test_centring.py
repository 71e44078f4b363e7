"""Centring from Python: offsets set, kept or moved with the law kept, the
energy they define (checked against a float64 formula), their errors and
pickling. The exact proofs are in C (tests/check_centring.c and the centred
parameter set of the exact tests)."""
import pickle

import numpy as np
import pytest

import ebm


@pytest.fixture
def dbm(ref):
    return ref.make_model(((3, 3, 2), "binary", "binary"), seed=11)


def centred_energy(m, x):
    """E(x) = -sum b.(x - mu) - sum (x - mu)^T W (x' - mu'), in float64."""
    p = m.params().astype(np.float64)
    mu = m.centring_offsets.astype(np.float64)
    xc = np.asarray(x, np.float64) - mu
    layers = [xc[:, o:o + k] for o, k in zip(m.offsets, m.sizes)]
    e = np.zeros(len(x))
    for l in range(m.n_layers):
        off, _, cols = m.param_block("bias", l)
        e -= layers[l] @ p[off:off + cols]
    for l in range(1, m.n_layers):
        off, rows, cols = m.param_block("weight", l)
        e -= np.sum((layers[l - 1] @ p[off:off + rows * cols].reshape(rows, cols)) * layers[l],
                    axis=1)
    return e


def test_offsets_define_the_energy(dbm, ref):
    assert np.all(dbm.centring_offsets == 0)
    mu = np.linspace(0.1, 0.9, dbm.state_width).astype(np.float32)
    dbm.set_centring_offsets(mu)
    assert np.array_equal(dbm.centring_offsets, mu)
    x = ref.random_states(dbm, 64, seed=3)
    np.testing.assert_allclose(dbm.energy(x), centred_energy(dbm, x), rtol=1e-12, atol=1e-12)


def test_keep_law_and_moving_average(dbm, ref):
    x = ref.random_states(dbm, 256, seed=4)
    lp0 = -dbm.energy(x) - dbm.log_partition()
    mu = np.full(dbm.state_width, 0.5, np.float32)
    dbm.set_centring_offsets(mu, keep_law=True)
    lp1 = -dbm.energy(x) - dbm.log_partition()
    np.testing.assert_allclose(lp1, lp0, atol=1e-5)
    target = np.linspace(0.0, 1.0, dbm.state_width).astype(np.float32)
    dbm.move_centring_offsets(0.25, target)
    np.testing.assert_allclose(dbm.centring_offsets,
                               (mu + 0.25 * (target.astype(np.float64) - mu)).astype(np.float32))
    lp2 = -dbm.energy(x) - dbm.log_partition()
    np.testing.assert_allclose(lp2, lp0, atol=1e-5)
    # the broken twin: without keep_law the law moves
    dbm.set_centring_offsets(np.zeros(dbm.state_width, np.float32))
    lp3 = -dbm.energy(x) - dbm.log_partition()
    assert np.max(np.abs(lp3 - lp0)) > 0.05


def test_bad_offsets_change_nothing(dbm):
    mu = np.full(dbm.state_width, 0.25, np.float32)
    dbm.set_centring_offsets(mu)
    before = dbm.to_bytes()
    bad = mu.copy()
    bad[4] = 1.5
    with pytest.raises(ebm.EbmValueError, match=r"mu\[4\] \(layer 1, unit 1\) is 1.5"):
        dbm.set_centring_offsets(bad, keep_law=True)
    with pytest.raises(ebm.EbmValueError, match="rate is 2"):
        dbm.move_centring_offsets(2.0, mu)
    with pytest.raises(ValueError, match="shape"):
        dbm.set_centring_offsets(mu[:3])
    assert dbm.to_bytes() == before
    g = ebm.Model((2, 2), "gaussian", "binary")
    with pytest.raises(ebm.EbmError, match="Gaussian"):
        g.set_centring_offsets([0.0, 0.0, 0.5, 0.0])


def test_centred_models_pickle_as_version_2(dbm):
    data = dbm.to_bytes()
    assert int.from_bytes(data[8:12], "little") == 1
    dbm.set_centring_offsets(np.full(dbm.state_width, 0.5, np.float32))
    data = dbm.to_bytes()
    assert int.from_bytes(data[8:12], "little") == 2
    back = pickle.loads(pickle.dumps(dbm))
    assert np.array_equal(back.centring_offsets, dbm.centring_offsets)
    assert back.to_bytes() == data
