# Enables the plugin for this repository's own tests (an installed package registers it through its
# pytest11 entry point instead).
pytest_plugins = ["hermes_emulator.pytest_plugin"]
