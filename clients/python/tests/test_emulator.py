"""HermesEmulator: the binary as a context manager, its options and errors."""

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from hermes_emulator import Control, ControlError, EmulatorError, HermesEmulator, find_binary, serve_args


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def test_script_a_run():
    with HermesEmulator(seed=42) as emu:
        accepted = emu.post("/v1/runs", {"input": "Summarise the quarterly report"})
        assert accepted["status"] == "started"
        run_id = accepted["run_id"]
        emu.control.observe(run_id, {"status": "running"})
        emu.control.observe(run_id, {"status": "completed", "output": "Revenue grew 12%."})
        run = emu.get(f"/v1/runs/{run_id}")
        assert (run["status"], run["output"], run["last_event"]) == ("completed", "Revenue grew 12%.", "run.completed")


def test_ephemeral_port_until_close():
    emu = HermesEmulator().start()
    try:
        assert emu.host == "127.0.0.1" and emu.port > 0
        assert emu.url == f"http://127.0.0.1:{emu.port}"
        assert emu.get("/health")["status"] == "ok"
    finally:
        emu.close()
    emu.close()  # idempotent
    assert not alive(emu.pid)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(emu.url + "/health", timeout=2)


def open_fds():
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_close_leaves_no_file_descriptor_open():
    # close() (also after a failed start) closes the pipes of the binary's stdout and stderr: they
    # stayed open as long as the HermesEmulator object lived (a ResourceWarning when it went).
    before = open_fds()
    emu = HermesEmulator().start()
    emu.close()
    with pytest.raises(EmulatorError):
        HermesEmulator(args=["--no-such-flag"]).start()
    assert open_fds() - before == set()
    assert emu.pid is not None  # the object is still alive: nothing was closed by its collection


def test_json_log_banner():
    # --log json prints the banner as a JSON line: the URL ends at its closing quote.
    with HermesEmulator(log="json") as emu:
        assert emu.host == "127.0.0.1" and emu.port > 0
        assert emu.url == f"http://127.0.0.1:{emu.port}"
        assert emu.control.clock()["frozen"] is False


def test_find_binary(tmp_path):
    fake = tmp_path / "hermes-emulator"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert find_binary({"HERMES_EMULATOR_BIN": str(fake), "PATH": ""}) == str(fake)
    assert find_binary({"PATH": f"/nonexistent{os.pathsep}{tmp_path}"}) == str(fake)
    with pytest.raises(EmulatorError, match=r"^no hermes-emulator binary: HERMES_EMULATOR_BIN is not set and PATH has none; .*make dist.*go install"):
        find_binary({"PATH": "/nonexistent"})
    with pytest.raises(EmulatorError, match=r"^HERMES_EMULATOR_BIN=/nonexistent/x is not an executable file; "):
        find_binary({"HERMES_EMULATOR_BIN": "/nonexistent/x"})


def test_serve_args():
    assert serve_args() == ["serve", "--host", "127.0.0.1", "--port", "0", "--log", "off"]
    assert serve_args(seed=42, port=9000, admin_key="k", db="x.db", scenarios="s.json", api_key="a", args=["--journal-size", "5"]) == [
        "serve", "--host", "127.0.0.1", "--port", "9000", "--log", "off", "--seed", "42", "--admin-key", "k",
        "--db", "x.db", "--scenarios", "s.json", "--api-key", "a", "--journal-size", "5"]


def test_a_binary_that_cannot_start_reports_its_stderr():
    with pytest.raises(EmulatorError, match=r"^hermes-emulator exited \(code 2\) before listening: flag provided but not defined: -no-such-flag"):
        HermesEmulator(args=["--no-such-flag"]).start()
    with pytest.raises(EmulatorError, match=r"^cannot start /nonexistent/hermes-emulator: "):
        HermesEmulator(binary="/nonexistent/hermes-emulator").start()


def test_start_timeout_counts_the_whole_start(tmp_path):
    # A binary that keeps printing other lines and never its address: start_timeout
    # is the whole start's, not a line's (it prints for 6 s, then ends).
    chatty = tmp_path / "hermes-emulator"
    chatty.write_text("#!/bin/sh\nfor i in $(seq 20); do echo working; sleep 0.3; done\n")
    chatty.chmod(chatty.stat().st_mode | stat.S_IEXEC)
    began = time.monotonic()
    with pytest.raises(EmulatorError, match=r"^hermes-emulator did not report its address within 1.0 s"):
        HermesEmulator(binary=str(chatty), start_timeout=1.0).start()
    assert time.monotonic() - began < 3


def test_a_failed_start_waits_for_the_whole_stderr(monkeypatch):
    # stdout's end can be seen before stderr's reader has run (two threads, a busy machine): the error
    # still carries the reason the binary printed. The reader is made late here.
    drain = HermesEmulator._drain_stderr

    def late(self, stream):
        time.sleep(0.5)
        drain(self, stream)

    monkeypatch.setattr(HermesEmulator, "_drain_stderr", late)
    with pytest.raises(EmulatorError, match=r"^hermes-emulator exited \(code 2\) before listening: flag provided but not defined: -no-such-flag"):
        HermesEmulator(args=["--no-such-flag"]).start()


def test_a_binary_that_closes_stdout_and_runs_on_is_given_start_timeout(tmp_path):
    # stdout closed without an address, the process still running: start_timeout still bounds the start
    # (it waited for the exit, for ever), and the process is stopped.
    mute = tmp_path / "hermes-emulator"
    mute.write_text("#!/bin/sh\nexec >&-\necho closed stdout >&2\nsleep 6\n")
    mute.chmod(mute.stat().st_mode | stat.S_IEXEC)
    began = time.monotonic()
    emu = HermesEmulator(binary=str(mute), start_timeout=1.0)
    with pytest.raises(EmulatorError, match=r"^hermes-emulator did not report its address within 1.0 s; stderr: closed stdout$"):
        emu.start()
    assert time.monotonic() - began < 3
    assert not alive(emu.pid)


def test_start_twice_is_refused():
    emu = HermesEmulator().start()
    try:
        with pytest.raises(EmulatorError, match=rf"^hermes-emulator already runs \(pid {emu.pid}\): close\(\) it before starting again$"):
            emu.start()
        assert emu.get("/health")["status"] == "ok"
    finally:
        emu.close()
    emu.start().close()  # once closed, it starts again


def test_control_get_and_post_before_start_say_so():
    # control is typed Control: it raised AttributeError, and get/post ValueError "unknown url type".
    emu = HermesEmulator()
    not_started = r"^hermes-emulator is not started: call start\(\) first, or use HermesEmulator in a with block$"
    with pytest.raises(EmulatorError, match=not_started):
        emu.control
    with pytest.raises(EmulatorError, match=not_started):
        emu.get("/health")
    with pytest.raises(EmulatorError, match=not_started):
        emu.post("/v1/runs", {"input": "x"})
    with emu:
        assert emu.control.clock()["frozen"] is False


def test_admin_key_and_control_errors():
    with HermesEmulator(admin_key="s3cret") as emu:
        with pytest.raises(urllib.error.HTTPError) as raw:
            urllib.request.urlopen(emu.url + "/__admin/clock", timeout=5)
        assert raw.value.code == 401
        assert emu.control.set_clock(set=1700000000000, freeze=True)["now"] == 1700000000000
        with pytest.raises(ControlError) as err:
            emu.control.observe("run_missing", {"status": "completed"})
        e = err.value
        assert (e.status, e.code, e.type, e.message) == (404, "run_not_found", "invalid_request_error", "Run not found: run_missing")
        assert str(e) == "POST /__admin/hermes/runs/run_missing/observe: 404 Run not found: run_missing (run_not_found)"


def test_a_control_call_to_an_emulator_that_does_not_answer_raises_timeout_error_after_timeout():
    # A listening socket that never accepts: the connection is made (the backlog), no answer ever comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = "http://127.0.0.1:%d" % silent.getsockname()[1]
        assert Control(url).timeout == 30.0
        control = Control(url, timeout=0.3).in_namespace("slow")
        assert control.timeout == 0.3, "in_namespace keeps it"
        began = time.monotonic()
        with pytest.raises(TimeoutError, match=r"^GET /__admin/clock: no answer within 0.3 s$"):
            control.clock()
        assert time.monotonic() - began < 5


class Dripping:
    """A local HTTP server that answers every request one byte every 0.1 s, for about 4 s: the status line
    and headers (head=True), or a whole head and then a 1000-byte body. Each wait for the next byte is
    short; only a deadline for the whole call ends it early."""

    def __init__(self, head):
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        self.slow, self.fast = (answer, b"") if head else (b" " * 1000, answer)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(self.fast)
                for byte in self.slow[:40]:
                    conn.sendall(bytes([byte]))
                    time.sleep(0.1)
            except OSError:  # the client gave up
                pass

    def close(self):
        self.listener.close()


@pytest.mark.parametrize("head", [True, False], ids=["head", "body"])
def test_timeout_is_the_whole_calls_not_each_waits(head):
    # An answer that trickles in: each read waits 0.1 s, well within timeout. The timeout applied to each
    # wait (urllib's socket timeout), so such a call took as long as the server dripped; it is the whole
    # call's, as Node's timeoutMs.
    server = Dripping(head)
    try:
        began = time.monotonic()
        with pytest.raises(TimeoutError, match=r"^GET /__admin/clock: no answer within 0.5 s$"):
            Control(server.url, timeout=0.5).clock()
        took = time.monotonic() - began
        assert 0.5 <= took < 1.5, f"took {took:.2f} s"
    finally:
        server.close()


def test_timeout_bounds_get_and_post_and_0_is_no_limit():
    # A fault rule's delayMs above the timeout: the call raises TimeoutError (it was a fixed,
    # undocumented 30 s); timeout=0 waits as long as the emulator takes.
    with HermesEmulator(timeout=0.5) as emu:
        assert (emu.timeout, emu.control.timeout) == (0.5, 0.5)
        emu.control.add_fault({"operationId": "RunCreate", "delayMs": 1500, "count": 1})
        with pytest.raises(TimeoutError, match=r"^POST /v1/runs: no answer within 0.5 s$"):
            emu.post("/v1/runs", {"input": "x"})
        emu.control.add_fault({"operationId": "RunGet", "delayMs": 1500, "count": 2})
        with pytest.raises(TimeoutError, match=r"^GET /v1/runs/run_x: no answer within 0.5 s$"):
            emu.get("/v1/runs/run_x")
        emu.timeout = 0
        with pytest.raises(ControlError) as err:
            emu.get("/v1/runs/run_x")  # after 1.5 s
        assert err.value.code == "run_not_found"
    with HermesEmulator() as emu:
        assert (emu.timeout, emu.control.timeout) == (30.0, 30.0)


def test_calls_ignore_proxy_variables(monkeypatch):
    # urllib sent every call through $http_proxy (no_proxy rarely lists 127.0.0.1): with a proxy set for
    # the user's other traffic, each call failed (URLError, connection refused by this "proxy"), where
    # Node's fetch ignores the variables. The emulator is never behind a proxy.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        proxy = "http://127.0.0.1:%d" % closed.getsockname()[1]  # nothing listens there
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with HermesEmulator() as emu:
        assert emu.get("/health")["status"] == "ok"
        assert emu.post("/v1/runs", {"input": "x"})["status"] == "started"
        assert emu.control.clock()["frozen"] is False


def test_post_sends_the_callers_content_type():
    # application/json only when the caller gives none (it replaced theirs). The journal keeps the
    # Content-Type of a failed request: {"input": 5} answers 400.
    sent = [None, {"Content-Type": "application/vnd.test+json"}, {"content-type": "text/plain; charset=utf-8"}]
    with HermesEmulator() as emu:
        for headers in sent:
            with pytest.raises(ControlError) as err:
                emu.post("/v1/runs", {"input": 5}, headers=headers)
            assert err.value.status == 400
        journal = emu.control.requests()["requests"]
    assert [e["request"]["contentType"] for e in journal] == [
        "application/json", "application/vnd.test+json", "text/plain; charset=utf-8"]


def test_control_sends_the_key_the_binary_took_from_the_environment_or_args(monkeypatch):
    # The pytest plugin's session server takes its flags from --hermes-emulator-arg or HERMES_EMULATOR_*:
    # a key given either way must reach its control client, else every fixture call answers 401.
    def locked(key, **options):
        with HermesEmulator(**options) as emu:
            with pytest.raises(urllib.error.HTTPError) as raw:
                urllib.request.urlopen(emu.url + "/__admin/clock", timeout=5)
            assert raw.value.code == 401
            assert emu.control.admin_key == key
            assert emu.control.clock()["frozen"] is False

    monkeypatch.delenv("HERMES_EMULATOR_ADMIN_KEY", raising=False)
    monkeypatch.setenv("MOCKINGBIRD_ADMIN_KEY", "m1")
    locked("m1")
    monkeypatch.setenv("HERMES_EMULATOR_ADMIN_KEY", "h1")  # wins over MOCKINGBIRD_ADMIN_KEY, as in the binary
    locked("h1")
    locked("o1", admin_key="o1")  # the option is a flag: it wins over the environment
    monkeypatch.delenv("HERMES_EMULATOR_ADMIN_KEY")
    monkeypatch.delenv("MOCKINGBIRD_ADMIN_KEY")
    locked("a1", args=["--admin-key=a1"])
    locked("a2", admin_key="o1", args=["-admin-key", "a2"])  # the last flag wins


def test_the_binary_stops_when_python_exits_without_close():
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    script = "from hermes_emulator import HermesEmulator; print(HermesEmulator().start().pid)"
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": src},
                         capture_output=True, text=True, timeout=30, check=True).stdout
    pid = int(out.strip())
    for _ in range(200):
        if not alive(pid):
            break
        time.sleep(0.01)
    assert not alive(pid), f"pid {pid} still running"


def test_the_binary_stops_when_python_is_ended_by_sigterm_which_still_ends_it():
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    script = ("import os, signal, time; from hermes_emulator import HermesEmulator; "
              "print(HermesEmulator().start().pid, flush=True); os.kill(os.getpid(), signal.SIGTERM); "
              "time.sleep(5); print('survived')")
    res = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": src},
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == -signal.SIGTERM, res.stderr
    pid = int(res.stdout.split()[0])
    for _ in range(200):
        if not alive(pid):
            break
        time.sleep(0.01)
    assert not alive(pid), f"pid {pid} still running"


CLOSED = r"the emulator is closed \(close\(\) was called, or its with block ended\)$"

# One call of every public method of Control (test_after_close_… checks that none is missing).
CONTROL_CALLS = {
    "observe": lambda c: c.observe("run_x", {"status": "running"}),
    "events": lambda c: c.events("run_x", {"type": "message.delta", "delta": "x"}),
    "deliver": lambda c: c.deliver("run_x"),
    "restart": lambda c: c.restart("stale"),
    "scope": lambda c: c.scope("p", "i"),
    "sweep": lambda c: c.sweep(),
    "drain": lambda c: c.drain(True),
    "draining": lambda c: c.draining(),
    "runs": lambda c: c.runs(),
    "run": lambda c: c.run("run_x"),
    "put_scenarios": lambda c: c.put_scenarios({"scenarios": []}),
    "scenarios": lambda c: c.scenarios(),
    "delete_scenarios": lambda c: c.delete_scenarios(),
    "reset": lambda c: c.reset(),
    "namespaces": lambda c: c.namespaces(),
    "clock": lambda c: c.clock(),
    "set_clock": lambda c: c.set_clock(advance=1),
    "add_fault": lambda c: c.add_fault({"operationId": "RunGet", "status": 503}),
    "apply_preset": lambda c: c.apply_preset("hermes_poll_timeout"),
    "faults": lambda c: c.faults(),
    "delete_faults": lambda c: c.delete_faults(),
    "requests": lambda c: c.requests(),
    "count": lambda c: c.count(),
    "clear_requests": lambda c: c.clear_requests(),
    "metrics": lambda c: c.metrics(),
    "timeline": lambda c: c.timeline(),
    "checkpoint": lambda c: c.checkpoint(),
    "checkout": lambda c: c.checkout("main", "cp_x"),
    "request": lambda c: c.request("GET", "/__admin/clock"),
}


def test_after_close_every_call_raises_emulator_error_at_once():
    # They raised urllib's URLError "[Errno 111] Connection refused", which named no reason.
    from hermes_emulator.pytest_plugin import Namespace

    methods = {n for n in dir(Control) if not n.startswith("_") and callable(getattr(Control, n))} - {"in_namespace"}
    assert methods == set(CONTROL_CALLS), "every public method of Control is called here"
    with HermesEmulator() as emu:
        before = emu.control.in_namespace("t1")
        ns = Namespace(emu, "t2")
        url = emu.url
    for control in (emu.control, before, emu.control.in_namespace("t3"), ns.control):
        for name, call in CONTROL_CALLS.items():
            began = time.monotonic()
            with pytest.raises(EmulatorError, match=r"^(GET|POST|PUT|DELETE) /__admin/\S+: " + CLOSED):
                call(control)
            assert time.monotonic() - began < 0.1, name
    for target in (emu, ns):
        with pytest.raises(EmulatorError, match=r"^GET /v1/runs/run_x: " + CLOSED):
            target.get("/v1/runs/run_x")
        with pytest.raises(EmulatorError, match=r"^POST /v1/runs: " + CLOSED):
            target.post("/v1/runs", {"input": "x"})
    # The address stays (what it was; nothing answers there now); a Control made by hand on it knows
    # nothing of the emulator: the transport's own error.
    assert (emu.url, emu.host) == (url, "127.0.0.1") and emu.port > 0 and emu.pid is not None
    with pytest.raises(urllib.error.URLError):
        Control(url).clock()
    emu.start()  # a new start, a new control; the old ones stay closed
    try:
        assert emu.control.clock()["frozen"] is False
        assert emu.get("/health")["status"] == "ok"
        with pytest.raises(EmulatorError):
            before.clock()
    finally:
        emu.close()


def test_a_bad_argument_raises_type_error_or_value_error_naming_the_call_before_anything_starts_or_is_sent():
    # Each was a silent mistake (args split into characters, seed {} sent as "{}", in_namespace("") acting
    # in the default namespace, reset(all="no") resetting every namespace, set_clock() changing nothing,
    # runs(statsu=…) answering the unfiltered page, timeout=-1 meaning no limit), a misleading answer
    # (observe("") "no admin route", checkout("", …) "unknown field checkpoint"), or an error from deep
    # inside (serve_args() got an unexpected keyword, '>' not supported, nonnumeric port '36449v1').
    control = Control("http://127.0.0.1:9")  # nothing listens: a call that got through would fail otherwise
    emu = HermesEmulator()
    emu._control, emu.url = control, control.base_url  # as if started, without a binary
    bad = [
        (lambda: HermesEmulator(sed=42), TypeError, "HermesEmulator: unknown option 'sed'; the options are binary, start_timeout, timeout, seed, port, host, admin_key, db, scenarios, api_key, log, args"),
        (lambda: HermesEmulator(args="--seed 4"), TypeError, "HermesEmulator: args must be a list of str, not '--seed 4'"),
        (lambda: HermesEmulator(seed={}), TypeError, "HermesEmulator: seed must be a number or a str, not {}"),
        (lambda: HermesEmulator(admin_key=42), TypeError, "HermesEmulator: admin_key must be a str, not 42"),
        (lambda: HermesEmulator(timeout="5"), TypeError, "HermesEmulator: timeout must be a number of seconds, 0 or more (0: no limit), not '5'"),
        (lambda: HermesEmulator(timeout=-1), ValueError, "HermesEmulator: timeout must be a number of seconds, 0 or more (0: no limit), not -1"),
        (lambda: HermesEmulator(start_timeout=0), ValueError, "HermesEmulator: start_timeout must be a number of seconds above 0, not 0"),
        (lambda: serve_args(args="--seed 4"), TypeError, "serve_args: args must be a list of str, not '--seed 4'"),
        (lambda: Control(None), TypeError, 'Control: base_url must be an http:// or https:// URL such as "http://127.0.0.1:8827", not None'),
        (lambda: Control("127.0.0.1:8827"), ValueError, "Control: base_url must be an http:// or https:// URL such as \"http://127.0.0.1:8827\", not '127.0.0.1:8827'"),
        (lambda: Control("http://x", namespace=""), ValueError, "Control: namespace must be a non-empty str, not ''"),
        (lambda: Control("http://x", timeout=float("inf")), ValueError, "Control: timeout must be a number of seconds, 0 or more (0: no limit), not inf"),
        (lambda: control.in_namespace(""), ValueError, "in_namespace: namespace must be a non-empty str, not ''"),
        (lambda: control.in_namespace(None), TypeError, "in_namespace: namespace must be a non-empty str, not None"),
        (lambda: control.observe("", {"status": "running"}), ValueError, "observe: run_id must be a run id such as \"run_…\", not ''"),
        (lambda: control.observe(None, {"status": "running"}), TypeError, "observe: run_id must be a run id such as \"run_…\", not None"),
        (lambda: control.observe("run_x", "running"), TypeError, "observe: observation must be a dict such as {\"status\": \"running\"}, not 'running'"),
        (lambda: control.events(42), TypeError, "events: run_id must be a run id such as \"run_…\", not 42"),
        (lambda: control.deliver(""), ValueError, "deliver: run_id must be a run id such as \"run_…\", not ''"),
        (lambda: control.run(None), TypeError, "run: run_id must be a run id such as \"run_…\", not None"),
        (lambda: control.set_clock(), TypeError, "set_clock: give set=, freeze=, advance= or reset= (clock() reads the clock)"),
        (lambda: control.runs(statsu="completed"), TypeError, "runs: unknown query 'statsu'; the names are status, limit, cursor"),
        (lambda: control.requests(operationID="RunGet"), TypeError, "requests: unknown query 'operationID'; the names are since, status, limit, operationId, cursor, all"),
        (lambda: control.reset(all="no"), TypeError, "reset: all must be a bool, not 'no'"),
        (lambda: control.clear_requests(all=1), TypeError, "clear_requests: all must be a bool, not 1"),
        (lambda: control.apply_preset(""), ValueError, "apply_preset: name must be a preset name such as \"hermes_poll_timeout\", not ''"),
        (lambda: control.delete_faults(""), ValueError, "delete_faults: id must be a rule id (or None, for every rule), not ''"),
        (lambda: control.checkpoint(5), TypeError, "checkpoint: branch must be a branch name (or None, for main), not 5"),
        (lambda: control.checkout("", "cp_x"), ValueError, "checkout: branch must be a branch name, not ''"),
        (lambda: control.checkout("main", None), TypeError, "checkout: checkpoint must be a checkpoint id such as \"cp_…\", not None"),
        (lambda: control.request("GET", "__admin/clock"), ValueError, "request: path must be a str starting with \"/\", such as \"/__admin/clock\", not '__admin/clock'"),
        (lambda: emu.get("v1/runs/run_x"), ValueError, "get: path must be a str starting with \"/\", such as \"/v1/runs\", not 'v1/runs/run_x'"),
        (lambda: emu.post(emu.url + "/v1/runs", {}), ValueError, "post: path must be a str starting with \"/\", such as \"/v1/runs\", not 'http://127.0.0.1:9/v1/runs'"),
    ]
    for call, error, message in bad:
        with pytest.raises(error) as raised:
            call()
        assert str(raised.value) == message
    control.timeout = "5"  # an attribute: checked by the call that uses it
    with pytest.raises(TypeError, match=r"^GET /__admin/clock: timeout must be a number of seconds, 0 or more \(0: no limit\), not '5'$"):
        control.clock()


def test_a_binary_that_ends_by_itself_makes_calls_raise_emulator_error_with_its_exit_and_stderr(tmp_path):
    # They raised urllib's URLError "Connection refused", and the reason the binary printed (log "off"
    # keeps its stderr in this process) was seen nowhere.
    crashing = tmp_path / "hermes-emulator"
    crashing.write_text("#!/bin/sh\necho 'hermes-emulator listening on http://127.0.0.1:9'\n"
                        "sleep 0.3\necho 'panic: boom' >&2\nexit 2\n")
    crashing.chmod(crashing.stat().st_mode | stat.S_IEXEC)

    def refused_then_exited(emu):
        deadline = time.monotonic() + 5
        while True:
            try:
                emu.control.clock()
            except EmulatorError as err:
                return str(err)
            except OSError:  # before the exit is seen: refused (URLError), or reset by a dying binary
                assert time.monotonic() < deadline, "no EmulatorError within 5 s"
                time.sleep(0.05)

    with HermesEmulator(binary=str(crashing)) as emu:
        assert refused_then_exited(emu) == "GET /__admin/clock: hermes-emulator exited (code 2) while in use; stderr: panic: boom"
        with pytest.raises(EmulatorError, match=r"^POST /v1/runs: hermes-emulator exited \(code 2\)"):
            emu.post("/v1/runs", {"input": "x"})
    with pytest.raises(EmulatorError, match=r"exited \(code 2\) while in use"):  # the first reason stays
        emu.control.clock()
    with HermesEmulator() as emu:
        os.kill(emu.pid, signal.SIGKILL)
        assert refused_then_exited(emu) == "GET /__admin/clock: hermes-emulator exited (SIGKILL) while in use; stderr: "
