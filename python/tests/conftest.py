"""Shared fixtures of the core package's tests: the repository, tiny models
with random parameters, and numpy reference implementations (float64) of
the header's formulas, by enumeration where the library sums analytically.

Helpers are handed out through fixtures (`ref`, `make_model`, `repo`), not
imported, so that the tests run under any pytest import mode (make
check-python uses --import-mode=append against an installed package).
"""
import itertools
import os
import types

import numpy as np
import pytest

import ebm

HERE = os.path.dirname(os.path.abspath(__file__))


def repo_root():
    """EBM_REPO, or the repository this tests directory sits in."""
    return os.environ.get("EBM_REPO") or os.path.dirname(os.path.dirname(HERE))


# ---------------------------------------------------------------------------
# Tiny models

# name -> (sizes, visible units, hidden units); every kind of unit and depth.
SPECS = {
    "rbm_binary": ([4, 3], "binary", "binary"),
    "rbm_spin": ([3, 4], "spin", "spin"),
    "rbm_spin_vis_binary_hid": ([3, 3], "spin", "binary"),
    "grbm": ([3, 4], "gaussian", "binary"),
    "grbm_spin": ([2, 3], "gaussian", "spin"),
    "dbm_binary": ([3, 3, 2], "binary", "binary"),
    "dbm_spin": ([2, 3, 2], "spin", "spin"),
    "gdbm": ([2, 3, 2], "gaussian", "binary"),
    "dbm4": ([2, 2, 3, 2], "binary", "binary"),
}


def make_model(spec, seed=0, scale=1.5, bias_scale=0.5):
    """A model of SPECS[spec] (or a (sizes, visible, hidden) tuple) with
    orthogonal weights (init with a Generator), random nonzero biases and,
    for a Gaussian visible layer, random means and log-variances."""
    sizes, vis, hid = SPECS[spec] if isinstance(spec, str) else spec
    m = ebm.Model(sizes, vis, hid)
    m.init(ebm.Generator(seed), scale=scale)
    rs = np.random.default_rng(1000 + seed)
    p = m.params()
    for l in range(m.n_layers):
        off, rows, cols = m.param_block("bias", l)
        p[off:off + rows * cols] = rs.normal(0, bias_scale, rows * cols)
    if m.units[0] == ebm.Units.GAUSSIAN:
        off, rows, cols = m.param_block("logvar", 0)
        p[off:off + rows * cols] = rs.uniform(-0.7, 0.7, rows * cols)
    m.set_params(p)
    return m


def unit_values(units):
    return (0.0, 1.0) if units == ebm.Units.BINARY else (-1.0, 1.0)


def random_states(m, n, seed=0):
    """n valid full states of m, float32 (Gaussian layers N(mu, 1))."""
    rs = np.random.default_rng(seed)
    x = np.empty((n, m.state_width), np.float32)
    for l in range(m.n_layers):
        o, k, u = m.offsets[l], m.sizes[l], m.units[l]
        if u == ebm.Units.GAUSSIAN:
            x[:, o:o + k] = rs.normal(0, 1.2, (n, k))
        else:
            lo, hi = unit_values(u)
            x[:, o:o + k] = np.where(rs.random((n, k)) < 0.5, lo, hi)
    return x


def configurations(units, k):
    """All 2^k configurations of a layer of k binary or spin units, (2^k, k)."""
    return np.array(list(itertools.product(unit_values(units), repeat=k)), np.float64)


def logsumexp(a, axis=None):
    a = np.asarray(a, np.float64)
    mx = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True)) + mx
    return np.squeeze(out, axis=axis) if axis is not None else out.item()


# ---------------------------------------------------------------------------
# The reference model: the header's formulas in float64


class Ref:
    """Float64 reference of a model's formulas on a parameter vector p."""

    def __init__(self, m, p=None):
        self.sizes = tuple(m.sizes)
        self.units = tuple(m.units)
        self.offsets = tuple(m.offsets)
        self.L = m.n_layers - 1
        self.gaussian = self.units[0] == ebm.Units.GAUSSIAN
        self.blocks = {}
        for l in range(1, self.L + 1):
            self.blocks["weight", l] = m.param_block("weight", l)
        for l in range(self.L + 1):
            self.blocks["bias", l] = m.param_block("bias", l)
        if self.gaussian:
            self.blocks["logvar", 0] = m.param_block("logvar", 0)
        self.p = np.asarray(m.params() if p is None else p, np.float64)

    def with_params(self, p):
        r = object.__new__(Ref)
        r.__dict__.update(self.__dict__)
        r.p = np.asarray(p, np.float64)
        return r

    def _blk(self, kind, l):
        off, rows, cols = self.blocks[kind, l]
        return self.p[off:off + rows * cols].reshape(rows, cols)

    def W(self, l):
        return self._blk("weight", l)

    def b(self, l):
        return self._blk("bias", l)[0]

    def var(self):
        return np.exp(self._blk("logvar", 0)[0])

    def split(self, x):
        x = np.asarray(x, np.float64)
        return [x[:, o:o + k] for o, k in zip(self.offsets, self.sizes)]

    def coupling_in(self, xs):
        """Layer 0 as it couples to layer 1: v / sigma^2 when Gaussian."""
        return xs[0] / self.var() if self.gaussian else xs[0]

    def neg_energy(self, xs, integrate_v=False):
        """-E of layer lists xs (rows); with integrate_v, log of the integral
        of exp(-E) over a Gaussian layer 0 (whose values are then unused)."""
        n = xs[1].shape[0]
        t = np.zeros(n)
        for l in range(1, self.L + 1):
            t += xs[l] @ self.b(l)
        for l in range(2, self.L + 1):
            t += np.sum((xs[l - 1] @ self.W(l)) * xs[l], axis=1)
        if not self.gaussian:
            return t + xs[0] @ self.b(0) + np.sum((xs[0] @ self.W(1)) * xs[1], axis=1)
        mu, s2 = self.b(0), self.var()
        if integrate_v:
            # int exp(-0.5 sum (v-mu)^2/s2 + sum v c/s2) dv, c = W_1 x_1
            c = xs[1] @ self.W(1).T
            return (t + 0.5 * np.sum(np.log(2 * np.pi * s2))
                    + np.sum((mu * c + 0.5 * c * c) / s2, axis=1))
        v = xs[0]
        t -= 0.5 * np.sum((v - mu) ** 2 / s2, axis=1)
        return t + np.sum(((v / s2) @ self.W(1)) * xs[1], axis=1)

    def energy(self, x):
        return -self.neg_energy(self.split(x))

    def free_energy(self, x, sum_out=()):
        """-log sum over the layers sum_out (enumerated; a Gaussian layer 0
        integrated in closed form) of exp(-E), per row of x."""
        xs = self.split(x)
        n = xs[0].shape[0]
        S = sorted(set(sum_out))
        enum = [l for l in S if not (l == 0 and self.gaussian)]
        integrate = 0 in S and self.gaussian
        combos = itertools.product(*[configurations(self.units[l], self.sizes[l])
                                     for l in enum])
        terms = []
        for combo in combos:
            ys = list(xs)
            for l, c in zip(enum, combo):
                ys[l] = np.broadcast_to(c, (n, self.sizes[l]))
            terms.append(self.neg_energy(ys, integrate))
        return -logsumexp(np.stack(terms), axis=0)

    def _all_states(self, layers):
        """All configurations of the binary/spin layers `layers`, as full states."""
        width = sum(self.sizes)
        grids = [configurations(self.units[l], self.sizes[l]) for l in layers]
        rows = []
        for combo in itertools.product(*grids):
            x = np.zeros(width)
            for l, c in zip(layers, combo):
                x[self.offsets[l]:self.offsets[l] + self.sizes[l]] = c
            rows.append(x)
        return np.array(rows)

    def log_partition(self):
        """log Z: every binary/spin configuration enumerated, a Gaussian
        layer 0 integrated."""
        free = [l for l in range(self.L + 1) if not (l == 0 and self.gaussian)]
        x = self._all_states(free)
        return logsumexp(self.neg_energy(self.split(x), integrate_v=self.gaussian))

    def log_likelihood(self, v):
        v = np.asarray(v, np.float64)
        x = np.zeros((v.shape[0], sum(self.sizes)))
        x[:, :self.sizes[0]] = v
        return -self.free_energy(x, range(1, self.L + 1)) - self.log_partition()

    def layer_input(self, x, l):
        xs = self.split(x)
        if l == 0 and self.gaussian:
            return self.b(0) + xs[1] @ self.W(1).T
        a = np.broadcast_to(self.b(l), xs[l].shape).copy()
        if l >= 1:
            a += (self.coupling_in(xs) if l == 1 else xs[l - 1]) @ self.W(l)
        if l < self.L:
            a += xs[l + 1] @ self.W(l + 1).T
        return a

    def layer_mean(self, x, l):
        a = self.layer_input(x, l)
        if self.units[l] == ebm.Units.BINARY:
            return 1 / (1 + np.exp(-a))
        if self.units[l] == ebm.Units.SPIN:
            return np.tanh(a)
        return a

    def layer_logprob(self, x, l, xl):
        a = self.layer_input(x, l)
        xl = np.asarray(xl, np.float64)
        if self.units[l] == ebm.Units.BINARY:
            return np.sum(xl * a - np.logaddexp(0, a), axis=1)
        if self.units[l] == ebm.Units.SPIN:
            return np.sum(xl * a - np.logaddexp(a, -a), axis=1)
        s2 = self.var()
        return np.sum(-0.5 * (xl - a) ** 2 / s2 - 0.5 * np.log(2 * np.pi * s2), axis=1)

    def energy_grad(self, x, coef):
        """sum_r coef[r] dE(x_r)/dtheta, analytically (sum_out = none)."""
        xs = self.split(x)
        coef = np.asarray(coef, np.float64)
        g = np.zeros_like(self.p)

        def put(kind, l, value):
            off, rows, cols = self.blocks[kind, l]
            g[off:off + rows * cols] = np.ravel(value)

        for l in range(1, self.L + 1):
            left = self.coupling_in(xs) if l == 1 else xs[l - 1]
            put("weight", l, -(left * coef[:, None]).T @ xs[l])
        for l in range(self.L + 1):
            if l == 0 and self.gaussian:
                put("bias", 0, -coef @ ((xs[0] - self.b(0)) / self.var()))
            else:
                put("bias", l, -coef @ xs[l])
        if self.gaussian:
            v, mu, s2 = xs[0], self.b(0), self.var()
            c = xs[1] @ self.W(1).T
            put("logvar", 0, coef @ (-0.5 * (v - mu) ** 2 / s2 + v * c / s2))
        return g


# ---------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def repo():
    root = repo_root()
    assert os.path.exists(os.path.join(root, "include", "ebm.h")), \
        "EBM_REPO (%s) is not the libebm repository" % root
    return root


@pytest.fixture(scope="session")
def ref():
    """The reference helpers as one namespace."""
    return types.SimpleNamespace(
        Ref=Ref, SPECS=SPECS, make_model=make_model, random_states=random_states,
        configurations=configurations, logsumexp=logsumexp, unit_values=unit_values)


# ---------------------------------------------------------------------------
# The attack suites (test_attack_*.py)

# name -> (sizes, visible, hidden, categories, centred): one small model of
# every kind the package makes. A test that takes an argument `model_kind`
# runs for each of them (pytest_generate_tests below).
ATTACK_KINDS = {
    "rbm": ([4, 3], "binary", "binary", None, False),
    "spin": ([3, 4], "spin", "spin", None, False),
    "dbm": ([3, 3, 2], "binary", "binary", None, False),
    "grbm": ([3, 2], "gaussian", "binary", None, False),
    "potts": ([6, 3], "potts", "binary", 3, False),
    "drelu": ([4, 3], "binary", "drelu", None, False),
    "centred": ([3, 3, 2], "binary", "binary", None, True),
}


def pytest_generate_tests(metafunc):
    marked = set()  # arguments the test's own parametrize marks give
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        marked.update(n.strip() for n in (names.split(",") if isinstance(names, str) else names))
    if "model_kind" in metafunc.fixturenames and "model_kind" not in marked:
        metafunc.parametrize("model_kind", list(ATTACK_KINDS))


def attack_model(kind, seed=0):
    """A model of ATTACK_KINDS[kind], initialised (a centred one with offsets)."""
    sizes, visible, hidden, categories, centred = ATTACK_KINDS[kind]
    m = ebm.Model(sizes, visible, hidden, categories=categories)
    m.init(ebm.Generator(seed), scale=0.5)
    if centred:
        m.set_centring_offsets(np.linspace(0.2, 0.8, m.state_width).astype(np.float32))
    return m


def _stats(obj):
    return repr(sorted(obj.stats.items()))  # NaN statistics compare equal as text


def _root(a):
    """The ndarray that owns a view's memory (the view may cover part of it)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class Snapshot:
    """What a refused call must leave as it was: a model's bytes, a
    generator's state, a sampler's statistics, an estimator's statistics and
    chains, an array's contents and those of the memory under it (the whole
    buffer a view looks into)."""

    def __init__(self, *objs):
        self.taken = [(o, self.take(o)) for o in objs]

    @staticmethod
    def take(o):
        if isinstance(o, ebm.Model):
            return o.to_bytes()
        if isinstance(o, ebm.Generator):
            return o.state.tobytes()
        if isinstance(o, ebm.Sampler):
            return _stats(o)
        if isinstance(o, ebm.Estimator):
            return _stats(o), o.chains.tobytes()
        if isinstance(o, np.ndarray):
            return o.tobytes(), _root(o).tobytes()
        raise TypeError(o)

    def check(self):
        for o, before in self.taken:
            assert self.take(o) == before, "changed: %r" % (o,)


def made(cls, m, kind, **options):
    """cls(m, kind, **options) (a Sampler or an Estimator), or None if the
    library does not make this kind for this model (EUNSUPPORTED: Langevin
    without a Gaussian layer, UCD on dReLU units...), which then changed
    nothing."""
    before = m.to_bytes()
    try:
        return cls(m, kind, **options)
    except ebm.EbmValueError as e:
        assert e.code == ebm.Status.EUNSUPPORTED, e
        assert m.to_bytes() == before
        return None


def unaligned(a):
    """a's contents at an odd address (np.frombuffer over a bytearray)."""
    buf = bytearray(a.nbytes + 1)
    u = np.frombuffer(buf, a.dtype, count=a.size, offset=1).reshape(a.shape)
    u[...] = a
    assert not u.flags.aligned or a.dtype.itemsize == 1
    return u


def readonly(a):
    """A read-only copy of a."""
    a = np.array(a)
    a.flags.writeable = False
    return a


@pytest.fixture(scope="session")
def attack():
    """The attack suites' helpers as one namespace."""
    return types.SimpleNamespace(kinds=ATTACK_KINDS, model=attack_model, Snapshot=Snapshot,
                                 made=made, unaligned=unaligned, readonly=readonly)
