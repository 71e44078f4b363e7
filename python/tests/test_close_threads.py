"""close() from another thread while a call runs: ctypes releases the GIL
during library calls, so a handle could be freed under a running call (an
exact log Z of 3884.1 for a model whose log Z is 293.3). A handle is held by
every call that passes it to the library: close() closes the object at once
(later calls raise ValueError) and the C object is freed when the last call
in flight returns, so the running call's result is right."""
import os
import threading
import time

import numpy as np
import pytest

import ebm

# Under valgrind (make check-python-valgrind: its core is preloaded) every
# call runs some 50 times slower, so a tenth of the work or less still keeps
# a call running when close() comes, and the run stays within its time.
SMALL = "vgpreload" in os.environ.get("LD_PRELOAD", "")


def _close_during(call, handle, attempts=6):
    """Runs call() in a thread and closes handle as soon as the call holds it
    (not after a fixed delay, which a fast machine's call can outrun and
    valgrind's one-thread-at-a-time scheduling can stretch), or after 20 ms
    (2 s under valgrind, where the call's Python part alone takes longer) if
    no hold is seen (a binding that forgot the hold then frees the handle
    under the call); returns the call's result, or None if the call was over
    before close() in every attempt (then the case was not exercised)."""
    for _ in range(attempts):
        box = {}
        h = handle()

        def work():
            box["result"] = call()

        t = threading.Thread(target=work)
        t.start()
        deadline = time.monotonic() + (2.0 if SMALL else 0.02)
        while h._users == 0 and t.is_alive() and time.monotonic() < deadline:
            time.sleep(0.0002)
        h.close()
        assert h.closed
        held = h._p is not None  # a call in flight holds it: freed when it returns
        t.join()
        assert h._p is None  # freed by now, once
        if held:
            return box["result"]
    return None


def _exercised(make, call, closing):
    """call(objects) with objects = make(), one of them (closing) closed from
    this thread while the call runs; returns the result of an attempt in
    which close() came during the call."""
    for _ in range(6):
        objs = make()
        got = _close_during(lambda: call(objs), lambda: objs[closing], attempts=1)
        if got is not None:
            assert objs[closing].closed
            return got
    raise AssertionError("close() never came during the call: nothing was tested")


def test_model_closed_during_exact_log_z():
    m = ebm.RBM(60 if SMALL else 100, 14 if SMALL else 16).init(ebm.Generator(3), scale=0.3)
    got = _exercised(lambda: {"model": m.copy()}, lambda o: o["model"].log_partition(), "model")
    assert got == m.log_partition()


@pytest.mark.parametrize("closing", ["model", "generator"])
def test_closed_during_ais(closing):
    m = ebm.RBM(64, 32).init(ebm.Generator(3), scale=0.3)

    def ais(o):
        return o["model"].log_partition("ais", o["generator"], chains=50,
                                        betas=100 if SMALL else 3000)

    want = ais({"model": m, "generator": ebm.Generator(6)})
    got = _exercised(lambda: {"model": m.copy(), "generator": ebm.Generator(6)}, ais, closing)
    assert got == want


@pytest.mark.parametrize("closing", ["model", "generator"])
def test_closed_during_a_gradient(closing):
    """A model closed under its estimator's call, or the call's generator."""
    m = ebm.DBM([64, 32, 16]).init(ebm.Generator(3), scale=0.5)
    data = m.random_state(ebm.Generator(4), 200 if SMALL else 3000)[:, :64].copy()

    def make(model):
        return {"model": model, "generator": ebm.Generator(6),
                "estimator": ebm.Estimator(model, "cd", k=10 if SMALL else 100)}

    def grad(o):
        return o["estimator"].gradient(data, o["generator"])

    want = grad(make(m))
    got = _exercised(lambda: make(m.copy()), grad, closing)
    np.testing.assert_array_equal(got, want)


def test_closed_objects_refuse_calls():
    m = ebm.RBM(6, 4)
    g = ebm.Generator(1)
    s = ebm.Sampler(m, "gibbs")
    g.close()
    with pytest.raises(ValueError, match="Generator is closed"):
        g.uniform(2)
    with pytest.raises(ValueError, match="Generator is closed"):
        m.random_state(g, 2)
    m.close()
    m.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        s.step(np.zeros((2, 10), np.float32), 1)
    with pytest.raises(ValueError, match="Model is closed"):
        m.params()
