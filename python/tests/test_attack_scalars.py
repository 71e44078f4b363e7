"""Attack on the scalar arguments, enums, paths, bytes and generator states.

The promises (python/README.md): a real-number argument takes a real number
(not a bool, string or complex number), an integer argument an integer
(test_integers.py: never wrapped), an enum argument a member of its enum,
its name or its value (not a float, nor another enum's member); each
refusal is a TypeError or ValueError naming the argument, and changes
nothing (the model, the generator); paths with a NUL byte and non-buffers
given as model bytes are refused; a generator's state takes exactly its
words, each in [0, 2^64)."""
import os
import pathlib

import numpy as np
import pytest

import ebm

F32 = np.float32


def _states(m):
    return m.random_state(ebm.Generator(1), 3)


def _visible(m):
    return np.ascontiguousarray(_states(m)[:, :m.n_visible])


# argument -> (call(model, value, generator), good value, the name its errors give)
REALS = {
    "init.scale": (lambda m, v, g: m.init(g, scale=v), 0.5, "scale"),
    "axpy_params.alpha": (lambda m, v, g: m.axpy_params(v, np.ones(m.param_count, F32)), 1e-3,
                          "alpha"),
    "move_centring_offsets.rate": (lambda m, v, g: m.move_centring_offsets(
        v, np.full(m.state_width, 0.5, F32)), 0.5, "rate"),
    "mean_field.tol": (lambda m, v, g: m.mean_field(_states(m), tol=v), 1e-4, "tol"),
    "log_likelihood.log_z": (lambda m, v, g: m.log_likelihood(_visible(m), log_z=v), 3.0,
                             "log_z"),
    "log_likelihood_bound.log_z": (lambda m, v, g: m.log_likelihood_bound(_visible(m), log_z=v),
                                   3.0, "log_z"),
    "log_likelihood_is.log_z": (lambda m, v, g: m.log_likelihood_is(_visible(m), g, samples=2,
                                                                    log_z=v), 3.0, "log_z"),
    "Sampler.step_size": (lambda m, v, g: ebm.Sampler(m, step_size=v), 0.1, "step_size|STEP_SIZE"),
    "Sampler.set.step_size": (lambda m, v, g: ebm.Sampler(m).set(step_size=v), 0.1,
                              "step_size|STEP_SIZE"),
    "Estimator.mean_field_tol": (lambda m, v, g: ebm.Estimator(m, "ucd", mean_field_tol=v),
                                 1e-5, "mean_field_tol|MEAN_FIELD_TOL"),
}
NOT_REALS = {"str": "0.5", "bytes": b"0.5", "complex": 0.5j, "numpy_complex": np.complex128(0.5),
             "none": None, "list": [0.5], "bool": True, "numpy_bool": np.bool_(True),
             "array": np.array([0.5]), "object": object()}


def _rbm():
    m = ebm.RBM(4, 3).init(ebm.Generator(1), scale=0.5)
    m.set_centring_offsets(np.full(m.state_width, 0.25, F32))
    return m


def _refused(attack, call, value, errors, name):
    m, g = _rbm(), ebm.Generator(5)
    g.normal(1)  # a spare normal: any move of the generator shows
    snap = attack.Snapshot(m, g)
    with pytest.raises(errors, match=name):
        call(m, value, g)
    snap.check()


@pytest.mark.parametrize("bad", list(NOT_REALS))
@pytest.mark.parametrize("arg", list(REALS))
def test_real_refuses_non_reals(attack, arg, bad):
    call, _, name = REALS[arg]
    if bad == "none" and arg.endswith("log_z"):
        return  # log_z=None: computed exactly
    _refused(attack, call, NOT_REALS[bad], TypeError, name)


@pytest.mark.parametrize("good", [np.float32(0.5), np.float64(0.5), 1, np.int8(1),
                                  np.array(0.5)], ids=["f32", "f64", "int", "int8", "0d"])
@pytest.mark.parametrize("arg", list(REALS))
def test_real_takes_real_numbers(arg, good):
    call, value, _ = REALS[arg]
    if isinstance(good, (int, np.integer)) and arg.endswith(("tol", "rate", "alpha")):
        good = type(good)(0)  # an integer these take
    call(_rbm(), good, ebm.Generator(5))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("arg", [a for a in REALS if not a.endswith("log_z")] +
                         ["log_likelihood.log_z"])
def test_real_nonfinite_refused_by_the_library(attack, arg, value):
    call, _, name = REALS[arg]
    _refused(attack, call, value, ValueError, name)


# argument -> (call(model, value, generator), the name the binding's errors
# give, the name the library's give: an option's enum name)
INTEGERS = {
    "Generator.seed": (lambda m, v, g: ebm.Generator(v), "seed", "seed"),
    "Generator.stream": (lambda m, v, g: ebm.Generator(1, v), "stream", "stream"),
    "Generator.derive": (lambda m, v, g: g.derive(v), "index", "index"),
    "Generator.uniform": (lambda m, v, g: g.uniform(v), r"\bn\b", r"\bn\b"),
    "Generator.normal": (lambda m, v, g: g.normal(v), r"\bn\b", r"\bn\b"),
    "Model.sizes": (lambda m, v, g: ebm.Model([4, v]), r"sizes\[1\]", r"sizes\[1\]"),
    "Model.categories": (lambda m, v, g: ebm.Model([6, 3], "potts", categories=v),
                         "categories", "categories"),
    "layer_offset": (lambda m, v, g: m.layer_offset(v), "layer", "layer"),
    "layer_size": (lambda m, v, g: m.layer_size(v), "layer", "layer"),
    "layer_mean": (lambda m, v, g: m.layer_mean(_states(m), v), "layer", "layer"),
    "energy_grad_input": (lambda m, v, g: m.energy_grad_input(_states(m), v), "layer", "layer"),
    "layer_sample": (lambda m, v, g: m.layer_sample(_states(m), v, g), "layer", "layer"),
    "param_block": (lambda m, v, g: m.param_block("bias", v), r"\bl\b", r"\bl\b"),
    "weight": (lambda m, v, g: m.weight(v), r"\bl\b", r"\bl\b"),
    "free_energy.sum_out": (lambda m, v, g: m.free_energy(_states(m), [v]), "sum_out",
                            "sum_out"),
    "random_state.n": (lambda m, v, g: m.random_state(g, v), r"\bn\b", r"\bn\b"),
    "local_search.max_sweeps": (lambda m, v, g: m.local_search(_states(m), g, max_sweeps=v),
                                "max_sweeps", "max_sweeps"),
    "mean_field.max_iter": (lambda m, v, g: m.mean_field(_states(m), max_iter=v), "max_iter",
                            "max_iter"),
    "log_partition.chains": (lambda m, v, g: m.log_partition("ais", g, chains=v, betas=3),
                             "chains", "chains"),
    "log_partition.betas": (lambda m, v, g: m.log_partition("ais", g, chains=2, betas=v),
                            "betas", "betas"),
    "log_likelihood_is.samples": (lambda m, v, g: m.log_likelihood_is(_visible(m), g,
                                                                      samples=v),
                                  "samples", "samples"),
    "Sampler.clamp_layers": (lambda m, v, g: ebm.Sampler(m, clamp_layers=v), "clamp_layers",
                             "CLAMP_LAYERS"),
    "Sampler.langevin_steps": (lambda m, v, g: ebm.Sampler(m, langevin_steps=v),
                               "langevin_steps", "LANGEVIN_STEPS"),
    "Sampler.iteration": (lambda m, v, g: ebm.Sampler(m).set(iteration=v), "iteration",
                          "ITERATION"),
    "Sampler.row_offset": (lambda m, v, g: ebm.Sampler(m).set(row_offset=v), "row_offset",
                           "ROW_OFFSET"),
    "Estimator.k": (lambda m, v, g: ebm.Estimator(m, "ucd", k=v), r"\bk\b", r"_K\b"),
    "Estimator.max_steps": (lambda m, v, g: ebm.Estimator(m, max_steps=v), "max_steps",
                            "MAX_STEPS"),
    "Estimator.chains": (lambda m, v, g: ebm.Estimator(m, "pcd", chains=v), "chains",
                         "CHAINS"),
    "Estimator.burn_in": (lambda m, v, g: ebm.Estimator(m, burn_in=v), "burn_in", "BURN_IN"),
    "Estimator.search_sweeps": (lambda m, v, g: ebm.Estimator(m, search_sweeps=v),
                                "search_sweeps", "SEARCH_SWEEPS"),
    "Estimator.chain_offset": (lambda m, v, g: ebm.Estimator(m).set(chain_offset=v),
                               "chain_offset", "CHAIN_OFFSET"),
}
NOT_INTEGERS = {"float": 2.0, "fraction": 1.5, "numpy_float": np.float64(2.0), "str": "2",
                "none": None, "complex": 2j, "list": [2]}


@pytest.mark.parametrize("bad", list(NOT_INTEGERS))
@pytest.mark.parametrize("arg", list(INTEGERS))
def test_integer_refuses_non_integers(attack, arg, bad):
    """TypeError naming the argument (a float is never truncated)."""
    call, name, _ = INTEGERS[arg]
    if bad == "none" and arg in ("Model.categories", "random_state.n"):
        return  # None: not given (ValueError: "needs categories=q", "needs n or x")
    _refused(attack, call, NOT_INTEGERS[bad], TypeError, name)


@pytest.mark.parametrize("value", [-1, -(2 ** 31), -(2 ** 63)])
@pytest.mark.parametrize("arg", list(INTEGERS))
def test_negative_integer_refused_by_name(attack, arg, value):
    """ValueError naming the argument and the value (the binding's names, or
    the library's), the model and the generator unchanged."""
    call, name, lib_name = INTEGERS[arg]
    names, v = "(%s|%s)" % (name, lib_name), "%d(?!\\d)" % value
    _refused(attack, call, value, ValueError, "%s.*%s|%s.*%s" % (names, v, v, names))


# ---------------------------------------------------------------------------
# Enums

ENUMS = {
    "Model.visible": (lambda m, v: ebm.Model([4, 3], v), "visible"),
    "Model.hidden": (lambda m, v: ebm.Model([4, 3], "binary", v), "hidden"),
    "Sampler.kind": (lambda m, v: ebm.Sampler(m, v), "kind"),
    "Estimator.kind": (lambda m, v: ebm.Estimator(m, v), "kind"),
    "init.scheme": (lambda m, v: m.init(ebm.Generator(1), scheme=v), "scheme"),
    "param_block.kind": (lambda m, v: m.param_block(v, 1), "kind"),
    "Sampler.coupling": (lambda m, v: ebm.Sampler(m, coupling=v), "coupling"),
    "Estimator.marginalize": (lambda m, v: ebm.Estimator(m, marginalize=v), "marginalize"),
    "Estimator.positive": (lambda m, v: ebm.Estimator(m, positive=v), "positive"),
    "Estimator.sampler": (lambda m, v: ebm.Estimator(m, sampler=v), "sampler"),
}
NOT_MEMBERS = {
    "fraction": (1.5, TypeError), "float": (1.0, TypeError), "none": (None, TypeError),
    "bytes": (b"binary", TypeError), "other_enum": (ebm.Status.EIO, TypeError),
    "unknown_name": ("nope", ValueError), "unknown_value": (99, ValueError),
    "negative": (-1, ValueError), "huge": (2 ** 70, ValueError),
}


@pytest.mark.parametrize("bad", list(NOT_MEMBERS))
@pytest.mark.parametrize("arg", list(ENUMS))
def test_enum_refuses_non_members(attack, arg, bad):
    call, name = ENUMS[arg]
    value, error = NOT_MEMBERS[bad]
    m = _rbm()
    snap = attack.Snapshot(m)
    with pytest.raises(error, match=name):
        call(m, value)
    snap.check()


# ---------------------------------------------------------------------------
# Paths and bytes


@pytest.mark.parametrize("form", ["str", "bytes", "pathlib"])
@pytest.mark.parametrize("where", ["middle", "end"])
def test_paths_with_a_nul_byte_refused(tmp_path, form, where):
    """The library reads a C string, which ends at the NUL: "a\\0b" would be "a"."""
    m = _rbm()
    good = tmp_path / "model.ebm"
    m.save(good)
    name = str(good) + ("\0.bak" if where == "middle" else "\0")
    bad = {"str": name, "bytes": os.fsencode(name), "pathlib": pathlib.Path(name)}[form]
    with pytest.raises(ValueError, match="NUL"):
        m.save(bad)
    with pytest.raises(ValueError, match="NUL"):
        ebm.load(bad)
    assert sorted(os.listdir(tmp_path)) == ["model.ebm"]


@pytest.mark.parametrize("bad", [3, 10 ** 12, -1, None, 1.5, "model", ["a"], {}])
def test_from_bytes_refuses_non_buffers(bad):
    """bytes(10**12) would make a terabyte of zeros."""
    with pytest.raises(TypeError, match="bytes-like"):
        ebm.from_bytes(bad)


@pytest.mark.parametrize("form", ["bytearray", "memoryview", "uint8", "strided_uint8"])
def test_from_bytes_takes_buffers(form):
    m = _rbm()
    b = m.to_bytes()
    wide = np.zeros(2 * len(b), np.uint8)
    wide[::2] = np.frombuffer(b, np.uint8)
    data = {"bytearray": bytearray(b), "memoryview": memoryview(b),
            "uint8": np.frombuffer(b, np.uint8), "strided_uint8": wide[::2]}[form]
    assert ebm.from_bytes(data).to_bytes() == b


@pytest.mark.parametrize("bad", [3, None, 1.5, ["x"]])
def test_paths_of_other_types_refused(bad):
    with pytest.raises(TypeError):
        _rbm().save(bad)
    with pytest.raises(TypeError):
        ebm.load(bad)


# ---------------------------------------------------------------------------
# Generator states

W = ebm.RNG_STATE_WORDS


def _negative_word(i, as_list):
    """The state with word i set to -1: as a list, or as int64 words (the
    others 0: a state's words need not fit in int64)."""
    def make(s):
        if as_list:
            return [-1 if j == i else w for j, w in enumerate(s.tolist())]
        return np.where(np.arange(W) == i, -1, 0).astype(np.int64)
    return make


BAD_STATES = {
    **{"negative_word%d" % i: (_negative_word(i, False), ValueError, r"state\[%d\]" % i)
       for i in range(W)},
    **{"negative_word%d_list" % i: (_negative_word(i, True), ValueError, r"state\[%d\]" % i)
       for i in range(W)},
    "word_2^64": (lambda s: [2 ** 64] + s.tolist()[1:], ValueError, r"state\[0\]"),
    "short": (lambda s: s[:-1], ValueError, "words"),
    "long": (lambda s: np.append(s, s[:1]), ValueError, "words"),
    "empty": (lambda s: s[:0], ValueError, "words"),
    "2d": (lambda s: s[None], ValueError, "words"),
    "float": (lambda s: s.astype(np.float64), ValueError, "words"),
    "float_list": (lambda s: [float(w) for w in s], ValueError, "words"),
    "bool": (lambda s: s.astype(bool), ValueError, "words"),
    "str": (lambda s: [str(w) for w in s], ValueError, "words"),
    "none": (lambda s: None, ValueError, "words"),
    "int": (lambda s: 5, ValueError, "words"),
    "format_tag": (lambda s: np.where(np.arange(W) == W - 1, 0, s).astype(np.uint64),
                   ValueError, "tag"),
}


@pytest.mark.parametrize("bad", list(BAD_STATES))
def test_generator_state_refused_and_kept(attack, bad):
    make, error, name = BAD_STATES[bad]
    g, twin = ebm.Generator(3), ebm.Generator(3)
    g.normal(1)
    twin.normal(1)
    snap = attack.Snapshot(g)
    with pytest.raises(error, match=name):
        g.state = make(g.state)
    snap.check()
    np.testing.assert_array_equal(g.normal(5), twin.normal(5))


@pytest.mark.parametrize("form", ["uint64", "int64_positive", ">u8", "list", "tuple",
                                  "strided", "unaligned"])
def test_generator_state_forms_taken(form):
    g = ebm.Generator(3)
    g.normal(1)
    s = g.state
    want = g.normal(4)
    wide = np.zeros(2 * W, np.uint64)
    wide[::2] = s
    raw = bytearray(s.nbytes + 1)
    unaligned = np.frombuffer(raw, np.uint64, count=W, offset=1)
    unaligned[...] = s
    value = {"uint64": s, "int64_positive": None, ">u8": s.astype(">u8"), "list": s.tolist(),
             "tuple": tuple(s.tolist()), "strided": wide[::2], "unaligned": unaligned}[form]
    if form == "int64_positive":
        if max(s.tolist()) >= 2 ** 63:
            value = s.tolist()  # (not representable in int64: the list form instead)
        else:
            value = s.astype(np.int64)
    h = ebm.Generator(0)
    h.state = value
    np.testing.assert_array_equal(h.normal(4), want)
