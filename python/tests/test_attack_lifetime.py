"""Attack on lifetimes: closed handles, objects that outlive the Python
variables of their model, reference cycles, and calls, reads, assignments
and close() from several threads at once.

The promises (python/README.md, "Errors and lifetimes"): after close()
every call that would reach the C object raises ValueError saying it is
closed (the Python-side shape stays readable); a sampler or estimator keeps
its model alive whatever happens to the variables that held it; the calls
on one generator, sampler or estimator from several threads run one at a
time (so each gets the result it would get alone), and close() during them
frees the C object once, when the last call returns. Under make
check-python-valgrind (and check-python-asan) a use of freed memory in any
of these fails the run even where the results happen to be right."""
import copy
import gc
import pickle
import threading
import warnings

import numpy as np
import pytest

import ebm

F32 = np.float32


@pytest.fixture(scope="module", autouse=True)
def _quick_collections():
    """gc.collect() scans only what the tests make: the rest of the heap
    (pytest's, numpy's, the other modules' tests) is frozen meanwhile."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def _states(m, n=4, seed=1):
    return m.random_state(ebm.Generator(seed), n)


def _visible(m, n=4, seed=1):
    return np.ascontiguousarray(_states(m, n, seed)[:, :m.n_visible])


def _churn():
    """Allocations that reuse freed blocks, as a program's other work does."""
    return [np.ones(k, np.float64) for k in (4, 8, 16, 32, 64, 128, 512)] + [bytearray(256)]


def _tempering(cls, m, kind, **options):
    """A tempering sampler or PT estimator: of m, or of a binary RBM for
    dReLU units, which have none."""
    if ebm.Units.DRELU in m.units:
        m = ebm.RBM(4, 3).init(ebm.Generator(1))
    return cls(m, kind, ladder=[0.5, 1.0], **options)


# ---------------------------------------------------------------------------
# Closed handles: every public member, by class

def _quiet(fn, *args):
    """fn(*args) without its DeprecationWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn(*args)


# member -> call(object); each must raise ValueError "... closed"
MODEL_CALLS = {
    "init": lambda m: m.init(1),
    "params": lambda m: m.params(),
    "set_params": lambda m: m.set_params(np.zeros(m.param_count, F32)),
    "axpy_params": lambda m: m.axpy_params(1.0, np.zeros(m.param_count, F32)),
    "centring_offsets": lambda m: m.centring_offsets,
    "set_centring_offsets": lambda m: m.set_centring_offsets(np.zeros(m.state_width, F32)),
    "move_centring_offsets": lambda m: m.move_centring_offsets(0.5,
                                                               np.zeros(m.state_width, F32)),
    "param_block": lambda m: m.param_block("weight", 1),
    "weight": lambda m: m.weight(1),
    "bias": lambda m: m.bias(0),
    "logvar": lambda m: m.logvar(),
    "shape_params": lambda m: m.shape_params(),
    "energy": lambda m: m.energy(np.zeros((1, m.state_width), F32)),
    "free_energy": lambda m: m.free_energy(np.zeros((1, m.state_width), F32)),
    "energy_grad": lambda m: m.energy_grad(np.zeros((1, m.state_width), F32)),
    "energy_grad_input": lambda m: m.energy_grad_input(np.zeros((1, m.state_width), F32), 1),
    "layer_input": lambda m: m.layer_input(np.zeros((1, m.state_width), F32), 1),
    "layer_mean": lambda m: m.layer_mean(np.zeros((1, m.state_width), F32), 1),
    "layer_logprob": lambda m: m.layer_logprob(np.zeros((1, m.state_width), F32), 1,
                                               np.zeros((1, m.sizes[1]), F32)),
    "layer_argmin": lambda m: m.layer_argmin(np.zeros((1, m.state_width), F32), 1),
    "layer_sample": lambda m: m.layer_sample(np.zeros((1, m.state_width), F32), 1, 1),
    # The deprecated names (kept one release) call the new ones.
    "sample_layer": lambda m: _quiet(m.sample_layer, np.zeros((1, m.state_width), F32), 1, 1),
    "shape": lambda m: _quiet(m.shape),
    "random_state": lambda m: m.random_state(1, 2),
    "local_search": lambda m: m.local_search(np.zeros((1, m.state_width), F32), 1),
    "mean_field": lambda m: m.mean_field(np.zeros((1, m.state_width), F32)),
    "log_partition": lambda m: m.log_partition(),
    "log_partition_ais": lambda m: m.log_partition("ais", 1, chains=2, betas=3),
    "log_likelihood": lambda m: m.log_likelihood(np.zeros((1, m.n_visible), F32), log_z=0.0),
    "log_likelihood_bound": lambda m: m.log_likelihood_bound(np.zeros((1, m.n_visible), F32),
                                                             log_z=0.0),
    "log_likelihood_is": lambda m: m.log_likelihood_is(np.zeros((1, m.n_visible), F32), 1,
                                                       log_z=0.0),
    "save": lambda m: m.save("/nonexistent/closed.ebm"),
    "to_bytes": lambda m: m.to_bytes(),
    "copy": lambda m: m.copy(),
    "pickle": lambda m: pickle.dumps(m),
    "deepcopy": lambda m: copy.deepcopy(m),
    "copy.copy": lambda m: copy.copy(m),
    "Sampler": lambda m: ebm.Sampler(m),
    "Estimator": lambda m: ebm.Estimator(m),
}
# Members that stay usable: the shape, read once from the library, and the
# object's own state.
MODEL_KEPT = {"sizes", "offsets", "units", "categories", "state_width", "param_count",
              "n_layers", "n_visible", "layer_offset", "layer_size", "close", "closed"}

ON_MODEL_CALLS = {
    "step": lambda s: s.step(np.zeros((2, s.model.state_width), F32), 1),
    "coupled_step": lambda s: s.coupled_step(np.zeros((2, s.model.state_width), F32),
                                             np.zeros((2, s.model.state_width), F32), 1),
    "gradient": lambda e: e.gradient(np.zeros((2, e.model.n_visible), F32), 1),
    "num_chains": lambda e: e.num_chains,
    "chains": lambda e: e.chains,
    "chains=": lambda e: setattr(e, "chains", np.zeros((2, e.model.state_width), F32)),
    "set": lambda o: o.set(row_offset=1),
    "set_ladder": lambda o: o.set_ladder([0.5, 1.0]),
    "set_proposal": lambda o: o.set_proposal(np.zeros((2, o.model.n_visible), F32), 0.1),
    "swap_counts": lambda o: o.swap_counts(),
    "stats": lambda o: o.stats,
    "pickle": lambda o: pickle.dumps(o),
    "deepcopy": lambda o: copy.deepcopy(o),
    "copy.copy": lambda o: copy.copy(o),
}
ON_MODEL_KEPT = {"model", "kind", "ladder", "proposal", "close", "closed"}
SAMPLER_ONLY = {"step", "coupled_step"}
ESTIMATOR_ONLY = {"gradient", "num_chains", "chains", "chains="}

GENERATOR_CALLS = {
    "uniform": lambda g: g.uniform(2),
    "normal": lambda g: g.normal(2),
    "derive": lambda g: g.derive(1),
    "state": lambda g: g.state,
    "state=": lambda g: setattr(g, "state", ebm.Generator(1).state),
    "pickle": lambda g: pickle.dumps(g),
    "deepcopy": lambda g: copy.deepcopy(g),
    "copy.copy": lambda g: copy.copy(g),
    "Model.init": lambda g: ebm.RBM(3, 2).init(g),
    "Model.layer_sample": lambda g: ebm.RBM(3, 2).layer_sample(np.zeros((1, 5), F32), 1, g),
    "Model.log_partition": lambda g: ebm.RBM(3, 2).log_partition("ais", g, chains=2, betas=3),
    "Sampler.step": lambda g: ebm.Sampler(ebm.RBM(3, 2)).step(np.zeros((1, 5), F32), g),
    "Estimator.gradient": lambda g: ebm.Estimator(ebm.RBM(3, 2), "cd").gradient(
        np.zeros((1, 3), F32), g),
}
GENERATOR_KEPT = {"close", "closed"}


def _public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.parametrize("cls, calls, kept", [
    (ebm.Model, MODEL_CALLS, MODEL_KEPT),
    (ebm.Sampler, set(ON_MODEL_CALLS) - ESTIMATOR_ONLY, ON_MODEL_KEPT),
    (ebm.Estimator, set(ON_MODEL_CALLS) - SAMPLER_ONLY, ON_MODEL_KEPT),
    (ebm.Generator, GENERATOR_CALLS, GENERATOR_KEPT),
], ids=["Model", "Sampler", "Estimator", "Generator"])
def test_every_public_member_is_attacked(cls, calls, kept):
    """The tables below cover the classes: a new public member must join one."""
    missing = _public(cls) - {c.rstrip("=") for c in calls} - kept
    assert not missing, "not in the closed-handle tables: %s" % sorted(missing)


@pytest.mark.parametrize("member", list(MODEL_CALLS))
def test_closed_model_refuses(model_kind, attack, member):
    m = attack.model(model_kind)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        MODEL_CALLS[member](m)
    assert m.closed and "closed" in repr(m)
    for name in MODEL_KEPT - {"close", "layer_offset", "layer_size"}:
        getattr(m, name)  # the shape stays readable
    m.layer_offset(1), m.layer_size(1)
    m.close()  # again: nothing


def _on_model(kind, cls, m):
    if cls is ebm.Sampler:
        return _tempering(cls, m, "tempering") if kind == "tempering" else cls(m, kind)
    return _tempering(cls, m, "pt", chains=2) if kind == "pt" else cls(m, kind)


ON_MODEL_CASES = [(cls, kind, member) for cls, kinds, only in (
    (ebm.Sampler, ("gibbs", "tempering"), ESTIMATOR_ONLY),
    (ebm.Estimator, ("pcd", "pt"), SAMPLER_ONLY)) for kind in kinds
    for member in ON_MODEL_CALLS if member not in only]


@pytest.mark.parametrize("closing", ["itself", "its_model", "both"])
@pytest.mark.parametrize("cls, kind, member", ON_MODEL_CASES,
                         ids=["%s-%s-%s" % (c.__name__, k, m) for c, k, m in ON_MODEL_CASES])
@pytest.mark.parametrize("model_kind", ["rbm", "grbm"])  # the binding's check, whatever the model
def test_closed_sampler_or_estimator_refuses(model_kind, attack, cls, kind, member, closing):
    m = attack.model(model_kind)
    o = _on_model(kind, cls, m)
    if closing in ("itself", "both"):
        o.close()
    if closing in ("its_model", "both"):
        o.model.close()
    with pytest.raises(ValueError, match="closed"):
        ON_MODEL_CALLS[member](o)
    o.kind, o.model, o.ladder, repr(o)  # still readable


@pytest.mark.parametrize("member", list(GENERATOR_CALLS))
def test_closed_generator_refuses(member):
    g = ebm.Generator(1)
    g.close()
    with pytest.raises(ValueError, match="Generator is closed"):
        GENERATOR_CALLS[member](g)


def test_with_blocks_close_every_kind(attack):
    for kind in attack.kinds:
        with attack.model(kind) as m, ebm.Sampler(m) as s, ebm.Estimator(m, "cd") as e, \
                ebm.Generator(1) as g:
            pass
        assert m.closed and s.closed and e.closed and g.closed


# ---------------------------------------------------------------------------
# Objects that outlive their model's variables

SAMPLERS = ["gibbs", "mh_uniform", "langevin", "gibbs_langevin", "tempering"]
ESTIMATORS = ["cd", "pcd", "ucd", "ucd_lmi", "grbm_cd", "pt"]


# kind -> the options it needs here
OPTIONS = {"tempering": {"ladder": [0.5, 1.0]}, "pt": {"ladder": [0.5, 1.0], "chains": 2},
           "pcd": {"chains": 2}}


def _make(attack, m, cls, kind):
    """attack.made: the object, or None if the library does not make it for m."""
    return attack.made(cls, m, kind, **OPTIONS.get(kind, {}))


def _use(o, seed):
    """What o computes: a step or a gradient, from fixed inputs, and its state after."""
    m = o.model
    g = ebm.Generator(seed)
    try:
        if isinstance(o, ebm.Sampler):
            x = _states(m, 4)
            o.step(x, g)
            return x.tobytes(), repr(sorted(o.stats.items()))
        out = o.gradient(_visible(m), g)
        return out.tobytes(), o.chains.tobytes(), repr(sorted(o.stats.items()))
    except ebm.EbmError as e:  # a kind the model makes but does not run this way
        return e.name, e.message


@pytest.mark.parametrize("cls, kind", [(ebm.Sampler, k) for k in SAMPLERS] +
                         [(ebm.Estimator, k) for k in ESTIMATORS],
                         ids=SAMPLERS + ESTIMATORS)
def test_object_outlives_its_model_variable(model_kind, attack, cls, kind):
    """del model; gc.collect(): the object works as a twin whose model was kept."""
    kept = attack.model(model_kind)
    twin = _make(attack, kept, cls, kind)
    if twin is None:
        return
    m = attack.model(model_kind)
    o = _make(attack, m, cls, kind)
    del m
    gc.collect()
    junk = _churn()
    for seed in (3, 4):
        assert _use(o, seed) == _use(twin, seed)
    del junk
    assert not o.model.closed
    assert pickle.loads(pickle.dumps(o)).model.to_bytes() == kept.to_bytes()


@pytest.mark.parametrize("holder", ["Sampler", "Estimator", "Generator"])
def test_reference_cycles_are_collected(model_kind, attack, holder):
    """A model in a cycle with its sampler or estimator (or a generator): the
    collector finalises them in any order; the C objects do not read each
    other when freed."""
    m = attack.model(model_kind)
    if holder == "Sampler":
        o = ebm.Sampler(m)
    elif holder == "Estimator":
        o = ebm.Estimator(m, "cd")
    else:
        o = ebm.Generator(1)
    m.friend, o.friend = o, m
    del m, o
    assert gc.collect() >= 2
    _churn()


@pytest.mark.parametrize("attr", ["model", "kind"])
@pytest.mark.parametrize("cls", [ebm.Sampler, ebm.Estimator])
def test_model_and_kind_of_a_sampler_or_estimator_are_read_only(attack, cls, attr):
    """Another model put in .model, and the first dropped, left the C object
    with a freed model (a sampler step read its width from freed memory)."""
    m = attack.model("rbm")
    o = cls(m)
    with pytest.raises(AttributeError):
        setattr(o, attr, ebm.RBM(2, 2) if attr == "model" else o.kind)
    del m
    gc.collect()
    _churn()
    assert _use(o, 3) == _use(cls(attack.model("rbm")), 3)


@pytest.mark.parametrize("attr", ["sizes", "offsets", "units", "categories", "state_width",
                                  "param_count"])
def test_model_shape_is_read_only(model_kind, attack, attr):
    """The shape sizes the arrays the library writes: param_count = 1 made
    params() overflow its array."""
    m = attack.model(model_kind)
    before = getattr(m, attr)
    with pytest.raises(AttributeError):
        setattr(m, attr, 1)
    assert getattr(m, attr) == before
    assert m.params().shape == (m.param_count,)


def test_derived_generators_are_independent():
    parent = ebm.Generator(4)
    child, twin = parent.derive(2), ebm.Generator(4).derive(2)
    parent.close()
    gc.collect()
    np.testing.assert_array_equal(child.uniform(9), twin.uniform(9))
    child.close()
    p2 = ebm.Generator(4)
    p2.derive(2).close()
    np.testing.assert_array_equal(p2.uniform(3), ebm.Generator(4).uniform(3))


# ---------------------------------------------------------------------------
# Threads


def _in_threads(work, n):
    """work(i) in n threads at once; re-raises the first exception."""
    errors, start = [], threading.Barrier(n)

    def run(i):
        try:
            start.wait()
            work(i)
        except BaseException as e:  # noqa: B902 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("kind", ["gibbs", "tempering"])
def test_one_sampler_from_threads(model_kind, attack, kind):
    """Each thread's chains move as they would alone (Gibbs and tempering steps
    depend only on the chains and the generator)."""
    m = attack.model(model_kind)
    s = _make(attack, m, ebm.Sampler, kind)
    if s is None:
        return
    rows = 6

    def chains(i):
        x = _states(m, rows, seed=10 + i)
        g = ebm.Generator(i)
        return x, g

    alone = []
    for i in range(3):
        x, g = chains(i)
        for _ in range(4):
            _make(attack, m, ebm.Sampler, kind).step(x, g)
        alone.append(x)
    got = {}

    def work(i):
        x, g = chains(i)
        for _ in range(4):
            s.step(x, g)
        got[i] = x

    _in_threads(work, 3)
    for i in range(3):
        np.testing.assert_array_equal(got[i], alone[i])


@pytest.mark.parametrize("kind", ["cd", "ucd", "ucd_lmi", "grbm_cd"])
def test_one_estimator_from_threads(model_kind, attack, kind):
    """Each thread's gradients are those it would get alone (these kinds keep
    no chains); UCD's scratch grows with the rows, so the threads' calls of
    different sizes crashed before they were serialised."""
    m = attack.model(model_kind)
    e = _make(attack, m, ebm.Estimator, kind)
    if e is None:
        return
    sizes = [3, 17, 40]
    data = [_visible(m, n, seed=20 + n) for n in sizes]
    alone = []
    for i, d in enumerate(data):
        g, twin = ebm.Generator(i), _make(attack, m, ebm.Estimator, kind)
        try:
            alone.append([twin.gradient(d, g) for _ in range(3)])
        except ebm.EbmError as exc:  # UCD on a model it makes but cannot run
            assert exc.code == ebm.Status.EUNSUPPORTED
            return
    got = {}

    def work(i):
        g = ebm.Generator(i)
        got[i] = [e.gradient(data[i], g) for _ in range(3)]

    _in_threads(work, len(sizes))
    for i in range(len(sizes)):
        for a, b in zip(got[i], alone[i]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["pcd", "pt"])
def test_persistent_chains_from_threads(model_kind, attack, kind):
    """Gradients, chain reads and chain assignments from three threads at once
    (reading the chains' count apart from their copy once let an assignment
    in between overflow the copy and corrupt the heap)."""
    m = attack.model(model_kind)
    e = _make(attack, m, ebm.Estimator, kind)
    if e is None:
        return
    v = _visible(m, 5)
    replicas = 2 if kind == "pt" else 1

    def work(i):
        for j in range(6):
            if i == 0:
                e.chains = _states(m, replicas * (1 + j % 3), seed=j)
            elif i == 1:
                assert e.chains.shape[1] == m.state_width
            else:
                e.gradient(v, ebm.Generator(j))

    _in_threads(work, 3)
    assert np.all(np.isfinite(e.chains))


def test_one_generator_from_threads():
    """Fills continue one stream: the threads' draws, together, are the draws
    of one thread alone, each call a run of consecutive ones."""
    g, alone = ebm.Generator(8), ebm.Generator(8)
    sizes = [5, 17, 64, 3]
    got = {i: [] for i in range(len(sizes))}

    def work(i):
        for _ in range(20):
            got[i].append(g.uniform(sizes[i]))

    _in_threads(work, len(sizes))
    draws = np.concatenate([d for i in got for d in got[i]])
    serial = alone.uniform(len(draws))
    np.testing.assert_array_equal(np.sort(draws), np.sort(serial))
    where = {v: k for k, v in enumerate(serial.tolist())}
    for i in got:
        for d in got[i]:
            k = where[d[0]]
            np.testing.assert_array_equal(d, serial[k:k + len(d)])
    np.testing.assert_array_equal(g.state, alone.state)


# handle -> (make(model) -> object, calls(object, model) in a loop)
CLOSING = {
    "Model": (lambda m: m, lambda o, m: o.energy(_states(m))),
    "Sampler": (lambda m: ebm.Sampler(m), lambda o, m: o.step(_states(m), 1)),
    "Estimator": (lambda m: ebm.Estimator(m, "pcd", chains=3),
                  lambda o, m: (o.gradient(_visible(m), 2), o.chains)),
    "Generator": (lambda m: ebm.Generator(1), lambda o, m: m.layer_sample(_states(m), 1, o)),
}


@pytest.mark.parametrize("handle", list(CLOSING))
def test_close_from_threads_during_calls(attack, handle):
    """Two threads call, two close: every call returns its result or raises
    ValueError (closed); the C object is freed once, after the last call."""
    for model_kind in ("rbm", "grbm"):
        m = attack.model(model_kind)
        make, call = CLOSING[handle]
        o = make(m)
        done = []

        def work(i):
            if i < 2:
                for _ in range(30):
                    try:
                        call(o, m)
                    except ValueError as e:
                        assert "closed" in str(e), e
                        break
                done.append(i)
            else:
                o.close()

        _in_threads(work, 4)
        assert sorted(done) == [0, 1]
        assert o.closed and o._p is None and o._users == 0
