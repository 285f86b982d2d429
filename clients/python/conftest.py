# Enables the plugin for this repository's own tests, unless pytest already loaded it through an installed
# package's pytest11 entry point (`pip install .` here): pytest refuses a plugin registered twice.
# Entry points are loaded before this file, so the plugin's module is then already imported. (Asking
# importlib.metadata whether the entry point exists is not the same: `pip install .` leaves
# src/hermes_emulator.egg-info in the tree, which is seen once `pythonpath = ["src"]` applies — too late
# for pytest to load it — so an interpreter without the package got no fixture at all.)
import sys

if "hermes_emulator.pytest_plugin" not in sys.modules:
    pytest_plugins = ["hermes_emulator.pytest_plugin"]
