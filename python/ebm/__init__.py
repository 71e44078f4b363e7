"""libebm for Python: restricted and deep Boltzmann machines and GRBMs.

A thin, complete layer over the C library (ctypes): every exported function
is reachable, through the objects below or as ebm.lib.<name> with ctypes
signatures. Errors raise EbmError. See python/README.md.

Modules: _lib (the library, its functions bound once), _abi (the header's
declarations and enums), _errors, _arrays (argument marshalling), _handle
(C object lifetimes), _generator, _model, _chains (samplers, estimators),
_threads (the library's threads),
sklearn (scikit-learn estimators).

    import ebm
    m = ebm.RBM(64, 16)
    m.init(ebm.Generator(1), scheme="gaussian", scale=0.1)
    est = ebm.Estimator(m, "ucd", k=1)
    g = est.gradient(data, ebm.Generator(2))
"""
from ._abi import (Coupling, EstimatorKind, EstimatorOption, EstimatorStat, InitScheme,
                   Marginalize, ParamKind, PositivePhase, SamplerKind, SamplerOption,
                   SamplerStat, Status, Units)
from ._chains import Estimator, Sampler
from ._errors import EbmError, EbmIOError, EbmMemoryError, EbmValueError
from ._generator import RNG_STATE_WORDS, Generator
from ._lib import lib, version
from ._lib import path as library_path
from ._model import DBM, GRBM, MAX_LAYERS, RBM, Model, from_bytes, load
from ._threads import get_num_threads, set_num_threads

__version__ = "0.1.0"

__all__ = [
    "Model", "Sampler", "Estimator", "Generator", "RBM", "DBM", "GRBM", "load", "from_bytes",
    "EbmError", "EbmValueError", "EbmMemoryError", "EbmIOError", "version", "lib",
    "library_path", "MAX_LAYERS", "RNG_STATE_WORDS", "set_num_threads", "get_num_threads",
    "Status", "Units", "ParamKind", "InitScheme", "SamplerKind", "Coupling", "SamplerOption",
    "SamplerStat", "EstimatorKind", "PositivePhase", "Marginalize", "EstimatorOption",
    "EstimatorStat",
]
