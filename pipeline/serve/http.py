"""The HTTP side of ``dotr serve`` (the standard library's threading server): ``GET``/``POST
/sparql`` (the SPARQL 1.1 Protocol's query operation), ``GET /events``, ``GET /metrics``, ``GET
/health``. Each request has a thread of its own; the run's loop never waits for one, except that a
query asking for a time point not yet copied waits for the time point under way to end."""

from __future__ import annotations

import json
import queue
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from prometheus_client import CONTENT_TYPE_LATEST

from dotr.rules import DotrError, UsageError

from .events import END, frame

#: the longest query text read from a request (bytes)
MAX_QUERY = 1 << 20
KEEP_ALIVE = 15.0  # seconds between an idle event stream's comments


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], service):
        self.service = service
        super().__init__(address, Handler)


class Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"
    server_version = "dotr"

    def log_message(self, format, *args) -> None:  # (quiet: the run's standard error is its own)
        pass

    # ------------------------------------------------------------------------ routes
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/sparql":
            self._sparql(parse_qs(url.query).get("query"))
        elif url.path == "/events":
            self._events()
        elif url.path == "/metrics":
            self._send(200, CONTENT_TYPE_LATEST, self.server.service.metrics())
        elif url.path == "/health":
            self._send(200, "application/json", json.dumps(self.server.service.health()).encode())
        else:
            self._error(404, f"no such resource: {url.path} (/sparql, /events, /metrics, /health)")

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/program":
            self._program()
            return
        if url.path != "/sparql":
            self._error(405 if url.path in ("/events", "/metrics", "/health") else 404, f"POST {url.path}")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_QUERY:
            self._error(413, f"a query of more than {MAX_QUERY} bytes")
            return
        body = self.rfile.read(length).decode("utf-8", "replace")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "application/sparql-query":
            self._sparql([body])
        elif kind == "application/x-www-form-urlencoded":
            self._sparql(parse_qs(body).get("query"))
        else:
            self._error(415, "POST /sparql takes application/sparql-query or application/x-www-form-urlencoded")

    # ------------------------------------------------------------------------ handlers
    def _program(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_QUERY:
            self._error(413, f"a body of more than {MAX_QUERY} bytes")
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8", "replace"))
            if not isinstance(body, dict) or set(body) - {"program", "ontology"}:
                raise UsageError('the body is {"program": PATH} or {"program": PATH, "ontology": [PATH, ...]}')
            self._send(202, "text/plain; charset=utf-8",
                       (self.server.service.change_program(body) + "\n").encode())
        except (ValueError, DotrError) as err:  # (a body that is no JSON; a program that cannot be made)
            self._error(400, f"POST /program: {err}")

    def _sparql(self, queries: list[str] | None) -> None:
        if not queries or len(queries) != 1:
            self._error(400, "give one query (the parameter query)")
            return
        try:
            kind, answer = self.server.service.dataset.query(queries[0])
        except SyntaxError as err:
            self._error(400, f"the query does not parse: {err}")
            return
        except (ValueError, OSError) as err:  # (pyoxigraph's evaluation errors)
            self._error(400, f"the query cannot be evaluated: {err}")
            return
        self._send(200, kind, answer)

    def _events(self) -> None:
        events = self.server.service.events
        listener = events.listen()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b": dotr\n\n")
            self.wfile.flush()
            while True:
                try:
                    text = listener.get(timeout=KEEP_ALIVE)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                else:
                    if text is END:
                        break
                    self.wfile.write(frame(text))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # (the listener went away)
        finally:
            events.leave(listener)
            self.close_connection = True

    # ------------------------------------------------------------------------ replies
    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, "text/plain; charset=utf-8", (message + "\n").encode())
