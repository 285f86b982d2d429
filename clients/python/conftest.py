# Enables the plugin for this repository's own tests, unless an installed package already does through
# its pytest11 entry point (`pip install .` here): pytest refuses a plugin registered twice.
from importlib.metadata import entry_points

_eps = entry_points()
_pytest11 = _eps.select(group="pytest11") if hasattr(_eps, "select") else _eps.get("pytest11", [])
if not any(ep.value == "hermes_emulator.pytest_plugin" for ep in _pytest11):
    pytest_plugins = ["hermes_emulator.pytest_plugin"]
