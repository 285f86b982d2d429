"""The package as pip installs it: what the wheel carries, and the offline installs docs/clients.md gives."""

import os
import re
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
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                          "--no-index", "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PIP_NO_INPUT": "1"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("hermes_emulator-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hermes_emulator/py.typed" in names
    assert "hermes_emulator/pytest_plugin.py" in names


CONSUMER = '''
import os
from typing import List

from hermes_emulator import ControlError, HermesEmulator, find_binary, serve_args
from hermes_emulator.pytest_plugin import Namespace

binary: str = find_binary(os.environ)
args: list = serve_args(seed=42, args=["--journal-size", "5"])
with HermesEmulator(binary=binary, seed=42, start_timeout=5) as emu:
    run = emu.post("/v1/runs", {"input": "hi"}, headers={"Idempotency-Key": "k"})
    delivered: int = emu.control.deliver(run["run_id"])
    names: List[str] = emu.control.reset(all=True)


def test_submit(hermes_emulator: Namespace) -> None:
    try:
        hermes_emulator.control.observe("run_x", {"status": "completed"})
    except ControlError as err:
        assert err.status == 404
'''


@pytest.mark.skipif(subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode != 0,
                    reason="needs mypy (Debian: python3-mypy)")
def test_the_hints_type_check_for_the_oldest_python(tmp_path):
    """The package and a consumer's use of it pass mypy for Python 3.9: find_binary(os.environ), its own
    default, was an error (env was typed dict)."""
    (tmp_path / "consumer.py").write_text(CONSUMER)
    # pytest's own hints are not the question here (and would triple the time): without site-packages
    # it is Any, and the package's standard-library types are still checked.
    res = subprocess.run([sys.executable, "-m", "mypy", "--python-version", "3.9",
                          "--cache-dir", str(tmp_path / "cache"), "--no-site-packages", "--ignore-missing-imports",
                          str(ROOT / "src" / "hermes_emulator"), str(tmp_path / "consumer.py")],
                         env={**os.environ, "MYPYPATH": str(ROOT / "src")}, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


DOCS = ROOT.parent.parent / "docs" / "clients.md"
SECTION = "### Installing the Python package\n"


def documented_installs():
    """The sh blocks of the section of docs/clients.md that says how to install the package offline."""
    text = DOCS.read_text()
    if SECTION not in text:
        return []
    section = re.split(r"\n#{1,3} ", text.split(SECTION, 1)[1], maxsplit=1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def can_make_venvs_that_build():
    """venv with pip (ensurepip; Debian: python3-venv) and wheel, for --no-build-isolation."""
    res = subprocess.run([sys.executable, "-c", "import ensurepip, venv, wheel"], capture_output=True, timeout=60)
    return res.returncode == 0 and can_build_wheels()


@pytest.mark.skipif(not can_make_venvs_that_build(),
                    reason="needs venv, pip, setuptools>=61 and wheel (Debian: python3-venv python3-wheel)")
def test_the_documented_offline_installs_work(tmp_path):
    """docs/clients.md's ways to install the package offline, run as written (python3 being this
    interpreter, <clone> a copy): a plain `pip install <clone>/clients/python` fetches setuptools (build
    isolation) and Debian's system Python refuses it (PEP 668). Each gives a test the fixture."""
    ways = documented_installs()
    assert len(ways) == 2, f"{DOCS}: expected two sh blocks under {SECTION.strip()!r}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    for i, way in enumerate(ways):
        clone = tmp_path / f"clone{i}"  # each its own: the install leaves an egg-info in the clone
        shutil.copytree(ROOT, clone / "clients" / "python",
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests"))
        script = way.replace("<clone>", str(clone))
        script = re.sub(r"(^|\s)python3 ", lambda m: m.group(1) + sys.executable + " ", script, flags=re.M)
        work = tmp_path / f"way{i}"
        work.mkdir()
        (work / "test_consumer.py").write_text(
            "def test_submit(hermes_emulator):\n"
            "    assert hermes_emulator.post('/v1/runs', {'input': 'x'})['status'] == 'started'\n")
        res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0 and "1 passed" in res.stdout, script + res.stdout[-2000:] + res.stderr[-2000:]
