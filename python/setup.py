"""Build step of the ebm package; the metadata is in pyproject.toml.

The package is pure Python (ctypes), but it ships the shared library it
binds: build_py copies the library into the build's ebm/ directory as
ebm/libebm.so.0 (package data), so that an installed package loads the
library it was installed with. The library comes from

  - $EBM_SOURCE_LIB, if set: an absolute path to a built libebm.so (symlinks
    are resolved; pip runs this file in another directory, so a relative
    path would be ambiguous), or
  - ../lib/libebm.so.0 beside this directory (the repository's lib/, built
    by `make` at the repository root).

Nothing is compiled here. The wheel is tagged py3-none-<platform>: it holds
a native library, but no Python extension module.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py as _build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LIB_NAME = "libebm.so.0"
REPO_LIB = os.path.join(os.path.dirname(HERE), "lib", LIB_NAME)


def source_library():
    """The real file of the library to ship; exits with a message if missing."""
    env = os.environ.get("EBM_SOURCE_LIB")
    if env:
        if not os.path.isabs(os.path.expanduser(env)):
            raise SystemExit(f"error: EBM_SOURCE_LIB={env!r} must be an absolute path")
        path = os.path.realpath(os.path.expanduser(env))
        if not os.path.isfile(path):
            raise SystemExit(f"error: EBM_SOURCE_LIB={env!r} is not a file (resolved: {path})")
        where = f"EBM_SOURCE_LIB={env!r}"
    else:
        path = os.path.realpath(REPO_LIB)
        if not os.path.isfile(path):
            raise SystemExit(
                f"error: the shared library {REPO_LIB} is missing.\n"
                "Build it first: run `make` at the root of the libebm repository,\n"
                "or set EBM_SOURCE_LIB to the absolute path of a built libebm.so.0\n"
                "(needed when this directory is not inside the repository)."
            )
        where = REPO_LIB
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise SystemExit(f"error: {path} ({where}) is not a shared library (no ELF header)")
    return path


class build_py(_build_py):
    """build_py, then the library into <build_lib>/ebm/libebm.so.0."""

    def run(self):
        super().run()
        src = source_library()
        dst_dir = os.path.join(self.build_lib, "ebm")
        dst = os.path.join(dst_dir, LIB_NAME)
        self.mkpath(dst_dir)
        self.announce(f"copying {src} -> {dst}", level=2)
        if not self.dry_run:
            # Always copied (not only when newer): the library may have been
            # rebuilt with other flags, or EBM_SOURCE_LIB may name an older one.
            if os.path.lexists(dst):
                os.remove(dst)
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o755)

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        lib = os.path.join(self.build_lib, "ebm", LIB_NAME)
        return outputs if lib in outputs else outputs + [lib]


cmdclass = {"build_py": build_py}

try:  # setuptools >= 70.1 has its own bdist_wheel; older ones use wheel's
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:
        _bdist_wheel = None

if _bdist_wheel is not None:

    class bdist_wheel(_bdist_wheel):
        """A platform wheel (it holds a native library) for any Python 3."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    cmdclass["bdist_wheel"] = bdist_wheel

# The package and its data are here rather than in pyproject.toml's
# [tool.setuptools], which setuptools < 67 calls beta and warns about.
setup(
    packages=["ebm"],
    package_data={"ebm": [LIB_NAME]},  # put there by build_py, not in the sources
    zip_safe=False,
    cmdclass=cmdclass,
)
