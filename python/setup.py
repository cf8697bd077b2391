"""Builds libcairn_py.so, the C library the package loads with cffi (ABI mode),
from the core and simulator sources, into the package: cairn/libcairn_py.so
(cairn/_ffi.py looks next to itself).

Flags as python/CMakeLists.txt: C99, -O2, position independent, the project's
warnings, no sanitizers. Not -Werror: a user's compiler may warn where the
project's does not, and that must not stop an install. CFLAGS and LDFLAGS from
the environment are added.

The C sources live outside this folder (src/, sim/, include/ at the top of the
repository): an in-tree build (`pip install ./python`, pip >= 21.3) takes them
from there; an sdist carries a copy in csrc/ (see SdistWithCSources).

The library does not use Python's C API, so the wheel is tagged py3-none-<platform>:
one wheel per platform serves every Python 3.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
LIB_NAME = "libcairn_py.so"
C_DIRS = ("src", "sim", "include")
C_FLAGS = ["-std=c99", "-O2", "-fPIC", "-Wall", "-Wextra", "-Wconversion", "-Wshadow"]


def c_root() -> pathlib.Path:
    """Where src/, sim/ and include/ are: csrc/ in an unpacked sdist, else the
    repository around this folder."""
    for root in (HERE / "csrc", HERE.parent):
        if all((root / d).is_dir() for d in C_DIRS) and (root / "include" / "cairn.h").is_file():
            return root
    raise SystemExit(
        "cairn: the C sources (src/, sim/, include/) are not here. Build from the cairn "
        "repository (pip install <repo>/python, pip >= 21.3 builds in place) or from an "
        "sdist made there (it carries them in csrc/)."
    )


def c_files(root: pathlib.Path, pattern: str) -> list[str]:
    return sorted(str(p) for d in ("src", "sim") for p in (root / d).glob(pattern))


class BuildSharedLibrary(build_ext):
    """build_ext for a plain shared library: the sources are found at build
    time (not listed in setup(), so an sdist never reaches outside this
    folder), the file is cairn/libcairn_py.so, and Python's own compile flags
    are replaced by the project's."""

    def build_extension(self, ext):
        root = c_root()
        ext.sources = [str(HERE / "layout.c")] + c_files(root, "*.c")
        ext.include_dirs = [str(root / "include"), str(root / "sim")]
        ext.depends = c_files(root, "*.h") + sorted(str(p) for p in (root / "include").glob("*.h"))
        ext.extra_compile_args = C_FLAGS + shlex.split(os.environ.get("CFLAGS", ""))
        super().build_extension(ext)

    def build_extensions(self):
        if self.compiler.compiler_type == "unix" and sys.platform != "darwin":
            cc = self.compiler.compiler_so[0]
            ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
            self.compiler.set_executables(compiler_so=[cc], linker_so=[cc, "-shared"] + ldflags)
        super().build_extensions()

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")[:-1], LIB_NAME)

    def get_export_symbols(self, ext):
        return []  # no PyInit_: not a Python extension module


class WheelForAnyPython3(bdist_wheel):
    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class SdistWithCSources(sdist):
    """The sdist carries the C sources (and the license) in csrc/, so a wheel
    builds from it anywhere."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = c_root()
        dest = pathlib.Path(base_dir) / "csrc"
        for d in C_DIRS:
            (dest / d).mkdir(parents=True, exist_ok=True)
            for src in sorted((root / d).glob("*.[ch]")):
                shutil.copy2(src, dest / d / src.name)
        if (root / "LICENSE").is_file():
            shutil.copy2(root / "LICENSE", dest / "LICENSE")


setup(
    ext_modules=[Extension("cairn.libcairn_py", sources=["layout.c"])],
    cmdclass={"build_ext": BuildSharedLibrary, "bdist_wheel": WheelForAnyPython3,
              "sdist": SdistWithCSources},
)
