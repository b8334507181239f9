"""``GET /events``: each time point's output, as ``dotr run`` writes it, to every listener as a
Server-Sent Event. A listener that falls more than :data:`BACKLOG` events behind is dropped (its
connection closed) rather than ever slowing the run.

>>> events = Events()
>>> listener = events.listen()
>>> events.publish('{"t": 1, "facts": ["a"]}\\n')
>>> frame(listener.get())
b'data: {"t": 1, "facts": ["a"]}\\n\\n'
"""

from __future__ import annotations

import queue
import threading

BACKLOG = 10_000
END = None  # (what a listener gets when the service stops)


def frame(text: str) -> bytes:
    """One event: each line of ``text`` a ``data:`` field."""
    return "".join(f"data: {line}\n" for line in text.rstrip("\n").split("\n")).encode() + b"\n"


class Events:
    """The listeners of ``GET /events`` and what the run gives them."""

    def __init__(self) -> None:
        self._listeners: set[queue.Queue] = set()
        self._lock = threading.Lock()

    def listen(self) -> queue.Queue:
        listener: queue.Queue = queue.Queue(BACKLOG)
        with self._lock:
            self._listeners.add(listener)
        return listener

    def leave(self, listener: queue.Queue) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def publish(self, text: str) -> None:
        if not self._listeners:
            return
        with self._lock:
            for listener in list(self._listeners):
                try:
                    listener.put_nowait(text)
                except queue.Full:  # (too slow: dropped)
                    self._listeners.discard(listener)
                    _end(listener)

    def close(self) -> None:
        with self._lock:
            for listener in self._listeners:
                _end(listener)
            self._listeners.clear()


def _end(listener: queue.Queue) -> None:
    try:
        listener.put_nowait(END)
    except queue.Full:
        listener.get_nowait()
        listener.put_nowait(END)
