"""The compiled kernels of the default text path (``csrc/``), built into ``curator_text._native``
when the package is installed, so a machine's first run compiles nothing. Metadata:
pyproject.toml."""

from glob import glob

from setuptools import Extension, setup

setup(ext_modules=[Extension("curator_text._native", sorted(glob("csrc/*.c")),
                             depends=sorted(glob("csrc/*.h")),
                             extra_compile_args=["-O3", "-std=c11"])])
