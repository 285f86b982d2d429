"""The repository's conftest.py: the plugin is loaded exactly once, whatever `pip install .` left behind."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_fixture_exists_with_an_egg_info_left_in_src(tmp_path):
    """`pip install <clone>/clients/python` leaves src/hermes_emulator.egg-info (with the pytest11 entry
    point) in the tree. An interpreter without the package installed must still get the fixture here."""
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "src" / "hermes_emulator", tmp_path / "src" / "hermes_emulator",
                    ignore=shutil.ignore_patterns("__pycache__"))
    egg = tmp_path / "src" / "hermes_emulator.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: hermes-emulator\nVersion: 0.0.0\n")
    (egg / "entry_points.txt").write_text("[pytest11]\nhermes_emulator = hermes_emulator.pytest_plugin\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(
        "def test_fixture(hermes_emulator):\n"
        "    assert hermes_emulator.post('/v1/runs', {'input': 'x'})['status'] == 'started'\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
