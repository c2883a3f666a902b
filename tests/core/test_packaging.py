"""Packaging (issue 20): a modality wheel declares its curator-core bounds, classifiers, project
URLs and the Apache-2.0 license, and ships the LICENSE file. Builds offline from uv's cache."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _build(package: str, out: Path, *flags: str) -> None:
    """``uv build`` of a workspace package into ``out``, offline (skips without uv or without
    the build backend in uv's cache)."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    proc = subprocess.run([uv, "build", "--offline", *flags, "--package", package, "-o",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode and "offline" in proc.stderr.lower():
        pytest.skip(f"the build backend is not in uv's cache: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr


def test_image_wheel_metadata_and_license(tmp_path):
    _build("curator-image", tmp_path, "--wheel")
    (wheel,) = tmp_path.glob("curator_image-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        info = next(n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = zf.read(f"{info}/METADATA").decode()
        license_text = zf.read(f"{info}/licenses/LICENSE").decode()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    lines = meta.splitlines()
    assert "License-Expression: Apache-2.0" in lines and "License-File: LICENSE" in lines
    assert "Requires-Dist: curator-core<0.2,>=0.1" in lines
    assert any(line.startswith("Classifier: Programming Language :: Python :: 3.11")
               for line in lines)
    assert any(line.startswith("Project-URL: Homepage, ") for line in lines)
    readme = meta.split("\n\n", 1)[1]
    assert "## Install" in readme and "## A pipeline" in readme


def test_text_wheel_ships_its_compiled_kernels_and_the_sdist_their_source(tmp_path):
    """curator-text's kernels are C built at install time: the wheel holds the extension (and
    the package data), the source distribution holds the C file to build it from."""
    _build("curator-text", tmp_path)
    (wheel,) = tmp_path.glob("curator_text-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert any(n.startswith("curator_text/_native.") and n.endswith(".so") for n in names)
    assert "curator_text/data/code_meta.csv" in names
    assert not any(n.endswith((".c", ".h")) for n in names)
    (sdist,) = tmp_path.glob("curator_text-*.tar.gz")
    with tarfile.open(sdist) as tf:
        members = tf.getnames()
    assert any(n.endswith("/csrc/module.c") for n in members)
    assert any(n.endswith("/csrc/native.h") for n in members)
    assert any(n.endswith("/setup.py") for n in members)
    assert not any(n.endswith(".so") for n in members)  # no build output of this checkout
