"""Build the compiled cores of pegasos.

Only the extension modules are declared here; the package metadata lives in
pyproject.toml.  Set PEGASOS_CYTHON_DEBUG=1 to compile with bounds and
wrap-around checks (slower, used to hunt memory errors).

The solver core (_core) is compiled with OpenMP (-fopenmp) when the C compiler
accepts it, for the threaded mini-batch step; without it (or with
PEGASOS_NO_OPENMP=1) the same code builds and runs on one thread.
"""
import os
import shlex
import subprocess
import sysconfig
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("PEGASOS_CYTHON_DEBUG", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
}

common = dict(
    include_dirs=[numpy.get_include(), "csrc"],
    depends=["csrc/prefetch.h", "csrc/warm.h", "csrc/warm.pxi"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
)


def openmp_flags():
    """["-fopenmp"] if the C compiler builds and links an OpenMP program, else []."""
    if os.environ.get("PEGASOS_NO_OPENMP", "") not in ("", "0"):
        return []
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            done = subprocess.run(cc + ["-fopenmp", src, "-o", os.path.join(tmp, "probe")],
                                  capture_output=True)
        except OSError:
            return []
    return ["-fopenmp"] if done.returncode == 0 else []


OPENMP = openmp_flags()
# -pthread: the helper thread of the training loop (csrc/warm.h)
THREADS = [] if os.name == "nt" else ["-pthread"]
core = dict(common, extra_compile_args=common["extra_compile_args"] + OPENMP + THREADS,
            extra_link_args=OPENMP + THREADS)
dual = dict(common, extra_compile_args=common["extra_compile_args"] + THREADS, extra_link_args=THREADS)

extensions = [
    Extension("pegasos._svmlight", ["csrc/_svmlight.pyx"], **common),
    Extension("pegasos._core", ["csrc/_core.pyx"], **core),
    Extension("pegasos._kernel", ["csrc/_kernel.pyx"], **common),
    Extension("pegasos._dual", ["csrc/_dual.pyx"], **dual),
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
