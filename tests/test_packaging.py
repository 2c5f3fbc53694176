"""The package metadata builds without setuptools' deprecation warnings (they print at every install)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_expression_and_the_build_backend_accepts_it():
    assert PYPROJECT["project"]["license"] == "MIT"
    (setuptools,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert Version("77") in setuptools.specifier and Version("76.1") not in setuptools.specifier  # SPDX: 77 on


def test_metadata_builds_with_no_licence_warning(tmp_path):
    """What `pip install -e .` runs first, on a copy of the project's metadata with this interpreter's setuptools."""
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    shutil.copy(REPO / "README.md", tmp_path)
    (tmp_path / "corrige").mkdir()
    (tmp_path / "corrige" / "__init__.py").touch()
    (tmp_path / "meta").mkdir()
    build = subprocess.run(
        [sys.executable, "-c", "import setuptools.build_meta as b; print(b.prepare_metadata_for_build_wheel('meta'))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, build.stderr
    assert "license" not in build.stderr.lower(), build.stderr
    assert "Warning" not in build.stderr, build.stderr
    metadata = (tmp_path / "meta" / build.stdout.split()[-1] / "METADATA").read_text(encoding="utf-8")
    assert "License-Expression: MIT" in metadata.splitlines()
