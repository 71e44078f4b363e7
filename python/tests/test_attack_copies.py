"""Attack on copies: pickle (every protocol), copy.deepcopy and copy.copy of
every model kind, sampler kind, estimator kind and generator.

The promises (python/README.md): a copy is a new C object with the same
parameters (the same file bytes), options, ladder, iteration count,
persistent chains and generator state, so it computes what the original
computes next, draw for draw; it is independent (closing or changing one
leaves the other); copy.copy of a sampler or estimator shares the model
object, deepcopy copies it; a closed object refuses to be copied
(ValueError), as it refuses every other call."""
import copy
import pickle

import numpy as np
import pytest

import ebm

F32 = np.float32
HOW = {
    **{"pickle%d" % p: (lambda o, p=p: pickle.loads(pickle.dumps(o, protocol=p)))
       for p in (0, 2, pickle.HIGHEST_PROTOCOL)},
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


def _states(m, n=5, seed=1):
    return m.random_state(ebm.Generator(seed), n)


@pytest.mark.parametrize("how", list(HOW))
def test_model_copy_is_identical_and_independent(model_kind, attack, how):
    m = attack.model(model_kind, seed=3)
    c = HOW[how](m)
    assert c is not m and c._p != m._p
    assert c.to_bytes() == m.to_bytes()
    for attr in ("sizes", "offsets", "units", "categories", "state_width", "param_count"):
        assert getattr(c, attr) == getattr(m, attr), attr
    np.testing.assert_array_equal(c.centring_offsets, m.centring_offsets)
    x = _states(m)
    np.testing.assert_array_equal(c.energy(x), m.energy(x))
    np.testing.assert_array_equal(c.layer_sample(x, 1, 4), m.layer_sample(x, 1, 4))
    before = m.to_bytes()
    c.axpy_params(0.5, np.ones(c.param_count, F32))
    c.close()
    assert m.to_bytes() == before and not m.closed


SAMPLERS = {"gibbs": {}, "mh_uniform": {"adjust_after": 1},
            "langevin": {"step_size": 0.05, "adjust_after": 1},
            "gibbs_langevin": {"langevin_steps": 3}, "tempering": {"ladder": [0.25, 0.5, 1.0]}}
ESTIMATORS = {"cd": {"k": 2}, "pcd": {"chains": 3, "k": 2}, "ucd": {"max_steps": 50},
              "ucd_lmi": {}, "grbm_cd": {"k": 2}, "pt": {"ladder": [0.5, 1.0], "chains": 2}}


def _rows(m, kind):
    return 6 if kind == "tempering" else 5  # chains of 3 replicas, or of 1


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("kind", list(SAMPLERS))
def test_sampler_copy_steps_as_the_original(model_kind, attack, kind, how):
    m = attack.model(model_kind, seed=3)
    s = attack.made(ebm.Sampler, m, kind, **SAMPLERS[kind])
    if s is None:
        return
    x = _states(m, _rows(m, kind))
    try:
        s.step(x, ebm.Generator(1))
    except ebm.EbmValueError:  # MH on a free Gaussian layer: made, not run
        return
    c = HOW[how](s)
    assert (c.kind, c.ladder, c.stats["iteration"]) == (s.kind, s.ladder, s.stats["iteration"])
    assert (c.model is s.model) == (how == "copy")
    if how != "copy":
        assert c.model.to_bytes() == m.to_bytes()
    y = x.copy()
    s.step(x, ebm.Generator(2))
    c.step(y, ebm.Generator(2))
    np.testing.assert_array_equal(x, y)
    assert repr(sorted(c.stats.items())) == repr(sorted(s.stats.items()))
    if kind == "tempering":
        for a, b in zip(c.swap_counts(), s.swap_counts()):
            np.testing.assert_array_equal(a, b)
    c.close()
    s.step(x, ebm.Generator(3))


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_estimator_copy_computes_as_the_original(model_kind, attack, kind, how):
    m = attack.model(model_kind, seed=3)
    e = attack.made(ebm.Estimator, m, kind, **ESTIMATORS[kind])
    if e is None:
        return
    data = np.ascontiguousarray(_states(m, 6)[:, :m.n_visible])
    try:
        e.gradient(data, ebm.Generator(1))  # PCD and PT: chains to copy
    except ebm.EbmValueError as exc:
        assert exc.code == ebm.Status.EUNSUPPORTED
        return
    c = HOW[how](e)
    assert (c.kind, c.ladder, c.num_chains) == (e.kind, e.ladder, e.num_chains)
    np.testing.assert_array_equal(c.chains, e.chains)
    assert (c.model is e.model) == (how == "copy")
    np.testing.assert_array_equal(c.gradient(data, ebm.Generator(2)),
                                  e.gradient(data, ebm.Generator(2)))
    np.testing.assert_array_equal(c.chains, e.chains)
    c.close()
    e.gradient(data, ebm.Generator(3))


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("spare", [False, True], ids=["plain", "spare_normal"])
def test_generator_copy_draws_as_the_original(how, spare):
    g = ebm.Generator(5, 6)
    g.uniform(7)
    if spare:
        g.normal(1)  # the state holds a spare normal
    c = HOW[how](g)
    assert c._p != g._p
    np.testing.assert_array_equal(c.state, g.state)
    np.testing.assert_array_equal(c.normal(3), g.normal(3))
    np.testing.assert_array_equal(c.uniform(4), g.uniform(4))
    c.close()
    g.uniform(1)


def _closed(kind):
    m = ebm.RBM(4, 3)
    o = {"Model": m, "Sampler": ebm.Sampler(m), "Estimator": ebm.Estimator(m, "pcd"),
         "Generator": ebm.Generator(1)}[kind]
    o.close()
    return o


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("kind", ["Model", "Sampler", "Estimator", "Generator"])
def test_closed_objects_refuse_to_be_copied(kind, how):
    with pytest.raises(ValueError, match="closed"):
        HOW[how](_closed(kind))


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("kind", ["Sampler", "Estimator"])
def test_objects_of_a_closed_model_refuse_to_be_copied(kind, how):
    m = ebm.RBM(4, 3)
    o = ebm.Sampler(m) if kind == "Sampler" else ebm.Estimator(m)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        HOW[how](o)


def test_copies_of_one_model_share_it_in_a_pickle(attack):
    """A sampler and an estimator pickled together come back on one model."""
    m = attack.model("dbm")
    s, e = ebm.Sampler(m), ebm.Estimator(m, "pcd", chains=2)
    s2, e2 = pickle.loads(pickle.dumps((s, e)))
    assert s2.model is e2.model and s2.model is not m
    s3, e3 = copy.deepcopy((s, e))
    assert s3.model is e3.model and s3.model is not m
