"""The binding against the header and the library.

Three independent sources must agree: the library's export list
(tests/abi/symbols.txt), cffi's parse of the preprocessed header, and the
package's generated tables (ebm._abi) with the ctypes signatures ebm._lib
built from them.
"""
import ast
import ctypes
import os
import re
import subprocess
import sys

import cffi
import pytest

import ebm
from ebm import _abi, _lib

HANDLE_TYPEDEFS = """
typedef struct ebm_model ebm_model_t;
typedef struct ebm_rng ebm_rng_t;
typedef struct ebm_sampler ebm_sampler_t;
typedef struct ebm_estimator ebm_estimator_t;
"""


# ---------------------------------------------------------------------------
# Sources


def read_symbols(repo):
    with open(os.path.join(repo, "tests", "abi", "symbols.txt")) as f:
        names = [line.strip() for line in f if line.strip()]
    return [n.split("@")[0] for n in names]


def declared_names():
    return [_lib.parse(d)[0] for d in _abi.DECLARATIONS]


@pytest.fixture(scope="module")
def symbols(repo):
    names = read_symbols(repo)
    assert len(names) == len(set(names)) > 50
    return names


@pytest.fixture(scope="module")
def header_text(repo):
    with open(os.path.join(repo, "include", "ebm.h")) as f:
        return f.read()


@pytest.fixture(scope="module")
def preprocessed(repo):
    """`cc -E -P -DEBM_API= include/ebm.h`: the header as plain C declarations."""
    header = os.path.join(repo, "include", "ebm.h")
    proc = subprocess.run(["cc", "-E", "-P", "-DEBM_API=", header], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, "cc -E failed:\n" + proc.stderr
    assert "ebm_model_create" in proc.stdout
    return proc.stdout


@pytest.fixture(scope="module")
def header_ffi(preprocessed):
    """(ffi, lib): cffi's parse of the header, and the library opened with it."""
    ffi = cffi.FFI()
    ffi.cdef(preprocessed)  # must parse: the header promises FFI-friendly C
    return ffi, ffi.dlopen(ebm.library_path)


@pytest.fixture(scope="module")
def package_ffi():
    """cffi's parse of the package's own DECLARATIONS."""
    ffi = cffi.FFI()
    ffi.cdef(HANDLE_TYPEDEFS + "".join(d + ";\n" for d in _abi.DECLARATIONS))
    return ffi, ffi.dlopen(ebm.library_path)


def function_names(lib):
    """The function names a cffi ABI-mode lib declares (constants excluded)."""
    return {n for n in dir(lib) if n.startswith("ebm_")}


# ---------------------------------------------------------------------------
# Symbols and bindings


def binding_problems(symbols, bound, declarations, library):
    """Everything wrong between the exported symbols, the bound functions,
    the declarations and the loaded library, as a list of messages."""
    problems = []
    symbols, declared = set(symbols), set(declarations)
    for name in sorted(symbols - set(bound)):
        problems.append("%s is exported but not bound" % name)
    for name in sorted(set(bound) - symbols):
        problems.append("%s is bound but not in the export list" % name)
    for name in sorted(declared - symbols):
        problems.append("%s is declared but not exported" % name)
    for name in sorted(symbols - declared):
        problems.append("%s is exported but not declared" % name)
    for name in sorted(symbols | set(bound)):
        fn = getattr(library, name, None)
        if fn is None or not callable(fn):
            problems.append("%s is not callable on ebm.lib" % name)
        elif getattr(fn, "argtypes", None) is None or not hasattr(fn, "restype"):
            problems.append("%s has no ctypes signature" % name)
    return problems


def test_every_symbol_bound_and_every_declaration_exported(symbols):
    assert binding_problems(symbols, _lib.bound, declared_names(), ebm.lib) == []
    assert sorted(_lib.bound) == sorted(declared_names())
    assert ebm.lib is _lib.lib


def test_binding_check_detects_a_missing_binding(symbols):
    """The broken twin: the check above must see a symbol nobody bound, a
    declaration nobody exports, and a name the library lacks."""
    problems = binding_problems(symbols + ["ebm_fake_function"], _lib.bound, declared_names(),
                                ebm.lib)
    assert "ebm_fake_function is exported but not bound" in problems
    assert "ebm_fake_function is not callable on ebm.lib" in problems
    bound = dict(_lib.bound)
    del bound["ebm_model_energy"]
    problems = binding_problems(symbols, bound, declared_names(), ebm.lib)
    assert problems == ["ebm_model_energy is exported but not bound"]
    problems = binding_problems([s for s in symbols if s != "ebm_rng_create"], _lib.bound,
                                declared_names(), ebm.lib)
    assert "ebm_rng_create is declared but not exported" in problems


def test_exported_symbols_match_the_library(symbols):
    """symbols.txt is the library's actual export list (nm, when available)."""
    try:
        proc = subprocess.run(["nm", "-D", "--defined-only", ebm.library_path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
    except FileNotFoundError:
        pytest.skip("nm is not installed")
    assert proc.returncode == 0, proc.stderr
    exported = {line.split()[2].split("@")[0] for line in proc.stdout.splitlines()
                if len(line.split()) == 3 and line.split()[1] == "T"}
    assert exported == set(symbols)


# ---------------------------------------------------------------------------
# Function types: cffi's parse of the header against the package


def test_header_parses_with_cffi(header_ffi, symbols):
    ffi, lib = header_ffi
    assert function_names(lib) == set(symbols)


def canonical(ffi, t):
    """A cffi ctype with typedefs resolved to what the ABI sees: integers by
    size and signedness (int64_t and long alike), char apart from bytes."""
    if t.kind == "function":
        return ("function", canonical(ffi, t.result),
                tuple(canonical(ffi, a) for a in t.args), t.ellipsis)
    if t.kind == "pointer":
        return ("pointer", canonical(ffi, t.item))
    if t.kind in ("struct", "union"):
        return (t.kind, t.cname)
    if t.kind == "void":
        return ("void",)
    if t.kind == "enum":
        return ("enum", t.cname)
    assert t.kind == "primitive", t
    if t.cname == "char":
        return ("char",)
    if t.cname in ("float", "double", "long double"):
        return ("float", ffi.sizeof(t))
    return ("int", ffi.sizeof(t), int(ffi.cast(t, -1)) < 0)


def const_pattern(ffi, name):
    """The const qualifiers along each argument's pointer chain, from cffi's
    parsed model (the runtime ctypes drop const)."""
    fn = ffi._parser._declarations["function " + name][0]

    def quals(t):
        out = []
        while hasattr(t, "totype"):
            out.append(bool(getattr(t, "quals", 0) & 1))
            t = t.totype
        return tuple(out)
    return tuple(quals(a) for a in fn.args), quals(fn.result)


def test_signatures_match_the_header(header_ffi, package_ffi):
    hffi, hlib = header_ffi
    pffi, plib = package_ffi
    names = function_names(hlib)
    assert names == function_names(plib)
    assert names == set(declared_names())
    for name in sorted(names):
        h = hffi.typeof(getattr(hlib, name))
        p = pffi.typeof(getattr(plib, name))
        assert h.kind == p.kind == "function", name
        assert not h.ellipsis, "%s is variadic" % name
        assert len(h.args) == len(p.args), name
        assert canonical(hffi, h) == canonical(pffi, p), name
        assert const_pattern(hffi, name) == const_pattern(pffi, name), name


def test_signature_check_detects_a_changed_type(header_ffi):
    """The broken twin of the comparison: int vs int64_t, a lost const and
    float vs double are all differences."""
    hffi, hlib = header_ffi
    decls = [d.replace("int64_t l", "int l") if d.startswith("int64_t ebm_model_layer_size")
             else d.replace("const float *x", "float *x") if "ebm_model_energy(" in d
             else d.replace("float alpha", "double alpha") for d in _abi.DECLARATIONS]
    ffi = cffi.FFI()
    ffi.cdef(HANDLE_TYPEDEFS + "".join(d + ";\n" for d in decls))
    lib = ffi.dlopen(ebm.library_path)
    for name in ("ebm_model_layer_size", "ebm_model_axpy_params"):
        assert canonical(hffi, hffi.typeof(getattr(hlib, name))) != \
            canonical(ffi, ffi.typeof(getattr(lib, name))), name
    assert const_pattern(hffi, "ebm_model_energy") != const_pattern(ffi, "ebm_model_energy")
    assert canonical(hffi, hffi.typeof(hlib.ebm_model_init)) == \
        canonical(ffi, ffi.typeof(lib.ebm_model_init))


def _ctypes_of(t, is_result):
    """The ctypes type a cffi type must be bound as."""
    if t.kind == "pointer":
        return ctypes.c_char_p if is_result else ctypes.c_void_p
    if t.kind == "void":
        return None
    assert t.kind == "primitive", t
    return {
        "int": ctypes.c_int, "long": ctypes.c_long, "unsigned long": ctypes.c_ulong,
        "unsigned int": ctypes.c_uint, "float": ctypes.c_float, "double": ctypes.c_double,
        "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64, "uint32_t": ctypes.c_uint32,
        "size_t": ctypes.c_size_t,
    }[t.cname]


def test_ctypes_signatures_match_the_header(header_ffi):
    """ebm.lib's restype/argtypes have the header's sizes and signedness."""
    ffi, lib = header_ffi
    for name in sorted(function_names(lib)):
        t = ffi.typeof(getattr(lib, name))
        fn = getattr(ebm.lib, name)
        want_res = _ctypes_of(t.result, True)
        if t.result.kind == "pointer":
            assert t.result.cname == "char *", name  # the only pointer result
        assert fn.restype is want_res, name
        want = [_ctypes_of(a, False) for a in t.args]
        assert list(fn.argtypes) == want, name
        for a, c in zip(t.args, fn.argtypes):
            assert ffi.sizeof(a) == ctypes.sizeof(c), name


# ---------------------------------------------------------------------------
# Enums


def enum_tags(preprocessed):
    return sorted(set(re.findall(r"\benum\s+(ebm_\w+)\s*\{", preprocessed)))


def test_every_enum_has_a_class(header_ffi, preprocessed):
    tags = enum_tags(preprocessed)
    assert len(tags) >= 13
    assert sorted(tag for _, tag, _ in _abi.ENUMS) == tags
    assert len({cls for cls, _, _ in _abi.ENUMS}) == len(tags)


@pytest.mark.parametrize("cls,tag,prefix", _abi.ENUMS, ids=[e[1] for e in _abi.ENUMS])
def test_enum_values(header_ffi, cls, tag, prefix):
    ffi, _ = header_ffi
    c = ffi.typeof("enum %s" % tag).relements  # C name -> value
    assert len(cls.__members__) == len(c)
    for cname, value in c.items():
        assert cname.startswith(prefix), cname
        member = cls.__members__[cname[len(prefix):]]
        assert int(member) == value, cname
    # and the other way round: every Python member is a C constant
    for pname, member in cls.__members__.items():
        assert c[prefix + pname] == int(member)


def test_enums_exported_by_the_package():
    for cls, _, _ in _abi.ENUMS:
        assert getattr(ebm, cls.__name__) is cls


# ---------------------------------------------------------------------------
# #define constants and the runtime


def _eval(expr, env):
    """Value of a header #define: a literal or + - * of earlier constants."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult):
            a, b = ev(node.left), ev(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[type(node.op)]
        raise ValueError("cannot evaluate %r" % expr)
    return ev(ast.parse(expr.strip(), mode="eval"))


def header_defines(text):
    out = {}
    for m in re.finditer(r"^#define\s+(EBM_\w+)[ \t]+(\S.*?)\s*$", text, flags=re.M):
        name, value = m.groups()
        if name in ("EBM_H", "EBM_API"):
            continue
        out[name] = _eval(value, out)
    return out


def test_defines_match(header_text):
    defines = header_defines(header_text)
    assert "EBM_VERSION_NUMBER" in defines and "EBM_MAX_LAYERS" in defines
    assert defines == _abi.CONSTANTS
    v = defines
    assert v["EBM_VERSION_NUMBER"] == (v["EBM_VERSION_MAJOR"] * 10000 +
                                      v["EBM_VERSION_MINOR"] * 100 + v["EBM_VERSION_PATCH"])
    assert v["EBM_VERSION_STRING"] == "%d.%d.%d" % (
        v["EBM_VERSION_MAJOR"], v["EBM_VERSION_MINOR"], v["EBM_VERSION_PATCH"])


def test_runtime_agrees_with_constants():
    c = _abi.CONSTANTS
    assert ebm.lib.ebm_max_layers() == ebm.MAX_LAYERS == c["EBM_MAX_LAYERS"] == 32
    assert ebm.lib.ebm_rng_state_words() == ebm.RNG_STATE_WORDS == c["EBM_RNG_STATE_WORDS"]
    assert ebm.lib.ebm_abi_version() == c["EBM_ABI_VERSION"]
    assert ebm.lib.ebm_version_number() == c["EBM_VERSION_NUMBER"]
    assert ebm.version() == c["EBM_VERSION_STRING"]
    assert ebm.lib.ebm_version_string() == c["EBM_VERSION_STRING"].encode()
    assert ebm.__version__ == c["EBM_VERSION_STRING"]
    assert ebm.library_path.endswith("libebm.so.%d" % c["EBM_ABI_VERSION"])


def test_error_names_match_status():
    for member in ebm.Status:
        assert ebm.lib.ebm_error_name(int(member)).decode() == "EBM_" + member.name
        assert ebm.lib.ebm_strerror(int(member))


# ---------------------------------------------------------------------------
# The generated module is current


def test_gen_abi_check(repo):
    tool = os.path.join(repo, "python", "tools", "gen_abi.py")
    proc = subprocess.run([sys.executable, tool, "--check"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode == 0, proc.stdout
    # The package under test (maybe an installed copy) holds the same tables.
    proc = subprocess.run([sys.executable, tool, "--check", "--output", _abi.__file__],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stdout


def test_gen_abi_check_detects_a_stale_module(repo, tmp_path):
    """The broken twin of --check: a changed _abi.py is reported."""
    tool = os.path.join(repo, "python", "tools", "gen_abi.py")
    with open(os.path.join(repo, "python", "ebm", "_abi.py")) as f:
        text = f.read()
    stale = tmp_path / "_abi.py"
    stale.write_text(text.replace("EBM_MAX_LAYERS': 32", "EBM_MAX_LAYERS': 31"))
    proc = subprocess.run([sys.executable, tool, "--check", "--output", str(stale)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    assert proc.returncode == 1, proc.stdout
