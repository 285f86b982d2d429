"""The package as pip installs it: what the wheel carries."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def can_build_wheels():
    """pip and setuptools>=61 (pyproject.toml's build requirement), asked in a child: importing
    setuptools here would replace distutils under pytest."""
    res = subprocess.run([sys.executable, "-c", "import setuptools, pip; print(setuptools.__version__)"],
                         capture_output=True, text=True, timeout=60)
    return res.returncode == 0 and int(res.stdout.split(".")[0]) >= 61


@pytest.mark.skipif(not can_build_wheels(), reason="needs pip and setuptools>=61 (built offline, no isolation)")
def test_the_wheel_carries_py_typed(tmp_path):
    """PEP 561: without hermes_emulator/py.typed in the installed package, mypy and pyright ignore its
    type hints ("module is installed, but missing library stubs or py.typed marker")."""
    src = tmp_path / "src"  # a copy: an in-tree build leaves build/ and *.egg-info behind
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests"))
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                          "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PIP_NO_INPUT": "1"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("hermes_emulator-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hermes_emulator/py.typed" in names
    assert "hermes_emulator/pytest_plugin.py" in names
