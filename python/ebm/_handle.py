"""_Handle: the lifetime of one C object, and calls that hold it.

Every object of the package that owns a C handle (Generator, Model,
Sampler, Estimator) is a _Handle: freed once, by close(), `with` or garbage
collection, never while a call of another thread still uses it.
"""
import contextlib
import threading

from ._errors import _check

# Handles


# Guards every handle's count of calls in flight (_Handle._users).
_USE_LOCK = threading.Lock()


class _Handle:
    """Owns one C handle: freed once, by close(), `with` or garbage collection.

    Calls that pass the handle to the library hold it (_using) for the call:
    ctypes releases the GIL, so another thread may close() meanwhile; the
    object is then closed at once (calls after it raise ValueError) and freed
    when the last call in flight returns. The C library lets one thread at a
    time use a generator, sampler or estimator (their calls move state and
    grow scratch buffers): for those (_exclusive) a hold also takes the
    object's lock, so that calls from several threads run one after another
    instead of corrupting the handle. Model calls are not serialised: the
    library lets const calls on one model run at once."""

    _destroy = None  # the C destructor
    _exclusive = False  # calls take _lock (above)
    _p = None
    _lock = None  # made by the first hold of an _exclusive handle
    _users = 0  # calls in flight
    _closing = False  # close() was called while calls were in flight

    def close(self):
        """Close the object: calls after this raise ValueError. The C object is
        freed now, or when the calls other threads have in flight return. Safe
        to call more than once."""
        with _USE_LOCK:
            if self._users > 0:
                self._closing = True
                return
            p, self._p = self._p, None
        if p is not None and self._destroy is not None:
            type(self)._destroy(p)

    @property
    def closed(self):
        return self._p is None or self._closing

    def _h(self):
        """The handle, for a call the caller holds it for (_using)."""
        if self.closed:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._p

    def _hold(self):
        with _USE_LOCK:
            p = self._h()
            self._users += 1
            if self._exclusive and self._lock is None:
                self._lock = threading.RLock()  # reentrant: a held call may hold it again
            lock = self._lock
        if lock is not None:
            lock.acquire()  # outside _USE_LOCK: the wait may be a whole call of another thread
        return p

    def _release(self):
        if self._lock is not None:
            self._lock.release()
        with _USE_LOCK:
            self._users -= 1
            if self._users > 0 or not self._closing:
                return
            p, self._p, self._closing = self._p, None, False
        if self._destroy is not None:
            type(self)._destroy(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


@contextlib.contextmanager
def _using(*handles):
    """Holds each handle for the block (none is freed before it ends) and
    gives their pointers; raises ValueError if one is closed."""
    held = []
    try:
        for h in handles:
            h._hold()
            held.append(h)
        yield [h._p for h in handles]
    finally:
        for h in reversed(held):
            h._release()


def _held_call(handles, fn, errmsg, args):
    """fn(the last of handles' pointer, *args), checked (_check) with errmsg
    (an error names fn.__name__, the C function), with handles and each
    _Handle among args (a generator, passed as its pointer) held for the
    call."""
    with _using(*handles, *(a for a in args if isinstance(a, _Handle))) as ps:
        p = ps[len(handles) - 1]
        rc = fn(p, *(a._p if isinstance(a, _Handle) else a for a in args))
        return _check(rc, fn.__name__, errmsg, p)

