"""The pytest plugin: one server per session, a fresh namespace per test, and the consumer scenario."""

import http.client

import pytest

from helpers import call

servers = set()
namespaces = set()


@pytest.mark.parametrize("i", [1, 2])
def test_each_test_gets_a_fresh_namespace_of_one_server(hermes_emulator, i):
    servers.add(hermes_emulator.server_url)
    namespaces.add(hermes_emulator.namespace)
    assert len(servers) == 1
    assert len(namespaces) == i
    assert hermes_emulator.url == f"{hermes_emulator.server_url}/ns/{hermes_emulator.namespace}"
    run = hermes_emulator.post("/v1/runs", {"input": "x"})
    status, _, body = call("GET", f"{hermes_emulator.server_url}/v1/runs/{run['run_id']}")
    assert status == 404, "invisible outside the test's namespace"
    status, _, body = call("GET", f"{hermes_emulator.server_url}/v1/runs/{run['run_id']}", headers=hermes_emulator.headers)
    assert (status, body["run_id"]) == (200, run["run_id"])


def test_lost_response_and_keyed_retry(hermes_emulator):
    """The emulator admits a run and loses the 202; a retry with the same key replays that run."""
    [rule] = hermes_emulator.control.apply_preset("hermes_submit_accepted_drop")
    assert rule["namespace"] == hermes_emulator.namespace
    key = {"Idempotency-Key": "order-1234"}
    body = {"input": "Book the flight"}
    url = hermes_emulator.url + "/v1/runs"

    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        call("POST", url, body, key)
    status, headers, replay = call("POST", url, body, key)
    assert (status, headers["Idempotency-Replayed"], replay["replayed"], replay["status"]) == (202, "true", True, "queued")

    journal = hermes_emulator.control.requests(operationId="RunCreate")["requests"]
    assert [(e["status"], e["ids"]["runId"], e.get("faultId")) for e in journal] == [
        (0, replay["run_id"], "hermes_submit_accepted_drop"),
        (202, replay["run_id"], None),
    ]
    hermes_emulator.control.observe(replay["run_id"], {"status": "completed", "output": "Booked."})
    assert hermes_emulator.get(f"/v1/runs/{replay['run_id']}")["status"] == "completed"
    # One run exists; the count sees both submissions.
    assert [r["run_id"] for r in hermes_emulator.control.runs()["runs"]] == [replay["run_id"]]
    assert hermes_emulator.control.run(replay["run_id"])["keyed"] is True
    assert hermes_emulator.control.count(operationId="RunCreate") == 2


def test_the_fixture_takes_the_servers_timeout_and_a_test_may_change_its_own(hermes_emulator):
    assert (hermes_emulator.timeout, hermes_emulator.control.timeout) == (30.0, 30.0)
    hermes_emulator.timeout = 0.5
    hermes_emulator.control.add_fault({"operationId": "RunGet", "delayMs": 1500, "count": 1})
    with pytest.raises(TimeoutError, match=rf"^GET /ns/{hermes_emulator.namespace}/v1/runs/run_x: no answer within 0.5 s$"):
        hermes_emulator.get("/v1/runs/run_x")
    assert hermes_emulator.server.timeout == 30.0, "the session's server keeps its own"


left_behind = {}


def test_state_of_a_test_ends_with_it(hermes_emulator):
    # The previous test's preset was consumed; add one that is not, and a run; the next test checks.
    hermes_emulator.control.add_fault({"operationId": "RunGet", "status": 503, "count": 1})
    assert [r["namespace"] for r in hermes_emulator.control.faults()] == [hermes_emulator.namespace]
    left_behind["run"] = hermes_emulator.post("/v1/runs", {"input": "x"})["run_id"]
    left_behind["headers"] = hermes_emulator.headers


def test_no_rules_or_runs_left_over(hermes_emulator):
    assert hermes_emulator.control.faults() == []
    status, _, body = call("GET", f"{hermes_emulator.server_url}/v1/runs/{left_behind['run']}", headers=left_behind["headers"])
    assert (status, body["error"]["code"]) == (404, "run_not_found")


def test_rules_a_test_adds_for_every_namespace_or_another(hermes_emulator):
    # The next test must not meet them: this "*" rule would answer its next 100 submissions 429.
    hermes_emulator.control.apply_preset("hermes_throttled", namespace="*", count=100)
    hermes_emulator.control.in_namespace("elsewhere").add_fault({"id": "elsewhere", "operationId": "RunGet", "status": 500})
    assert sorted(r["namespace"] for r in hermes_emulator.control.faults()) == ["*", "elsewhere"]


def test_finds_no_rule_of_the_previous_test(hermes_emulator):
    assert hermes_emulator.control.faults() == []
    assert hermes_emulator.post("/v1/runs", {"input": "x"})["status"] == "started"


def test_time_travel_metrics_and_the_rest_of_the_control_plane(hermes_emulator):
    """The controls the Node client has too: checkpoint/checkout, metrics, journal clearing, namespaces, drain."""
    control = hermes_emulator.control
    run_id = hermes_emulator.post("/v1/runs", {"input": "x"})["run_id"]
    before = control.checkpoint()
    assert before["branch"] == "main" and before["id"].startswith("cp_")
    control.observe(run_id, {"status": "completed", "output": "done"})
    assert hermes_emulator.get(f"/v1/runs/{run_id}")["status"] == "completed"
    assert control.checkout("main", before["id"]) == {"status": "ok", "branch": "main", "checkpoint": before["id"]}
    assert hermes_emulator.get(f"/v1/runs/{run_id}")["status"] == "queued"
    assert before["id"] in [c["id"] for c in control.timeline()["checkpoints"]]

    assert hermes_emulator.namespace in control.namespaces()
    assert control.draining() is False
    control.drain(True)
    assert control.draining() is True
    control.drain(False)

    assert control.metrics()["byOperation"]["RunCreate 202"] >= 1  # the server's metrics, every namespace
    assert control.count(operationId="RunCreate") == 1
    control.clear_requests()
    assert control.count(operationId="RunCreate") == 0


def test_query_parameters_none_true_and_false(hermes_emulator):
    """runs() and requests() leave a None parameter out and send True as 1, as the Go client does:
    status=None was sent as "None" (400) and all=True as "True", which the server reads as off."""
    control = hermes_emulator.control
    run_id = hermes_emulator.post("/v1/runs", {"input": "x"})["run_id"]
    other = control.in_namespace(hermes_emulator.namespace + ".other")
    hermes_emulator.post("/v1/runs", {"input": "y"}, headers={"x-mockingbird-namespace": other.namespace})
    try:
        assert [r["run_id"] for r in control.runs(status=None, limit=None, cursor=None)["runs"]] == [run_id]
        assert len(control.requests(status=None, operationId="RunCreate")["requests"]) == 1
        assert len(control.requests(operationId="RunCreate", all=False)["requests"]) == 1
        every = control.requests(operationId="RunCreate", all=True)["requests"]
        assert {e["namespace"] for e in every} >= {hermes_emulator.namespace, other.namespace}
    finally:
        other.reset()


def test_requests_returns_the_page_with_its_cursor(hermes_emulator):
    """requests() answers the page, as Node's and Go's do: its "next" is the only way to the older
    entries (it returned the bare list, so cursor= could never be given)."""
    control = hermes_emulator.control
    ids = [hermes_emulator.post("/v1/runs", {"input": str(i)})["run_id"] for i in range(3)]
    page = control.requests(operationId="RunCreate", limit=2)
    assert [e["ids"]["runId"] for e in page["requests"]] == ids[1:]
    older = control.requests(operationId="RunCreate", limit=2, cursor=page["next"])
    assert [e["ids"]["runId"] for e in older["requests"]] == ids[:1]
    assert "next" not in older


clock_seen = {}


def test_a_test_that_freezes_and_moves_the_clock(hermes_emulator):
    clock_seen["before"] = hermes_emulator.control.clock()
    hermes_emulator.control.set_clock(set=1700000000000, freeze=True)
    assert hermes_emulator.control.set_clock(advance=5000)["now"] == 1700000005000


def test_the_next_test_finds_the_clock_as_the_previous_one_did(hermes_emulator):
    before, now = clock_seen["before"], hermes_emulator.control.clock()
    assert (now["frozen"], now["offsetMs"]) == (before["frozen"], before["offsetMs"])
    assert now["now"] >= before["now"]


def test_restore_clock_puts_a_frozen_clock_back_at_its_instant(hermes_emulator):
    from hermes_emulator.pytest_plugin import restore_clock

    control = hermes_emulator.control
    frozen = control.set_clock(set=1700000000000, freeze=True)
    control.set_clock(reset=True)
    restore_clock(control, frozen)
    assert control.clock()["now"] == 1700000000000 and control.clock()["frozen"] is True
    running = control.set_clock(reset=True, advance=60000)
    assert (running["frozen"], running["offsetMs"]) == (False, 60000)
    control.set_clock(set=1600000000000, freeze=True)
    restore_clock(control, running)
    after = control.clock()
    assert (after["frozen"], after["offsetMs"]) == (False, 60000)


def test_this_checkout_runs_with_the_package_installed(tmp_path):
    """conftest.py enables the plugin only when no installed package does (its pytest11 entry point):
    pytest refuses a plugin registered twice, so `pip install clients/python` then pytest here would fail."""
    import os
    import shutil
    import subprocess
    import sys

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    site = tmp_path / "site"
    shutil.copytree(os.path.join(here, "src", "hermes_emulator"), site / "hermes_emulator")
    info = site / "hermes_emulator-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-emulator\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nhermes_emulator = hermes_emulator.pytest_plugin\n")
    (info / "RECORD").write_text("")
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "tests/test_plugin.py"],
        cwd=here, env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "test_lost_response_and_keyed_retry" in res.stdout
