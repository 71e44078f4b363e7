"""Parallel tempering from Python: the tempering sampler and the PT estimator
(ladders, replica rows, swap counts, errors, pickling). The exact laws are
proven in C (tests/check_tempering.c, tests/check_estimator.c)."""
import pickle

import numpy as np
import pytest

import ebm

LADDER = [0.0, 0.5, 1.0]


@pytest.fixture
def rbm(ref):
    return ref.make_model("rbm_binary", seed=5)


def test_sampler_steps_chains_of_replicas(rbm, ref):
    s = ebm.Sampler(rbm, "tempering", ladder=LADDER)
    assert s.kind == ebm.SamplerKind.TEMPERING and s.ladder == LADDER
    x = ref.random_states(rbm, 3 * 50, seed=6)
    rng = ebm.Generator(7)
    swaps = 0
    for _ in range(20):
        s.step(x, rng)
        acc, prop = s.swap_counts()
        assert acc.dtype == np.int64 and acc.shape == (2,) and list(prop) == [50, 50]
        assert np.all((acc >= 0) & (acc <= 50))
        assert s.stats["swap_rate"] == pytest.approx(acc.sum() / 100.0, abs=1e-15)
        swaps += int(acc.sum())
    assert swaps > 0
    assert set(np.unique(x)) <= {0.0, 1.0}


def test_sampler_bad_ladders_and_rows(rbm, ref):
    s = ebm.Sampler(rbm, "tempering")
    x = ref.random_states(rbm, 4, seed=8)
    with pytest.raises(ebm.EbmValueError, match="ebm_sampler_set_ladder"):
        s.step(x, ebm.Generator(1))
    for bad, code, says in (([1.0], ebm.EbmError, "n_betas is 1"),
                            ([0.5, 0.9], ebm.EbmValueError, "must be 1"),
                            ([0.6, 0.2, 1.0], ebm.EbmValueError, "increase"),
                            ([float("nan"), 1.0], ebm.EbmValueError, "nan")):
        with pytest.raises(code, match=says):
            s.set_ladder(bad)
    assert s.ladder is None
    s.set_ladder([0.5, 1.0])
    before = x.copy()
    with pytest.raises(ebm.EbmError, match="n is 3"):
        s.step(x[:3], ebm.Generator(1))
    np.testing.assert_array_equal(x, before)
    with pytest.raises(ebm.EbmError, match="no ladder"):
        ebm.Sampler(rbm, "gibbs").set_ladder([0.5, 1.0])


def test_sampler_pickles_with_its_ladder(rbm, ref):
    s = ebm.Sampler(rbm, "tempering", ladder=LADDER)
    t = pickle.loads(pickle.dumps(s))
    assert t.ladder == LADDER and t.kind == s.kind
    x = ref.random_states(rbm, 6, seed=9)
    y = x.copy()
    s.step(x, ebm.Generator(3))
    t.step(y, ebm.Generator(3))
    np.testing.assert_array_equal(x, y)


def test_pt_estimator(rbm, ref):
    data = ref.random_states(rbm, 8, seed=10)[:, :rbm.n_visible].copy()
    e = ebm.Estimator(rbm, "pt", ladder=LADDER, chains=5, k=2)
    g = e.gradient(data, ebm.Generator(11))
    assert g.shape == (rbm.param_count,) and np.all(np.isfinite(g))
    assert e.num_chains == 15 and e.chains.shape == (15, rbm.state_width)
    acc, prop = e.swap_counts()
    assert list(prop) == [10, 10]
    assert e.stats["swap_rate"] == pytest.approx(acc.sum() / 20.0, abs=1e-15)
    f = pickle.loads(pickle.dumps(e))
    assert f.ladder == LADDER
    np.testing.assert_array_equal(f.chains, e.chains)
    np.testing.assert_array_equal(f.gradient(data, ebm.Generator(12)),
                                  e.gradient(data, ebm.Generator(12)))
    e.set_ladder([0.5, 1.0])                      # another length: new chains
    assert e.num_chains == 0
    with pytest.raises(ebm.EbmError, match="n is 3"):
        e.chains = ref.random_states(rbm, 3, seed=13)
    with pytest.raises(ebm.EbmValueError, match="set_ladder"):
        ebm.Estimator(rbm, "pt").gradient(data, ebm.Generator(1))
    assert np.isnan(ebm.Estimator(rbm, "pcd").stats["swap_rate"])


def test_ais_from_a_data_base(rbm, ref):
    """AIS from the data's pixel means (ebm_model_log_partition_ais_base)
    agrees with the exact log Z; a wrong shape and a NaN bias are refused."""
    exact = rbm.log_partition("exact")
    base = np.linspace(-1.0, 1.0, rbm.n_visible).astype(np.float32)
    z, se = rbm.log_partition("ais", ebm.Generator(21), chains=200, betas=5000,
                              return_std=True, base=base)
    assert abs(z - exact) <= 4 * se + 1e-9
    with pytest.raises(ValueError, match="base must have shape"):
        rbm.log_partition("ais", ebm.Generator(1), base=base[:-1])
    base[2] = np.nan
    with pytest.raises(ebm.EbmValueError, match=r"base\[2\] is nan"):
        rbm.log_partition("ais", ebm.Generator(1), base=base)
