"""Global moves from data rows from Python (docs/global_moves.md): the
global_prob option, set_proposal on the sampler and the estimator, their
statistics, errors, atomic set() and pickling. The laws (the kernel keeps
p, met chains stay met, UCD stays unbiased) are proven by enumeration in C
(tests/check_global.c)."""
import math
import pickle

import numpy as np
import pytest

import ebm


@pytest.fixture
def rbm(ref):
    return ref.make_model("rbm_binary", seed=11)


def rows_of(m, ref, n, seed):
    """n visible rows of m's values (the proposal's centres)."""
    return ref.random_states(m, n, seed=seed)[:, :m.n_visible].copy()


def assert_same_steps(s, t, ref, m, n, seed):
    """s and t make the same step of the same states from the same generator."""
    x = ref.random_states(m, n, seed=seed)
    y = x.copy()
    s.step(x, ebm.Generator(seed + 1))
    t.step(y, ebm.Generator(seed + 1))
    np.testing.assert_array_equal(x, y)


def test_sampler_takes_global_prob_and_needs_a_proposal(rbm, ref):
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.5)
    x = ref.random_states(rbm, 20, seed=1)
    before = x.copy()
    with pytest.raises(ebm.EbmValueError, match="no proposal is set.*ebm_sampler_set_proposal"):
        s.step(x, ebm.Generator(2))
    np.testing.assert_array_equal(x, before)  # a failed step moves nothing
    y = x.copy()
    with pytest.raises(ebm.EbmValueError, match="no proposal is set"):
        s.coupled_step(x, y, ebm.Generator(2))
    assert s.proposal is None


def test_sampler_steps_with_global_moves(rbm, ref):
    rows = rows_of(rbm, ref, 4, seed=3)
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.5)
    assert s.set_proposal(rows, 0.1) is s
    got_rows, flip_prob = s.proposal
    np.testing.assert_array_equal(got_rows, rows)
    assert flip_prob == 0.1
    x = ref.random_states(rbm, 200, seed=4)
    s.step(x, ebm.Generator(5))
    assert set(np.unique(x)) <= {0.0, 1.0}
    a = s.stats["global_accept_rate"]
    assert 0.0 <= a <= 1.0
    # The coupled step: one coin, one proposal, one uniform for both chains.
    y = ref.random_states(rbm, 200, seed=6)
    met = s.coupled_step(x, y, ebm.Generator(7))
    both = s.stats["global_both_rate"]
    assert 0.0 <= both <= s.stats["global_accept_rate"] <= 1.0
    assert met.any()
    np.testing.assert_array_equal(x[met], y[met])


def test_without_global_moves_the_stats_are_nan(rbm, ref):
    s = ebm.Sampler(rbm, "gibbs")
    x = ref.random_states(rbm, 5, seed=8)
    s.step(x, ebm.Generator(9))
    assert math.isnan(s.stats["global_accept_rate"])
    assert math.isnan(s.stats["global_both_rate"])


def test_proposal_copied_and_moves_same_bits(rbm, ref):
    """The library copies the rows: changing the caller's array afterwards
    changes nothing; the same seed gives the same bits."""
    rows = rows_of(rbm, ref, 3, seed=10)
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.8, proposal=(rows, 0.05))
    t = ebm.Sampler(rbm, "gibbs", global_prob=0.8, proposal=(rows.copy(), 0.05))
    rows[:] = 1.0 - rows
    assert_same_steps(s, t, ref, rbm, 50, seed=11)


def test_bad_proposals(rbm, ref):
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.5)
    rows = rows_of(rbm, ref, 3, seed=13)
    for flip_prob in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ebm.EbmValueError, match="flip_prob"):
            s.set_proposal(rows, flip_prob)
    with pytest.raises(ValueError, match="columns"):
        s.set_proposal(np.zeros((3, rbm.n_visible + 1), np.float32), 0.1)
    with pytest.raises(ebm.EbmError, match="n_rows is 0"):
        s.set_proposal(np.zeros((0, rbm.n_visible), np.float32), 0.1)
    half = rows.copy()
    half[1, 2] = 0.5
    with pytest.raises(ebm.EbmValueError, match="rows"):
        s.set_proposal(half, 0.1)
    with pytest.raises(TypeError, match="pair"):
        s.set(proposal=rows)
    assert s.proposal is None
    with pytest.raises(ebm.EbmValueError, match="global_prob|GLOBAL_PROB"):
        s.set(global_prob=1.0)


def test_set_is_all_or_nothing(rbm, ref):
    rows = rows_of(rbm, ref, 3, seed=14)
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.5, proposal=(rows, 0.1))
    with pytest.raises(ebm.EbmValueError, match="flip_prob"):
        s.set(global_prob=0.9, proposal=(rows, 2.0))
    assert s._options["global_prob"] == 0.5 and s.proposal[1] == 0.1


def test_unsupported_kinds_and_models(ref):
    grbm = ref.make_model("grbm", seed=15)
    with pytest.raises(ebm.EbmError, match="Gaussian"):
        ebm.Sampler(grbm, "gibbs").set_proposal(np.zeros((2, grbm.n_visible), np.float32), 0.1)
    rbm = ref.make_model("rbm_binary", seed=16)
    s = ebm.Sampler(rbm, "mh_uniform", global_prob=0.5,
                    proposal=(rows_of(rbm, ref, 2, seed=17), 0.1))
    with pytest.raises(ebm.EbmError, match="GLOBAL_PROB"):
        s.step(ref.random_states(rbm, 3, seed=18), ebm.Generator(19))


def test_sampler_pickles_with_its_proposal(rbm, ref):
    s = ebm.Sampler(rbm, "gibbs", global_prob=0.5, proposal=(rows_of(rbm, ref, 3, seed=20), 0.1))
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.proposal[0], s.proposal[0])
    assert_same_steps(s, t, ref, rbm, 30, seed=21)


def test_tempering_sampler_with_global_moves(rbm, ref):
    s = ebm.Sampler(rbm, "tempering", ladder=[0.5, 1.0], global_prob=0.5)
    s.set_proposal(rows_of(rbm, ref, 4, seed=23), 0.1)
    x = ref.random_states(rbm, 2 * 40, seed=24)
    s.step(x, ebm.Generator(25))
    assert 0.0 <= s.stats["global_accept_rate"] <= 1.0


@pytest.mark.parametrize("kind", ["ucd", "pcd"])
def test_estimator_with_global_moves(rbm, ref, kind):
    data = rows_of(rbm, ref, 8, seed=26)
    e = ebm.Estimator(rbm, kind, global_prob=0.5, chains=8)
    with pytest.raises(ebm.EbmValueError, match="no proposal is set"):
        e.gradient(data, ebm.Generator(27))
    assert e.set_proposal(data, 0.05) is e
    g = e.gradient(data, ebm.Generator(27))
    assert g.shape == (rbm.param_count,) and np.all(np.isfinite(g))
    assert 0.0 <= e.stats["accept_rate"] <= 1.0
    f = pickle.loads(pickle.dumps(e))
    np.testing.assert_array_equal(f.proposal[0], data)
    np.testing.assert_array_equal(f.gradient(data, ebm.Generator(28)),
                                  e.gradient(data, ebm.Generator(28)))
