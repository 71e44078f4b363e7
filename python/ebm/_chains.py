"""Sampler and Estimator: C objects that work on a model's states.

Sampler.step and Sampler.coupled_step move the caller's chains in place, as
the C calls do, so they take only float32 arrays they can write. Options
are set by name; set(**options) is atomic (all or nothing).
"""
import ctypes
import types

import numpy as np

from . import _abi, _options
from ._abi import EstimatorKind, EstimatorOption, EstimatorStat, SamplerKind, SamplerOption, SamplerStat
from ._arrays import (_check_int, _dense, _enum_value, _f32, _out_vector, _ptr, _readable,
                      _real, _writable)
from ._errors import _check
from ._generator import _generator
from ._handle import _Handle, _held_call, _using
from ._lib import checked as _C
from ._model import Model, _model_errmsg

# ---------------------------------------------------------------------------
# Option values: each option's kind comes from the library's option tables
# (_options.py, generated from them); the ranges are checked by the C
# setters, which name the option and value.

_ENUM_CLASSES = {tag: cls for cls, tag, _prefix in _abi.ENUMS}
_OPTION_KINDS = {o.name: o for o in _options.SAMPLER_OPTIONS + _options.ESTIMATOR_OPTIONS}


def _option_value(name, value):
    """value as the C setter of option name takes it: an enum's int, a float or an int."""
    option = _OPTION_KINDS.get(name)
    if option is not None and option.kind == "enum":
        return int(_enum_value(_ENUM_CLASSES[option.values], value, name))
    if option is not None and option.kind == "double":
        return _real(value, name)
    return _check_int(value, name)


def _proposal_value(model, value):
    """(rows, flip_prob) as set_proposal passes them: float32 rows of the
    model's visible units (read in place when possible) and a float."""
    try:
        rows, flip_prob = value
    except (TypeError, ValueError):
        raise TypeError("proposal must be a pair (rows, flip_prob), not %r" % (value,)) from None
    rows, ld = _readable(rows, "rows", model.n_visible)
    return rows, ld, _real(flip_prob, "flip_prob")


def _ladder_value(betas):
    """betas as the float64 vector set_ladder passes to the library."""
    b = _dense(betas, "betas", np.float64)
    if b.ndim != 1:
        raise ValueError("betas must be one-dimensional, not of shape %r" % (b.shape,))
    return b


class _OnModel(_Handle):
    """A sampler or estimator: a C object that points to its model.

    Subclasses give their C functions, bound once (_api: create, errmsg,
    set_int, set_double, set_ladder, set_proposal, swap_counts, stat), their
    kind enum,
    option lookup (_option) and stat enum.
    """

    _api = None
    _kinds = _stat_enum = None
    _exclusive = True

    def __init__(self, model, kind, options):
        if not isinstance(model, Model):
            raise TypeError("model must be an ebm.Model, not %r" % (model,))
        self._model = model
        self._kind = _enum_value(self._kinds, kind, "kind")
        self._p = self._create(model)
        self._options = {}
        # A new object needs no trial: if an option fails, the constructor
        # raises and the object is dropped.
        self._set(self._plan(options), trial=False)

    def _create(self, model):
        """A new C object of this kind on model (its handle)."""
        out = ctypes.c_void_p()
        # A failed create leaves its message in the model.
        with _using(model) as (mp,):
            _check(self._api.create(ctypes.byref(out), mp, int(self.kind)),
                   self._api.create.__name__, _model_errmsg, mp)
        return out.value

    # Read-only: the C object points to this model, which the Python object
    # keeps alive (another model put here would leave it to a freed one).
    model = property(lambda self: self._model, doc="The model (kept alive by this object).")
    kind = property(lambda self: self._kind, doc="The kind, an enum member.")

    def _h(self):
        if self.model.closed:
            raise ValueError("the model of this %s is closed" % type(self).__name__)
        return _Handle._h(self)

    def _call(self, fn, *args):
        """As Model._call; the model, which the C object uses, is held too."""
        return _held_call((self.model, self), fn, self._api.errmsg, args)

    # -- options --------------------------------------------------------------

    def set(self, **options):
        """Set options by name, all or none: every name and value is checked
        first (by the binding, then by the library on a scratch object of the
        same kind and model with this object's options), and only then are
        they applied; an error leaves every option as it was.

        ladder=[beta_0, ..., 1] sets the ladder of a tempering sampler or a
        PT estimator (set_ladder); proposal=(rows, flip_prob) the global
        moves' proposal (set_proposal)."""
        self._set(self._plan(options), trial=True)
        return self

    def set_ladder(self, betas):
        """Set the inverse temperatures of parallel tempering (tempering sampler,
        PT estimator): 2 to 1024 values in [0, 1], increasing, the last 1."""
        return self.set(ladder=betas)

    def set_proposal(self, rows, flip_prob):
        """Set the proposal of the global moves (option global_prob > 0;
        docs/global_moves.md): rows, visible rows (n_rows, n_visible) of
        the model's values (the training set), one chosen uniformly per
        move, each visible unit changed with probability flip_prob in
        (0, 1). The library copies the rows."""
        return self.set(proposal=(rows, flip_prob))

    @property
    def proposal(self):
        """The proposal set by set_proposal, (rows, flip_prob), or None."""
        return self._options.get("proposal")

    def _plan(self, options):
        """[(name, option id, C value)] of options, checked by the binding; the
        ladder and the proposal first (their setters allocate: they are the
        ones that can fail for want of memory once the values are known to
        be valid)."""
        plan = []
        for name, value in options.items():
            if name == "ladder":
                plan.insert(0, (name, None, _ladder_value(value)))
            elif name == "proposal":
                plan.insert(0, (name, None, _proposal_value(self.model, value)))
            else:
                plan.append((name, self._option(name), _option_value(name, value)))
        return plan

    def _set_one(self, p, item):
        """One (name, option, value) of a plan on the C object p; raises EbmError."""
        name, option, value = item
        api = self._api
        if name == "ladder":
            fn = api.set_ladder
            rc = fn(p, value.shape[0], value.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        elif name == "proposal":
            rows, ld, flip_prob = value
            fn = api.set_proposal
            rc = fn(p, rows.shape[0], _ptr(rows), ld, flip_prob)
        else:
            fn = api.set_double if isinstance(value, float) else api.set_int
            rc = fn(p, option, value)
        _check(rc, fn.__name__, api.errmsg, p)

    def _recorded(self, item):
        name, _, value = item
        if name == "proposal":
            rows, _, flip_prob = value
            return np.array(rows, _f32), flip_prob  # a copy, as the library keeps
        return [float(v) for v in value] if name == "ladder" else value

    def _trial(self, plan):
        """Apply this object's options, then plan, to a scratch C object of the
        same kind and model: raises the library's error if one fails."""
        replay = self._plan(self._options)
        with _using(self.model) as (mp,):
            p = self._create(self.model)
            try:
                for item in replay + plan:
                    self._set_one(p, item)
            finally:
                type(self)._destroy(p)

    def _set(self, plan, trial):
        if not plan:
            return
        done = []
        with _using(self.model, self) as (_, p):  # held from the trial to the last option
            if trial:
                self._trial(plan)
            try:
                for item in plan:
                    self._set_one(p, item)
                    done.append(item)
            except BaseException:
                # After the trial only an allocation can fail: restore what
                # this object had set before (an option never set keeps the
                # value just applied: the library has no getter for defaults).
                for name, _, _ in reversed(done):
                    if name in self._options:
                        self._set_one(p, self._plan({name: self._options[name]})[0])
                raise
        for item in plan:
            self._options[item[0]] = self._recorded(item)

    @property
    def ladder(self):
        """The ladder set by set_ladder (a list), or None."""
        return self._options.get("ladder")

    def swap_counts(self):
        """The replica exchanges of the last call (a sampler's step, an estimator's
        gradient), per adjacent pair of the ladder: (accepted, proposed), two
        int64 arrays of len(ladder) - 1."""
        n = len(self.ladder) - 1 if self.ladder is not None else 0
        acc, prop = np.zeros(n, np.int64), np.zeros(n, np.int64)
        i64 = ctypes.POINTER(ctypes.c_int64)
        self._call(self._api.swap_counts, n, acc.ctypes.data_as(i64), prop.ctypes.data_as(i64))
        return acc, prop

    @property
    def stats(self):
        """The statistics of the last call, by name ("tau_mean", "accept_rate", ...)."""
        stat = self._api.stat
        with _using(self.model, self) as (_, p):
            return {m.name.lower(): stat(p, int(m)) for m in self._stat_enum if m.name != "COUNT"}

    def __repr__(self):
        return "<ebm.%s %s%s>" % (type(self).__name__, self.kind.name.lower(),
                                  " closed" if self.closed else "")


def _unknown_option(what, name, enums):
    names = [m.name.lower() for e in enums for m in e if m.name != "SAMPLER_OPTION"]
    return TypeError("unknown %s option %r (one of %s)" % (what, name, ", ".join(names)))


# ---------------------------------------------------------------------------
# Sampler


class Sampler(_OnModel):
    """A transition kernel on a model's states, single or coupled (ebm_sampler_t).

    Sampler(model, kind="gibbs", **options): kind "gibbs", "mh_uniform",
    "langevin", "gibbs_langevin" or "tempering"; options by name (clamp_layers,
    coupling="blockwise"|"crn"|"maximal", langevin_steps, step_size, cosine,
    adjust_after, scale_by_variance, closed_form, iteration, precondition,
    row_offset, global_prob with proposal=(rows, flip_prob) (set_proposal:
    global moves from data rows, "gibbs" and "tempering"), and
    ladder=[beta_0, ..., 1] for "tempering", whose rows are chains of
    len(ladder) replicas, the last of each at beta = 1). The sampler
    keeps its model alive. Chains belong to the caller: step() and
    coupled_step() move float32 arrays in place.
    """

    _destroy = _C.ebm_sampler_destroy
    _api = types.SimpleNamespace(
        create=_C.ebm_sampler_create, errmsg=_C.ebm_sampler_errmsg,
        set_int=_C.ebm_sampler_set_int, set_double=_C.ebm_sampler_set_double,
        set_ladder=_C.ebm_sampler_set_ladder, set_proposal=_C.ebm_sampler_set_proposal,
        swap_counts=_C.ebm_sampler_swap_counts,
        stat=_C.ebm_sampler_stat)
    _kinds, _stat_enum = SamplerKind, SamplerStat

    def __init__(self, model, kind="gibbs", **options):
        super().__init__(model, kind, options)

    @staticmethod
    def _option(name):
        try:
            return int(SamplerOption[name.upper()])
        except KeyError:
            raise _unknown_option("sampler", name, (SamplerOption,)) from None

    def step(self, x, rng):
        """One transition of every row of the float32 chains x, in place; returns x."""
        x, ld = _writable(x, "x", self.model.state_width)
        self._call(_C.ebm_sampler_step, _generator(rng), x.shape[0], _ptr(x), ld)
        return x

    def coupled_step(self, x, y, rng):
        """x_t -> x_{t+1}, y_{t-1} -> y_t in place; returns a bool array: rows that met."""
        x, ldx = _writable(x, "x", self.model.state_width)
        y, ldy = _writable(y, "y", self.model.state_width)
        if y.shape[0] != x.shape[0]:
            raise ValueError("x has %d rows, y has %d" % (x.shape[0], y.shape[0]))
        if np.shares_memory(x, y):
            raise ValueError("x and y share memory")
        met = np.zeros(x.shape[0], np.uint8)
        self._call(_C.ebm_sampler_coupled_step, _generator(rng), x.shape[0], _ptr(x), ldx, _ptr(y),
                   ldy, _ptr(met))
        return met.astype(bool)

    def __reduce__(self):
        options = dict(self._options)
        options["iteration"] = int(self.stats["iteration"])
        return (_sampler, (self.model, self.kind, options))


def _sampler(model, kind, options):
    return Sampler(model, kind, **options)


# ---------------------------------------------------------------------------
# Estimator


class Estimator(_OnModel):
    """A gradient estimator (ebm_estimator_t): CD, PCD, UCD, UCD-LMI, GRBM modified
    CD, PT (PCD on parallel-tempering chains).

    Estimator(model, kind="ucd", **options): kind "cd", "pcd", "ucd",
    "ucd_lmi", "grbm_cd" or "pt" (with ladder=[beta_0, ..., 1]); options by
    name: ladder, k, max_steps, chains,
    marginalize ("none"|"even"|"odd"|"both"), positive ("auto"|"exact"|
    "mean_field"|"coupled"|"sampled"), sampler ("gibbs"|"langevin"|
    "gibbs_langevin"), burn_in, search_sweeps, mean_field_iters,
    mean_field_tol, step_limit, row_offset and chain_offset (the global
    numbers of the first data row and chain: data-parallel training,
    docs/distributed.md), and any sampler option (coupling, step_size,
    global_prob, ...), which goes to the estimator's samplers;
    proposal=(rows, flip_prob) (set_proposal) the global moves' proposal
    of the samplers that run the model's chains. The estimator keeps its
    model alive.
    """

    _destroy = _C.ebm_estimator_destroy
    _api = types.SimpleNamespace(
        create=_C.ebm_estimator_create, errmsg=_C.ebm_estimator_errmsg,
        set_int=_C.ebm_estimator_set_int, set_double=_C.ebm_estimator_set_double,
        set_ladder=_C.ebm_estimator_set_ladder, set_proposal=_C.ebm_estimator_set_proposal,
        swap_counts=_C.ebm_estimator_swap_counts,
        stat=_C.ebm_estimator_stat)
    _kinds, _stat_enum = EstimatorKind, EstimatorStat

    def __init__(self, model, kind="ucd", **options):
        super().__init__(model, kind, options)

    @staticmethod
    def _option(name):
        key = name.upper()
        if key in EstimatorOption.__members__ and key != "SAMPLER_OPTION":
            return int(EstimatorOption[key])
        if key in SamplerOption.__members__:
            return int(EstimatorOption.SAMPLER_OPTION) + int(SamplerOption[key])
        raise _unknown_option("estimator", name, (EstimatorOption, SamplerOption))

    def gradient(self, data, rng, out=None):
        """The estimate of (1/n) sum_r d log p(v_r)/dtheta over the visible rows data.

        Returns a float32 array of param_count in the parameter layout (the
        ascent direction), written into out if given. data is (n, n_visible)
        (full states are accepted: only layer 0 is read).
        """
        m = self.model
        data, ld = _readable(data, "data")
        if data.shape[1] not in (m.n_visible, m.state_width):
            raise ValueError("data has %d columns: expected %d visible columns" %
                             (data.shape[1], m.n_visible))
        out = _out_vector(out, m.param_count)
        self._call(_C.ebm_estimator_gradient, _generator(rng), data.shape[0], _ptr(data), ld,
                   _ptr(out))
        return out

    @property
    def num_chains(self):
        """The number of persistent chain rows (PCD: chains; PT: chains x replicas)."""
        with _using(self.model, self) as (_, p):
            return _C.ebm_estimator_num_chains(p)

    @property
    def chains(self):
        """A copy of the persistent chains (num_chains full states); assign to replace."""
        w = self.model.state_width
        # One hold for the count and the copy: the library writes as many rows
        # as the estimator has, which another thread could change in between.
        with _using(self.model, self):
            out = np.empty((self.num_chains, w), _f32)
            self._call(_C.ebm_estimator_get_chains, _ptr(out), w)
        return out

    @chains.setter
    def chains(self, x):
        w = self.model.state_width
        x, ld = _readable(np.zeros((0, w), _f32) if x is None else x, "chains", w)
        self._call(_C.ebm_estimator_set_chains, x.shape[0], _ptr(x), ld)

    def __reduce__(self):
        return (_estimator, (self.model, self.kind, dict(self._options), self.chains))


def _estimator(model, kind, options, chains):
    e = Estimator(model, kind, **options)
    if len(chains):
        e.chains = chains
    return e
