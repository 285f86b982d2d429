"""pytest plugin: one hermes-emulator per session, a fresh namespace per test.

Installed with the package (entry point ``pytest11``), or enabled with
``pytest_plugins = ["hermes_emulator.pytest_plugin"]`` in a conftest.py (not both: pytest refuses a
plugin registered twice).

    def test_submit(hermes_emulator):
        run = hermes_emulator.post("/v1/runs", {"input": "hi"})
        hermes_emulator.control.observe(run["run_id"], {"status": "completed", "output": "done"})
        assert hermes_emulator.get(f"/v1/runs/{run['run_id']}")["status"] == "completed"

``hermes_emulator.url`` is ``<server>/ns/<namespace>``: point the code under test at it and every request
lands in the test's own namespace (runs, keys, clock-independent state; fault rules are added to it by
``control``). Options of the session's server come from ``--hermes-emulator-arg`` (repeatable, a serve
flag such as ``--hermes-emulator-arg=--max-concurrent-runs=2``) or the HERMES_EMULATOR_* variables the
binary reads itself.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Iterator, Optional

import pytest

from . import HermesEmulator
from ._control import Control, check_path, http_json

_counter = itertools.count(1)


def namespace_for(test_name: str) -> str:
    """A namespace name unique in the session, matching ^[A-Za-z0-9_.-]{1,64}$, from a test's name."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", test_name).strip("-") or "test"
    return f"t{next(_counter)}-{slug}"[:64]


class Namespace:
    """One test's view of the session's emulator: its own namespace.

    url: the namespaced base URL (``<server>/ns/<name>``) for the code under test; server_url: the
    emulator's root; namespace: the name; headers: {"x-mockingbird-namespace": name}, an alternative to
    the URL prefix; control: the control plane acting in this namespace; server: the HermesEmulator;
    timeout: seconds get and post wait for an answer (the server's; control.timeout is the control
    plane's). Setting either changes this test's calls only.
    """

    def __init__(self, server: HermesEmulator, namespace: str) -> None:
        self.server = server
        self.server_url = server.url
        self.namespace = namespace
        self.url = f"{server.url}/ns/{namespace}"
        self.headers = {"x-mockingbird-namespace": namespace}
        self.control: Control = server.control.in_namespace(namespace)
        self.timeout = server.timeout

    def post(self, path: str, body: Any = None, headers: Optional[dict] = None) -> Any:
        """POSTs JSON in this namespace and returns the decoded answer (ControlError outside 2xx); the
        body goes as application/json unless headers give their own Content-Type."""
        check_path("post", path)
        self.control._check_open("POST", path)
        return http_json("POST", self.url + path, body, headers, self.timeout)

    def get(self, path: str, headers: Optional[dict] = None) -> Any:
        """GETs JSON in this namespace (ControlError outside 2xx)."""
        check_path("get", path)
        self.control._check_open("GET", path)
        return http_json("GET", self.url + path, None, headers, self.timeout)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--hermes-emulator-arg", action="append", default=[], metavar="FLAG",
        help="extra flag for the session's `hermes-emulator serve` (repeatable)",
    )


@pytest.fixture(scope="session")
def hermes_emulator_server(request: pytest.FixtureRequest) -> Iterator[HermesEmulator]:
    """The session's emulator (started on first use, stopped at the end of the session)."""
    with HermesEmulator(args=request.config.getoption("--hermes-emulator-arg")) as server:
        yield server


@pytest.fixture
def hermes_emulator(hermes_emulator_server: HermesEmulator, request: pytest.FixtureRequest) -> Iterator[Namespace]:
    """A fresh namespace of the session's emulator for this test.

    When the test ends, the namespace is reset (its runs, keys and timeline go, so a long session holds
    only the current test's state), its fault rules are deleted (and every rule the test added, for
    whatever namespace, "*" included), and the server's one clock is put back
    as the test found it (frozen at the same instant, or running with the same offset), so a test that
    freezes or moves it does not stop the next test's scenario-driven runs. The emulator keeps at most
    --max-namespaces (default 10000) namespaces, so one session runs at most that many such tests.
    """
    ns = Namespace(hermes_emulator_server, namespace_for(request.node.name))
    clock = ns.control.clock()
    rules_before = {rule["id"] for rule in ns.control.faults()}
    yield ns
    # Fault rules are the server's: a rule the test added for every namespace ("*") or another one
    # would fire in the tests after it. Those it found stay, unless they are its namespace's.
    for rule in ns.control.faults():
        if rule.get("namespace") == ns.namespace or rule["id"] not in rules_before:
            ns.control.delete_faults(rule["id"])
    ns.control.reset()
    restore_clock(ns.control, clock)


def restore_clock(control: Control, before: dict) -> None:
    """Puts the clock back to the state before (a GET /__admin/clock answer) when it changed."""
    now = control.clock()
    if before["frozen"]:
        if not now["frozen"] or now["now"] != before["now"]:
            control.set_clock(set=before["now"], freeze=True)
    elif now["frozen"] or now["offsetMs"] != before["offsetMs"]:
        control.set_clock(reset=True, advance=before["offsetMs"])
