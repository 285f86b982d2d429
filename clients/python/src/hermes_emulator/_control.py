"""The control-plane client (/__admin, controls.md) of hermes_emulator; standard library only."""

from __future__ import annotations

import functools
import http.client
import json
import math
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Optional


class EmulatorError(RuntimeError):
    """No binary was found, the binary did not start, or the emulator is not in the state a call needs
    (started twice, used before start(), after close() or after its binary ended by itself); the message
    says why."""

    __module__ = "hermes_emulator"  # where it is imported from (and was defined before _control)


class ControlError(Exception):
    """An answer outside 2xx: status, the envelope's message, type and (Hermes envelopes) code."""

    def __init__(self, method: str, url: str, status: int, body: str) -> None:
        self.method, self.url, self.status, self.body = method, url, status, body
        self.message, self.type, self.code = body.strip(), "", None
        try:
            env = json.loads(body).get("error")
        except (ValueError, AttributeError):
            env = None
        if isinstance(env, dict):
            self.message = env.get("message", self.message)
            self.type = env.get("type", "")
            self.code = env.get("code")
        path = urllib.parse.urlsplit(url).path
        super().__init__(f"{method} {path}: {status} {self.message}" + (f" ({self.code})" if self.code else ""))


def check(ok: bool, where: str, name: str, what: str, value: Any, error: type = TypeError) -> None:
    """Raises error("<where>: <name> must be <what>, not <value!r>") unless ok: a bad argument fails at
    the call, not as a confusing answer (the run "None", the default namespace for "") or a silent no-op."""
    if not ok:
        raise error(f"{where}: {name} must be {what}, not {value!r}")


def check_name(where: str, name: str, value: Any, what: str = "a non-empty str") -> None:
    """A name the server takes in a path or header: a str (TypeError), not empty (ValueError)."""
    check(isinstance(value, str), where, name, what, value)
    check(value != "", where, name, what, value, ValueError)


def check_seconds(where: str, name: str, value: Any, no_limit: bool = True) -> None:
    """A finite number of seconds (TypeError; a bool is none): 0 or more, 0 being no limit, or above 0
    when there is no such thing (ValueError)."""
    what = "a number of seconds, 0 or more (0: no limit)" if no_limit else "a number of seconds above 0"
    check(isinstance(value, (int, float)) and not isinstance(value, bool), where, name, what, value)
    check(math.isfinite(value) and (value >= 0 if no_limit else value > 0), where, name, what, value, ValueError)


def check_path(where: str, path: Any, example: str = "/v1/runs") -> None:
    """A path on the emulator, such as "/v1/runs": a str starting with "/"."""
    what = f'a str starting with "/", such as "{example}"'
    check(isinstance(path, str), where, "path", what, path)
    check(path.startswith("/"), where, "path", what, path, ValueError)


def check_query(where: str, query: dict, names: "tuple[str, ...]") -> None:
    """Query names a call takes, checked before anything is sent: a misspelt filter (statsu=) answered the
    unfiltered page; the server now refuses it too (400 unknown query parameter)."""
    for name in query:
        if name not in names:
            raise TypeError(f"{where}: unknown query {name!r}; the names are {', '.join(names)}")


DEFAULT_TIMEOUT = 30.0
"""Seconds an HTTP call of the package may take by default, as the Node client's timeoutMs."""


class _DeadlineSocket(socket.socket):
    """A socket each blocking call of which (connect, send, receive) waits only what is left until
    deadline (a time.monotonic() instant; None: no limit), so that a call ends by it however slowly the
    answer comes: a socket timeout alone bounds each wait, and an answer that trickles in never trips it."""

    deadline: Optional[float] = None

    def _arm(self) -> None:
        if self.deadline is None:
            self.settimeout(None)
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        self.settimeout(left)

    def connect(self, *args: Any, **kwargs: Any) -> Any:
        self._arm()
        return super().connect(*args, **kwargs)

    def send(self, *args: Any, **kwargs: Any) -> Any:
        self._arm()
        return super().send(*args, **kwargs)

    def sendall(self, *args: Any, **kwargs: Any) -> Any:
        self._arm()
        return super().sendall(*args, **kwargs)

    def recv(self, *args: Any, **kwargs: Any) -> Any:
        self._arm()
        return super().recv(*args, **kwargs)

    def recv_into(self, *args: Any, **kwargs: Any) -> Any:  # what the response's file object reads with
        self._arm()
        return super().recv_into(*args, **kwargs)


class _DeadlineConnection(http.client.HTTPConnection):
    """An HTTPConnection on a _DeadlineSocket: socket.create_connection's loop over the addresses."""

    def __init__(self, host: str, *, deadline: Optional[float], **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self.deadline = deadline

    def connect(self) -> None:
        err: Optional[OSError] = None
        for family, kind, proto, _, address in socket.getaddrinfo(self.host, self.port, 0, socket.SOCK_STREAM):
            sock = _DeadlineSocket(family, kind, proto)
            sock.deadline = self.deadline
            try:
                sock.connect(address)
            except socket.timeout:
                sock.close()
                raise
            except OSError as e:
                sock.close()
                err = e
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock = sock
            return
        raise err or OSError(f"getaddrinfo({self.host!r}) gave no address")


class _DeadlineHandler(urllib.request.HTTPHandler):
    """urllib's http: handler, on a _DeadlineConnection."""

    def __init__(self, deadline: Optional[float]) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_DeadlineConnection, deadline=self.deadline), req)


def http_json(method: str, url: str, body: Any = None, headers: Optional[dict] = None,
              timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Sends one request with an optional JSON body; returns the decoded 2xx answer (text when not JSON).
    The body goes as Content-Type: application/json unless headers give a Content-Type (any case). No
    proxy is used ($http_proxy and the like are ignored).

    timeout: seconds the whole call may take — connection, request, the answer to its last byte — (0: no
    limit; an http: URL, which is all the emulator serves); past it raises TimeoutError naming the call. A
    fault rule's delayMs above it times the call out.
    """
    check_seconds(f"{method} {urllib.parse.urlsplit(url).path}", "timeout", timeout)
    deadline = time.monotonic() + timeout if timeout > 0 else None
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None and not req.has_header("Content-type"):  # Request keeps names capitalize()d
        req.add_header("Content-Type", "application/json")
    # No proxy, whatever $http_proxy says (as Node's fetch): the emulator is local, and urllib would send
    # every call through the user's proxy unless no_proxy happened to list the address.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _DeadlineHandler(deadline))
    try:
        try:
            res = opener.open(req, timeout=timeout if timeout > 0 else None)
        except urllib.error.HTTPError as err:  # an answer outside 2xx: its body is read as a 2xx's
            with err:
                raise ControlError(method, url, err.code, err.read().decode("utf-8", "replace")) from None
        with res:
            text = res.read().decode("utf-8")
            ctype = res.headers.get("Content-Type", "")
    except (urllib.error.URLError, socket.timeout, TimeoutError) as err:
        # A timeout while connecting comes wrapped in URLError; one while reading, bare. socket.timeout
        # is TimeoutError from Python 3.10, an OSError of its own before.
        reason = err.reason if isinstance(err, urllib.error.URLError) else err
        if not isinstance(reason, (socket.timeout, TimeoutError)):
            raise
        path = urllib.parse.urlsplit(url).path
        raise TimeoutError(f"{method} {path}: no answer within {timeout} s") from err
    return json.loads(text) if ctype.startswith("application/json") else text


class _Shared:
    """What a Control shares with every Control in_namespace derives from it: closed, why calls are
    refused ("" while the emulator runs); exited, when the HermesEmulator started it, asks whether the
    binary ended by itself and answers why ("" while it runs)."""

    closed = ""
    exited: Optional[Callable[[], str]] = None


def mark_closed(control: "Control", why: str) -> None:
    """Refuses every later call of control, and of every Control in_namespace derives from it (before or
    after), with EmulatorError(why); the first reason stays. HermesEmulator.close() calls it."""
    if not control._shared.closed:
        control._shared.closed = why


def _query(query: dict) -> str:
    """"?k=v&…" for query, "" when empty. None leaves a parameter out and so does False; True is "1",
    the only value the server reads as on (all=1). As the Go client's zero fields; str(True) or
    str(None) would send "True" (read as off, silently) or "None" (a 400)."""
    kept = {k: "1" if v is True else v for k, v in query.items() if v is not None and v is not False}
    q = urllib.parse.urlencode(kept)
    return "?" + q if q else ""


class Control:
    """The control plane of one emulator, acting in one namespace (None = "default").

    timeout: seconds one call may take in all, its answer's last byte included (default 30, as the Node
    client's timeoutMs; 0: no limit); past it the call raises TimeoutError naming it. An attribute: set
    it to change later calls.

    A bad argument — a run id, namespace, preset, branch or checkpoint that is not a non-empty str, an
    unknown query name, a path without its "/" — raises TypeError (the wrong kind) or ValueError (the
    right kind, a bad value) naming the call, and sends nothing.
    """

    def __init__(self, base_url: str, namespace: Optional[str] = None, admin_key: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        url = 'an http:// or https:// URL such as "http://127.0.0.1:8827"'
        check(isinstance(base_url, str), "Control", "base_url", url, base_url)
        check(re.match(r"https?://[^/]", base_url) is not None, "Control", "base_url", url, base_url, ValueError)
        if namespace is not None:
            check_name("Control", "namespace", namespace)
        check(admin_key is None or isinstance(admin_key, str), "Control", "admin_key", "a str", admin_key)
        check_seconds("Control", "timeout", timeout)
        self.base_url = base_url.rstrip("/")
        self.namespace = namespace
        self.admin_key = admin_key
        self.timeout = timeout
        self._shared = _Shared()

    def in_namespace(self, namespace: str) -> "Control":
        """A Control acting in another namespace, with the same admin key and timeout."""
        check_name("in_namespace", "namespace", namespace)
        other = Control(self.base_url, namespace, self.admin_key, self.timeout)
        other._shared = self._shared
        return other

    def _check_open(self, method: str, path: str) -> None:
        """Raises EmulatorError, naming the call, once the emulator this control came from is closed or
        its binary ended by itself."""
        if not self._shared.closed and self._shared.exited is not None:
            mark_closed(self, self._shared.exited())
        if self._shared.closed:
            raise EmulatorError(f"{method} {urllib.parse.urlsplit(path).path}: {self._shared.closed}")

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """Any control request (path starts with /__admin); the decoded answer, else ControlError (or
        TimeoutError when no answer came within timeout; EmulatorError, sending nothing, once the
        HermesEmulator this control came from is closed)."""
        check_name("request", "method", method, "an HTTP method")
        check_path("request", path, "/__admin/clock")
        self._check_open(method, path)
        headers = {}
        if self.namespace:
            headers["x-mockingbird-namespace"] = self.namespace
        if self.admin_key:
            headers["x-mockingbird-admin-key"] = self.admin_key
        return http_json(method, self.base_url + path, body, headers, self.timeout)

    @staticmethod
    def _run(where: str, run_id: str, tail: str) -> str:
        check_name(where, "run_id", run_id, 'a run id such as "run_…"')
        return "/__admin/hermes/runs/" + urllib.parse.quote(run_id, safe="") + tail

    # Hermes controls (controls §11)
    def observe(self, run_id: str, observation: dict) -> dict:
        """Scripts what the executor reports, e.g. {"status": "completed", "output": "done"}; the new record."""
        path = self._run("observe", run_id, "/observe")
        check(isinstance(observation, dict), "observe", "observation", 'a dict such as {"status": "running"}', observation)
        return self.request("POST", path, observation)

    def events(self, run_id: str, *events: dict) -> dict:
        """Emits non-status events (message.delta, tool.started, …) on a run, in order."""
        return self.request("POST", self._run("events", run_id, "/events"), {"events": list(events)})

    def deliver(self, run_id: str) -> int:
        """Consumes the queued steer texts of a run; returns how many were removed."""
        return self.request("POST", self._run("deliver", run_id, "/steer/deliver"), {})["delivered"]

    def restart(self, owner: str) -> dict:
        """Models a gateway restart of the namespace; owner "stale" or "alive"."""
        return self.request("POST", "/__admin/hermes/restart", {"owner": owner})

    def scope(self, profile: str, identity: str) -> None:
        self.request("POST", "/__admin/hermes/scope", {"profile": profile, "identity": identity})

    def sweep(self) -> int:
        """Runs one retention sweep now; returns the number of cached runs removed."""
        return self.request("POST", "/__admin/hermes/sweep", {})["cacheRemoved"]

    def drain(self, draining: bool) -> None:
        self.request("POST", "/__admin/hermes/drain", {"draining": draining})

    def draining(self) -> bool:
        """The namespace's drain flag."""
        return self.request("GET", "/__admin/hermes/drain")["draining"]

    def runs(self, **query: Any) -> dict:
        """The namespace's runs, newest first: {"runs": [...], "next": cursor} (status=, limit=, cursor=;
        None leaves one out)."""
        check_query("runs", query, ("status", "limit", "cursor"))
        return self.request("GET", "/__admin/hermes/runs" + _query(query))

    def run(self, run_id: str) -> dict:
        """One run's full view: record, owner, reservation keys, pending approvals, queued steers, transport."""
        return self.request("GET", self._run("run", run_id, ""))

    # Scenarios (docs/scenarios.md)
    def put_scenarios(self, scenario_set: dict) -> int:
        """Replaces the namespace's scenario set with a scenario file's JSON form, {"scenarios": [...]};
        returns the number of scenarios. An invalid set raises ControlError (400, the message names the
        first bad field by path) and changes nothing; runs already admitted keep their scenario."""
        return self.request("PUT", "/__admin/hermes/scenarios", scenario_set)["scenarios"]

    def scenarios(self) -> dict:
        """The namespace's set, else the server's --scenarios default, else {"scenarios": []}."""
        return self.request("GET", "/__admin/hermes/scenarios")

    def delete_scenarios(self) -> None:
        """Leaves the namespace without scenarios (not even the --scenarios default) until the next put."""
        self.request("DELETE", "/__admin/hermes/scenarios")

    # Namespaces, clock, faults, journal, timeline (controls §4–§8)
    def reset(self, all: bool = False) -> list:
        """Clears the namespace's state (every namespace's with all=True); returns the names reset."""
        check(isinstance(all, bool), "reset", "all", "a bool", all)
        return self.request("POST", "/__admin/reset" + ("?all=1" if all else ""))["reset"]

    def namespaces(self) -> list:
        """The created namespaces."""
        return self.request("GET", "/__admin/namespaces")["namespaces"]

    def clock(self) -> dict:
        return self.request("GET", "/__admin/clock")

    def set_clock(self, **change: Any) -> dict:
        """POST /__admin/clock, e.g. set_clock(set=1700000000000, freeze=True), set_clock(advance=1500)."""
        if not change:  # the server answers the clock unchanged: a call that meant to move it did nothing
            raise TypeError("set_clock: give set=, freeze=, advance= or reset= (clock() reads the clock)")
        return self.request("POST", "/__admin/clock", change)

    def add_fault(self, rule: dict) -> dict:
        """Adds a fault rule in this namespace, e.g. {"operationId": "RunGet", "status": 503, "count": 1}."""
        return self.request("POST", "/__admin/faults", rule)

    def apply_preset(self, name: str, **overrides: Any) -> list:
        """Adds a preset's rules, e.g. apply_preset("hermes_submit_accepted_drop"); the stored rules."""
        check_name("apply_preset", "name", name, 'a preset name such as "hermes_poll_timeout"')
        return self.request("POST", "/__admin/faults/presets/" + urllib.parse.quote(name, safe=""), overrides)["rules"]

    def faults(self) -> list:
        return self.request("GET", "/__admin/faults")["faults"]

    def delete_faults(self, id: Optional[str] = None) -> None:
        """Removes the rule with that id, or every rule of every namespace without one."""
        if id is not None:
            check_name("delete_faults", "id", id, "a rule id (or None, for every rule)")
        self.request("DELETE", "/__admin/faults" + ("" if id is None else "?id=" + urllib.parse.quote(id, safe="")))

    def requests(self, **query: Any) -> dict:
        """One page of this namespace's journal, {"size": n, "requests": [...], "next": cursor}: at most
        limit= (default 1000) entries, the newest that match, oldest first; "next" (absent on the last
        page) is the cursor= of the page of older ones. Query as GET /__admin/requests (status=,
        operationId=, limit=, cursor=, since=, all=True for every namespace; None leaves one out)."""
        check_query("requests", query, ("since", "status", "limit", "operationId", "cursor", "all"))
        return self.request("GET", "/__admin/requests" + _query(query))

    def count(self, **filter: Any) -> int:
        """How many journal entries match (method=, operationId=, pathPrefix=, status=, namespace=)."""
        return self.request("POST", "/__admin/requests/count", filter)["count"]

    def clear_requests(self, all: bool = False) -> None:
        """Clears this namespace's journal (every namespace's with all=True)."""
        check(isinstance(all, bool), "clear_requests", "all", "a bool", all)
        self.request("DELETE", "/__admin/requests" + ("?all=1" if all else ""))

    def metrics(self) -> dict:
        """The metrics as JSON (requests by operation and status, scenario steps fired, …)."""
        return self.request("GET", "/__admin/metrics")

    def timeline(self) -> dict:
        """The namespace's checkpoints and branches."""
        return self.request("GET", "/__admin/timeline")

    def checkpoint(self, branch: Optional[str] = None) -> dict:
        """Commits a checkpoint of the namespace's state on a branch (default main); {"id": "cp_…", …}."""
        if branch is not None:
            check_name("checkpoint", "branch", branch, "a branch name (or None, for main)")
        return self.request("POST", "/__admin/checkpoints", {} if branch is None else {"branch": branch})

    def checkout(self, branch: str, checkpoint: str) -> dict:
        """Moves a branch head to a checkpoint and restores its state and the clock."""
        check_name("checkout", "branch", branch, "a branch name")
        check_name("checkout", "checkpoint", checkpoint, 'a checkpoint id such as "cp_…"')
        return self.request("POST", "/__admin/branches/" + urllib.parse.quote(branch, safe="") + "/checkout",
                            {"checkpoint": checkpoint})
