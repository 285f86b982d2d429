"""Start hermes-emulator (an emulator of the Hermes Agent peer-run HTTP API) from Python tests.

    from hermes_emulator import HermesEmulator

    with HermesEmulator(seed=42) as emu:
        run = emu.post("/v1/runs", {"input": "hi"})          # or any HTTP client on emu.url
        emu.control.observe(run["run_id"], {"status": "completed", "output": "done"})

The binary comes from HERMES_EMULATOR_BIN, else ``hermes-emulator`` on PATH. Standard library only.
The pytest plugin (``hermes_emulator.pytest_plugin``) gives each test a fresh namespace of one
emulator per session: the ``hermes_emulator`` fixture.
"""

from __future__ import annotations

import atexit
import collections
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from typing import Any, Mapping, Optional, Sequence

from ._control import (DEFAULT_TIMEOUT, Control, ControlError, EmulatorError, check, check_path, check_seconds,
                       http_json, mark_closed)

__all__ = ["HermesEmulator", "Control", "ControlError", "EmulatorError", "find_binary", "serve_args"]

_EXE = "hermes-emulator.exe" if os.name == "nt" else "hermes-emulator"

_HOW_TO_GET = (
    "download a release binary (dist/ of the repository: `make dist`), or `go install "
    "github.com/hermes-emulator/hermes-emulator/cmd/hermes-emulator@latest`, then put it on PATH or set "
    "HERMES_EMULATOR_BIN to its path"
)

# The URL ends at white space, a slash or a quote: with log="json" the banner is a JSON line.
_BANNER = re.compile(r"listening on (https?://[^\s/\"]+)")


def find_binary(env: Optional[Mapping[str, str]] = None) -> str:
    """The binary to start: HERMES_EMULATOR_BIN, else the first ``hermes-emulator`` on PATH, in env
    (default os.environ)."""
    if env is None:
        env = os.environ
    explicit = env.get("HERMES_EMULATOR_BIN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise EmulatorError(f"HERMES_EMULATOR_BIN={explicit} is not an executable file; {_HOW_TO_GET}")
        return explicit
    found = shutil.which(_EXE, path=env.get("PATH", ""))
    if not found:
        raise EmulatorError(f"no {_EXE} binary: HERMES_EMULATOR_BIN is not set and PATH has none; {_HOW_TO_GET}")
    return found


def serve_args(
    *,
    seed: Any = None,
    port: int = 0,
    host: str = "127.0.0.1",
    admin_key: Optional[str] = None,
    db: Optional[str] = None,
    scenarios: Optional[str] = None,
    api_key: Optional[str] = None,
    log: str = "off",
    args: Sequence[str] = (),
) -> list:
    """The ``serve`` arguments for these options (see HermesEmulator); TypeError for a value of the wrong
    kind."""
    _check_serve_options("serve_args", dict(seed=seed, port=port, host=host, admin_key=admin_key, db=db,
                                            scenarios=scenarios, api_key=api_key, log=log, args=args))
    out = ["serve", "--host", host, "--port", str(port), "--log", log]
    if seed is not None:
        out += ["--seed", str(seed)]
    if admin_key:
        out += ["--admin-key", admin_key]
    if db:
        out += ["--db", db]
    if scenarios:
        out += ["--scenarios", scenarios]
    if api_key:
        out += ["--api-key", api_key]
    return out + list(args)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


# What each option of serve_args takes: a test, what it is, and whether None is as absent. The binary
# checks the values of its flags (port, log) with clear messages of its own; these catch what Python
# would turn silently into a flag (str({}), one character per argument of args="--seed 4") or fail on
# inside subprocess.
_SERVE_OPTIONS = {
    "seed": (lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool), "a number or a str", True),
    "port": (lambda v: isinstance(v, (int, str)) and not isinstance(v, bool), "a port number", False),
    "host": (_is_str, "a str", False),
    "admin_key": (_is_str, "a str", True),
    "db": (_is_str, "a str (a file path)", True),
    "scenarios": (_is_str, "a str (a file path)", True),
    "api_key": (_is_str, "a str", True),
    "log": (_is_str, '"off", "pretty" or "json"', False),
    "args": (lambda v: isinstance(v, (list, tuple)) and all(isinstance(a, str) for a in v), "a list of str", False),
}


def _check_serve_options(where: str, options: Mapping[str, Any]) -> None:
    for name, value in options.items():
        ok, what, optional = _SERVE_OPTIONS[name]
        if not (value is None and optional):
            check(ok(value), where, name, what, value)


def _admin_key_of(args: Sequence[str], env: Any) -> Optional[str]:
    """The admin key the binary will require when started with args (serve_args) in env: the last
    --admin-key among the flags, else HERMES_EMULATOR_ADMIN_KEY (when set, even empty), else
    MOCKINGBIRD_ADMIN_KEY — the binary's own order — so that ``control`` can send it."""
    key = env.get("HERMES_EMULATOR_ADMIN_KEY", env.get("MOCKINGBIRD_ADMIN_KEY"))
    args = list(args)
    i = 1
    while i < len(args):
        if args[i] == "--":
            break
        m = re.fullmatch(r"--?admin-key(?:=(.*))?", args[i], re.DOTALL)
        if m:
            if m.group(1) is not None:
                key = m.group(1)
            elif i + 1 < len(args):
                i += 1
                key = args[i]
        i += 1
    return key or None


# Children still running when this process ends are killed: at exit (atexit), and on SIGTERM or SIGHUP,
# which end Python without running atexit. Those handlers are installed only while a child runs, only
# where the signal still has its default action, and re-raise the signal, so the process ends as before.
_running: "set[subprocess.Popen]" = set()
_SIGNALS = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
_installed: set = set()


@atexit.register
def _kill_running() -> None:
    for proc in list(_running):
        proc.kill()


def _on_signal(signum: int, frame: Any) -> None:
    _kill_running()
    _running.clear()
    _restore_signals()
    os.kill(os.getpid(), signum)


def _track(proc: subprocess.Popen) -> None:
    if not _running and threading.current_thread() is threading.main_thread():
        for s in _SIGNALS:
            if signal.getsignal(s) == signal.SIG_DFL:
                signal.signal(s, _on_signal)
                _installed.add(s)
    _running.add(proc)


def _untrack(proc: subprocess.Popen) -> None:
    _running.discard(proc)
    if not _running and threading.current_thread() is threading.main_thread():
        _restore_signals()


def _restore_signals() -> None:
    for s in list(_installed):
        if signal.getsignal(s) is _on_signal:
            signal.signal(s, signal.SIG_DFL)
        _installed.discard(s)


def _exit_status(code: int) -> str:
    """A return code as Node's exit event tells it: "code 2", or the signal's name ("SIGKILL")."""
    if code >= 0:
        return f"code {code}"
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


_CLOSED = "the emulator is closed (close() was called, or its with block ended)"


class HermesEmulator:
    """A ``hermes-emulator serve`` child process on a loopback port (any free one by default).

    Use it as a context manager, or call start() and close(). Options map to serve flags: seed (--seed),
    port, host, admin_key, db, scenarios, api_key, log ("off", "pretty" or "json"; logs go to this
    process's stderr), args (more flags), binary (default: find_binary()), start_timeout (seconds),
    timeout (seconds each HTTP call of get, post and control may take in all, its answer's last byte
    included, default 30; 0: no limit; past it the call raises TimeoutError). An unknown option, or one
    of the wrong kind, raises TypeError (ValueError for a timeout out of range) before anything starts.
    Attributes once started: url, host, port, pid, control (the default namespace's control plane);
    timeout (get and post; control.timeout is the control plane's).
    """

    def __init__(self, *, binary: Optional[str] = None, start_timeout: float = 10.0,
                 timeout: float = DEFAULT_TIMEOUT, **options: Any) -> None:
        unknown = sorted(set(options) - set(_SERVE_OPTIONS))
        if unknown:
            names = ", ".join(["binary", "start_timeout", "timeout", *_SERVE_OPTIONS])
            raise TypeError(f"HermesEmulator: unknown option {unknown[0]!r}; the options are {names}")
        _check_serve_options("HermesEmulator", options)
        check(binary is None or isinstance(binary, str), "HermesEmulator", "binary", "a str (a file path)", binary)
        check_seconds("HermesEmulator", "start_timeout", start_timeout, no_limit=False)
        check_seconds("HermesEmulator", "timeout", timeout)
        self._binary = binary
        self._timeout = start_timeout
        self.timeout = timeout
        self._options = options
        self._args = serve_args(**options)
        self._proc: Optional[subprocess.Popen] = None
        self._stderr: "collections.deque[str]" = collections.deque(maxlen=50)
        self._readers: "list[threading.Thread]" = []
        self.url = ""
        self.host = ""
        self.port = 0
        self._control: Optional[Control] = None

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid if self._proc else None

    @property
    def control(self) -> Control:
        """The control plane of the default namespace; EmulatorError before the first start()."""
        if self._control is None:
            raise self._not_started()
        return self._control

    @staticmethod
    def _not_started() -> EmulatorError:
        return EmulatorError("hermes-emulator is not started: call start() first, or use HermesEmulator in a with block")

    def __enter__(self) -> "HermesEmulator":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> "HermesEmulator":
        """Starts the binary and returns once it listens, within start_timeout seconds in all;
        raises EmulatorError otherwise, and when this emulator is already running."""
        if self._proc is not None and self._proc.poll() is None:
            raise EmulatorError(f"hermes-emulator already runs (pid {self._proc.pid}): close() it before starting again")
        binary = self._binary or find_binary()
        try:
            proc = subprocess.Popen(
                [binary, *self._args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
            )
        except OSError as err:
            raise EmulatorError(f"cannot start {binary}: {err}") from err
        self._proc = proc
        _track(proc)
        lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._readers = [
            threading.Thread(target=self._pump, args=(proc.stdout, lines), daemon=True),
            threading.Thread(target=self._drain_stderr, args=(proc.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            self.url = self._await_banner(lines)
        except BaseException:
            self.close(graceful=False)
            raise
        hostport = self.url.split("://", 1)[1]
        self.host, _, port = hostport.rpartition(":")
        self.host = self.host.strip("[]")
        self.port = int(port)
        self._control = Control(self.url, admin_key=_admin_key_of(self._args, os.environ), timeout=self.timeout)
        # A binary that ends by itself (a crash, a kill) left calls failing with urllib's bare "Connection
        # refused" and its reason unseen (log "off" keeps stderr here): they fail with that reason instead.
        stderr_reader = self._readers[1]

        def exited() -> str:
            code = proc.poll()
            if code is None:
                return ""
            stderr_reader.join(1)  # its last lines
            return f"hermes-emulator exited ({_exit_status(code)}) while in use; stderr: {self._stderr_text()}"

        self._control._shared.exited = exited
        return self

    def _await_banner(self, lines: "queue.Queue[Optional[str]]") -> str:
        deadline = time.monotonic() + self._timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        def timed_out() -> EmulatorError:
            return EmulatorError(f"hermes-emulator did not report its address within {self._timeout} s; stderr: {self._stderr_text()}")

        while True:
            try:
                line = lines.get(timeout=left())
            except queue.Empty:
                raise timed_out() from None
            if line is None:  # stdout closed: the process ends (or has closed it and runs on)
                assert self._proc is not None
                try:
                    code = self._proc.wait(left())
                except subprocess.TimeoutExpired:
                    raise timed_out() from None
                # Its reason is on stderr, whose reader may not have run yet: read it to its end.
                self._readers[1].join(left())
                raise EmulatorError(f"hermes-emulator exited (code {code}) before listening: {self._stderr_text()}")
            m = _BANNER.search(line)
            if m:
                return m.group(1)

    def _stderr_text(self) -> str:
        return "".join(self._stderr).strip()

    @staticmethod
    def _pump(stream: Any, lines: "queue.Queue[Optional[str]]") -> None:
        for line in stream:  # keeps draining after the banner, so the pipe never fills
            lines.put(line)
        lines.put(None)

    def _drain_stderr(self, stream: Any) -> None:
        show = self._options.get("log", "off") != "off"
        for line in stream:
            self._stderr.append(line)
            if show:
                import sys

                sys.stderr.write(line)

    def close(self, graceful: bool = True) -> None:
        """Stops the binary: SIGTERM (graceful shutdown), SIGKILL after 5 s; then closes its output
        pipes, so no file descriptor outlives it. Idempotent. From then on get, post and control (and
        every Control its in_namespace made) raise EmulatorError at once; url, host, port and pid keep
        naming what it was."""
        proc = self._proc
        if proc is None:
            return
        if self._control is not None:
            mark_closed(self._control, _CLOSED)
        if proc.poll() is None:
            if graceful:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
            else:
                proc.kill()
            proc.wait()
        _untrack(proc)
        # The readers end at EOF, which the exit brings. A pipe is closed only once its reader is done
        # (closing it under a reader blocks on its lock); one held open by a process the binary started
        # stays with its reader, which is a daemon thread.
        for reader, stream in zip(self._readers, (proc.stdout, proc.stderr)):
            reader.join(1)
            if not reader.is_alive() and stream is not None:
                stream.close()

    def post(self, path: str, body: Any = None, headers: Optional[dict] = None) -> Any:
        """POSTs JSON to the emulator (path like "/v1/runs") and returns the decoded answer; the body
        goes as application/json unless headers give their own Content-Type.

        A convenience for tests; a non-2xx answer raises ControlError with its status and envelope, no
        answer within timeout seconds TimeoutError; EmulatorError before the first start() and after
        close().
        """
        check_path("post", path)
        self.control._check_open("POST", path)
        return http_json("POST", self.url + path, body, headers, self.timeout)

    def get(self, path: str, headers: Optional[dict] = None) -> Any:
        """GETs JSON from the emulator; a non-2xx answer raises ControlError, none within timeout
        TimeoutError; EmulatorError before the first start() and after close()."""
        check_path("get", path)
        self.control._check_open("GET", path)
        return http_json("GET", self.url + path, None, headers, self.timeout)
