"""The compiled kernels of the default text path (``src/curator_text/_native.c``), built when
the package is installed, so a machine's first run compiles nothing. Metadata: pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("curator_text._native", ["src/curator_text/_native.c"],
                             extra_compile_args=["-O3", "-std=c11"])])
