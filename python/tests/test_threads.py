"""ebm.set_num_threads: its range and message, and results that are the same
bytes for every thread count (the C suite's check_threads tests every
threaded loop; this checks the binding's path to the setting)."""
import numpy as np
import pytest

import ebm


@pytest.fixture(autouse=True)
def _default_threads():
    yield
    ebm.set_num_threads(0)


def test_setting_and_range():
    ebm.set_num_threads(3)
    assert ebm.get_num_threads() == 3
    for bad in (-1, 257):
        with pytest.raises(ebm.EbmValueError, match="n is %d" % bad):
            ebm.set_num_threads(bad)
        assert ebm.get_num_threads() == 3
    with pytest.raises((TypeError, OverflowError, ValueError)):
        ebm.set_num_threads(2 ** 70)
    ebm.set_num_threads(0)
    assert ebm.get_num_threads() >= 1


def _gradient():
    # 3000 rows of 150 units: the draws' loops are long enough to be split.
    m = ebm.DBM([150, 100, 50], units="spin")
    m.init(ebm.Generator(1), scheme="gaussian", scale=0.2)
    data = m.random_state(ebm.Generator(2), 3000)[:, :150].copy()
    est = ebm.Estimator(m, "cd", k=2)
    return est.gradient(data, ebm.Generator(3))


def test_same_bytes_for_every_count():
    ebm.set_num_threads(1)
    one = _gradient()
    ebm.set_num_threads(3)
    many = _gradient()
    assert np.array_equal(one.view(np.uint32), many.view(np.uint32))
