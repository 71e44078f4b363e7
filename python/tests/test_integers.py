"""Integer arguments out of their C type's range are refused by name, never
wrapped: ctypes and numpy would pass 2^64 + 3 as 3 (a 3-category model from
categories=2**64 + 3). Every integer reaches the library through _check_int
(int64_t unless said otherwise) or through a function whose integer
arguments are checked against their C types (ebm._lib.checked)."""
import re

import numpy as np
import pytest

import ebm

BIG = 2 ** 64


def _rbm():
    return ebm.RBM(6, 4).init(ebm.Generator(1))


def _dbm():
    return ebm.DBM([4, 3, 2]).init(ebm.Generator(1))


# name in the message -> a call taking the value v there
CASES = {
    "sizes[1]": lambda v: ebm.Model([6, v]),
    "categories": lambda v: ebm.Model([6, 4], "potts", categories=v),
    "chains": lambda v: ebm.Estimator(_rbm(), "pcd", chains=v),
    "k": lambda v: ebm.Estimator(_rbm(), "cd", k=v),
    "row_offset": lambda v: ebm.Sampler(_rbm(), "gibbs", row_offset=v),
    "n": lambda v: _rbm().random_state(1, v),
    "max_sweeps": lambda v: _rbm().local_search(_rbm().random_state(1, 3), 1, max_sweeps=v),
    "betas": lambda v: _rbm().log_partition("ais", 1, chains=10, betas=v),
    "samples": lambda v: _dbm().log_likelihood_is(_dbm().random_state(1, 3)[:, :4], 1,
                                                  samples=v),
    "index": lambda v: ebm.Generator(1).derive(v),
}

# in-range values at which each call works (the comparison's other side)
GOOD = {"sizes[1]": 4, "categories": 2, "chains": 12, "k": 1, "row_offset": 7, "n": 3,
        "max_sweeps": 5, "betas": 20, "samples": 4, "index": BIG - 1}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("value", [BIG + 3, -BIG - 3, 2 ** 63, 2 ** 100])
def test_out_of_range_integers_are_refused_by_name(name, value):
    if name == "index" and 0 <= value < BIG:
        value = BIG + value  # derive takes all of uint64_t
    with pytest.raises(OverflowError, match=re.escape(name)) as e:
        CASES[name](value)
    assert isinstance(e.value, ValueError)  # the binding's other bad values raise ValueError
    assert str(value) in str(e.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_range_integers_work(name):
    CASES[name](GOOD[name])


def test_categories_are_not_wrapped():
    assert ebm.Model([6, 4], "potts", categories=2).categories[0] == 2
    with pytest.raises(OverflowError):
        ebm.Model([6, 4], "potts", categories=BIG + 2)


def test_unsigned_words_take_all_of_uint64():
    g = ebm.Generator(BIG - 1, BIG - 1)
    g.derive(BIG - 1)
    with pytest.raises(ValueError, match="seed"):
        ebm.Generator(-1)
    np.testing.assert_array_equal(ebm.Generator(BIG - 1, BIG - 1).uniform(3), g.uniform(3))
