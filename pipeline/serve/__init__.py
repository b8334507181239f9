"""``dotr serve``: the run of ``dotr run``, and an HTTP service beside it (:mod:`.http`): what
holds at the last completed time point through SPARQL (:mod:`.dataset`), each time point's
output as an event (:mod:`.events`), the run's figures for Prometheus (:mod:`.metrics`), its
health.

:class:`Service` is made before the run starts (it hooks the run's output and time points) and
started after (the reasoner is built then); :meth:`Service.close` ends the events' streams and
the server.
"""

from __future__ import annotations

import sys
import threading
import time

from dotr.rules import DotrError

from ..runner import EmbeddedRun
from .dataset import Dataset
from .events import Events
from .metrics import StageTimes, exposition, registry


class AddressError(DotrError):
    """``--http`` is not HOST:PORT, or the port cannot be had."""


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; ``PORT`` alone on the loopback).

    >>> parse_address("127.0.0.1:8080"), parse_address("9000"), parse_address("[::1]:0")
    (('127.0.0.1', 8080), ('127.0.0.1', 9000), ('::1', 0))
    """
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or int(port) > 65535:
        raise AddressError(f"--http {text}: not HOST:PORT")
    return host, int(port)


class Service:
    """The HTTP service of ``run``, to listen on ``address``."""

    def __init__(self, run: EmbeddedRun, address: tuple[str, int]):
        self.run, self.address = run, address
        self.events = Events()
        self.stages = StageTimes()
        self.dataset: Dataset | None = None
        self._server = None
        self._registry = None
        self.finished = False  # the input has ended
        run.lock = threading.Lock()
        run.on_output = self.events.publish
        progress = run.on_time_point

        def time_point(t: int) -> None:
            self.stages.last_end = time.time()
            if progress is not None:
                progress(t)

        run.on_time_point = time_point
        run.on_reasoner = self._replaced

    def start(self) -> str:
        """Listen (after the run's start); returns the service's URL."""
        from .http import Server

        run = self.run
        run.reasoner.on_stage = self.stages.add
        self.dataset = Dataset(run.reasoner, run.lock)
        self._registry = registry(run, self.stages)
        try:
            self._server = Server(self.address, self)
        except OSError as err:
            raise AddressError(f"--http {self.address[0]}:{self.address[1]}: cannot listen "
                               f"({(err.strerror or str(err)).lower()})") from None
        threading.Thread(target=self._server.serve_forever, name="dotr-http", daemon=True).start()
        host, port = self._server.server_address[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    def _replaced(self, reasoner) -> None:
        """The run goes on with a new reasoner (a program change, or a time point undone under
        --on-error skip; the run's lock is held): serve it."""
        if self.dataset is not None:
            self.dataset.replace(reasoner)

    def change_program(self, body: dict) -> str:
        """``POST /program``: a program change (``{"program": PATH, "ontology": [...]}``, as a
        record's) made at the next time point; its rule file is checked now. Raises
        :class:`DotrError` for one that cannot be made."""
        from ..io import ProgramChange, program_change
        from ..swap import checked_program

        change: ProgramChange = program_change(body, None)
        checked_program(change.rules)
        with self.run.lock:
            self.run.pending_programs.append(change)
        return f"the program of {change.rules} is evaluated from the next time point on"

    def metrics(self) -> bytes:
        return exposition(self.run, self.stages, self._registry)

    def health(self) -> dict:
        counts = self.run.state.counts
        return {"status": "finished" if self.finished else "running", "last_t": self.run.reasoner.last_t,
                "time_points": counts["time points"], "records": counts["records"]}

    def serve_on(self) -> int:
        """After the input's end: go on answering until SIGINT or SIGTERM; their exit code."""
        from ..process import Interrupted

        self.finished = True
        print("dotr: the input has ended; serving what holds at its last time point until stopped",
              file=sys.stderr, flush=True)
        try:
            threading.Event().wait()
        except Interrupted as stop:
            return stop.code
        return 0

    def close(self) -> None:
        self.events.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
