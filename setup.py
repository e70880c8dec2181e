"""Build the compiled cores of pegasos.

Only the extension modules are declared here; the package metadata lives in
pyproject.toml.  Set PEGASOS_CYTHON_DEBUG=1 to compile with bounds and
wrap-around checks (slower, used to hunt memory errors).
"""
import os

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
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
)

extensions = [
    Extension("pegasos._svmlight", ["csrc/_svmlight.pyx"], **common),
    Extension("pegasos._core", ["csrc/_core.pyx"], **common),
    Extension("pegasos._kernel", ["csrc/_kernel.pyx"], **common),
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
