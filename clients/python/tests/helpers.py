"""Raw HTTP for the tests: status, headers and body of one request, or the error when none came back."""

import http.client
import json
import urllib.parse


def call(method, url, body=None, headers=None):
    """Sends one request on a new connection; returns (status, headers, decoded JSON body)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body)
        conn.request(method, u.path, body=data, headers=dict(headers or {}))
        res = conn.getresponse()
        raw = res.read()
        return res.status, res.headers, json.loads(raw) if raw else None
    finally:
        conn.close()
