"""Generator: libebm's random generator (Philox4x32-10, keyed by (seed, stream))."""
import ctypes
import operator

import numpy as np

from ._arrays import _check_int, _f32, _ptr, _seed
from ._errors import _check, _fail
from ._handle import _Handle, _held_call, _using
from ._lib import check_range as _check_range
from ._lib import checked as _C

RNG_STATE_WORDS = _C.ebm_rng_state_words()


class Generator(_Handle):
    """A libebm random generator (Philox4x32-10, keyed by (seed, stream)).

    Draws are bit-identical with the C library's for the same seed, stream
    and calls. The state can be read and restored exactly (.state).
    """

    _destroy = _C.ebm_rng_destroy
    _exclusive = True

    def __init__(self, seed=0, stream=0):
        seed, stream = _seed(seed, "seed"), _seed(stream, "stream")
        out = ctypes.c_void_p()
        rc = _C.ebm_rng_create(ctypes.byref(out), seed, stream)
        if rc < 0:
            _fail(rc, "ebm_rng_create", "seed %d, stream %d" % (seed, stream))
        self._p = out.value

    @classmethod
    def _adopt(cls, p):
        g = cls.__new__(cls)
        g._p = p
        return g

    def _call(self, fn, *args):
        """fn (a bound C function) on this generator's handle and args, held for the call."""
        return _held_call((self,), fn, _C.ebm_rng_errmsg, args)

    def derive(self, index):
        """The child generator number index; this generator does not move."""
        index = _seed(index, "index")
        out = ctypes.c_void_p()
        with _using(self) as (p,):
            _check(_C.ebm_rng_derive(ctypes.byref(out), p, index), _C.ebm_rng_derive.__name__,
                   _C.ebm_rng_errmsg, p)
        return Generator._adopt(out.value)

    @property
    def state(self):
        """The state as RNG_STATE_WORDS uint64 words (a copy); assign to restore it."""
        s = np.empty(RNG_STATE_WORDS, np.uint64)
        self._call(_C.ebm_rng_get_state, _ptr(s))
        return s

    @state.setter
    def state(self, value):
        if isinstance(value, np.ndarray) and (value.ndim != 1 or value.dtype.kind not in "iu"):
            raise ValueError("state must be %d integer words, not %s of %s" %
                             (RNG_STATE_WORDS, value.shape, value.dtype))
        # Word by word as Python ints (a JSON checkpoint's too), each checked:
        # numpy would make -1 the word 2^64 - 1.
        try:
            words = [operator.index(w) for w in value]
        except TypeError as exc:
            raise ValueError("state must be %d integer words: %s" %
                             (RNG_STATE_WORDS, exc)) from None
        if len(words) != RNG_STATE_WORDS:
            raise ValueError("state must be %d integer words, not %d" % (RNG_STATE_WORDS,
                                                                          len(words)))
        for i, w in enumerate(words):
            _check_range(w, (0, (1 << 64) - 1), "state[%d]" % i)
        s = np.array(words, np.uint64)
        self._call(_C.ebm_rng_set_state, _ptr(s))

    def _fill(self, fn, n):
        n = _check_int(n, "n")
        out = np.empty(max(n, 0), _f32)
        self._call(fn, n, _ptr(out))
        return out

    def uniform(self, n):
        """n float32 uniforms in [0, 1) (24 random bits each)."""
        return self._fill(_C.ebm_rng_uniform, n)

    def normal(self, n):
        """n float32 standard normals."""
        return self._fill(_C.ebm_rng_normal, n)

    def __reduce__(self):
        return (_generator_from_state, (self.state,))

    def __repr__(self):
        return "<ebm.Generator%s>" % (" closed" if self.closed else "")


def _generator_from_state(state):
    g = Generator(0, 0)
    g.state = state
    return g


def _generator(rng):
    """rng as a Generator: a Generator, or an int seed (stream 0). Callers
    pass the object itself to _call, which holds it for the C call: a
    Generator made here from a seed is freed with its last reference, so
    `_generator(rng)._h()` would pass a freed one."""
    if isinstance(rng, Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return Generator(int(rng))
    raise TypeError("rng must be an ebm.Generator or an integer seed, not %r" % (rng,))

