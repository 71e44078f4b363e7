"""An integer seed passed as rng is the generator ebm.Generator(seed) for the
whole call, in every call that takes rng: the binding keeps the generator it
makes from the seed alive until the C call returns (a temporary freed before
the call made the library read and advance freed memory)."""
import numpy as np
import pytest

import ebm


def _model():
    m = ebm.DBM([6, 5, 4])
    return m.init(ebm.Generator(1), scheme="gaussian", scale=0.5)


def _states(m, n=40):
    return m.random_state(ebm.Generator(2), n)


def _visible(m, n=40):
    return np.ascontiguousarray(_states(m, n)[:, :m.n_visible])


# Each call that takes rng, as a function of the model and rng, returning
# what the call computes (or its effect).
CALLS = {
    "Model.init": lambda m, rng: m.copy().init(rng, scheme="gaussian", scale=0.5).params(),
    "Model.layer_sample": lambda m, rng: m.layer_sample(_states(m), 1, rng),
    "Model.random_state": lambda m, rng: m.random_state(rng, 40),
    "Model.local_search": lambda m, rng: m.local_search(_states(m), rng)[0],
    "Model.log_partition(ais)": lambda m, rng: np.array(
        m.log_partition("ais", rng, chains=20, betas=50, return_std=True)),
    "Model.log_likelihood_is": lambda m, rng: m.log_likelihood_is(_visible(m), rng, samples=8),
    "Sampler.step": lambda m, rng: ebm.Sampler(m, "gibbs").step(_states(m), rng),
    "Sampler.coupled_step": lambda m, rng: np.concatenate(
        _coupled(ebm.Sampler(m, "gibbs"), _states(m), rng), axis=None),
    "Estimator.gradient": lambda m, rng: ebm.Estimator(m, "ucd").gradient(_visible(m), rng),
}


def _coupled(s, x, rng):
    y = np.ascontiguousarray(x[::-1])
    met = s.coupled_step(x, y, rng)
    return x, y, met.astype(np.float32)


def _churn():
    """Allocations that reuse freed blocks, as a program's other work does."""
    return [np.ones(k, np.float64) for k in (4, 8, 16, 32, 64, 128)] + [bytearray(256)]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_int_seed_is_its_generator(name):
    call, m = CALLS[name], _model()
    by_generator = call(m, ebm.Generator(5))
    for _ in range(20):
        junk = _churn()
        by_seed = call(m, 5)
        del junk
        np.testing.assert_array_equal(by_seed, by_generator, err_msg=name)
    # The twin: another seed gives another result, so the comparison can fail.
    assert not np.array_equal(call(m, 6), by_generator), name
