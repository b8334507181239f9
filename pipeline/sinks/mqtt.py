"""A run's output published to an MQTT topic: one message per time point written (the line
``dotr run`` writes, without its newline; with ``--format trig`` or ``nquads``, the time point's
document), QoS 1, in order.

A commit waits until the broker has acknowledged every message published before it: a
committed time point's message reached the broker once, and is not published again by the same
command continuing after a kill. The messages of the time points after the last commit are
published again when they are evaluated again (at least once): a consumer that must see each
time point once keeps the last ``t`` it took.
"""

from __future__ import annotations

import hashlib
import threading

from ..files import FileIOError
from ..mqtt import QOS, Address, Login, client_id, connect


class MqttSink:
    """Publishes each :meth:`write` as one message to ``url``'s topic; ``committed`` counts the
    messages (and their bytes' SHA-256) of the run so far."""

    def __init__(self, url: str, committed: tuple[int, str] | None, checkpoint: str | None, login: Login):
        self.address = Address.parse(url)
        self.path = str(self.address)
        self.size = committed[0] if committed else 0  # messages published
        self._hash = hashlib.sha256(committed[1].encode() if committed and committed[0] else b"")
        self._unacknowledged: set[int] = set()  # message ids published, not yet acknowledged
        self._early: set[int] = set()  # acknowledged before publish() returned
        self._acknowledged = threading.Condition()
        self._client = connect(self.address, login, client_id(checkpoint, "out"), persistent=False)
        self._client.on_publish = self._on_publish

    def _on_publish(self, _client, _userdata, mid, _reason, _properties) -> None:
        with self._acknowledged:
            if mid in self._unacknowledged:
                self._unacknowledged.discard(mid)
            else:
                self._early.add(mid)
            self._acknowledged.notify_all()

    def write(self, text: str) -> None:
        data = text.removesuffix("\n").encode("utf-8", "surrogateescape")
        info = self._client.publish(self.address.topic, data, qos=QOS)
        if info.rc not in (0, 4):  # (4: not connected now; sent when the client reconnects)
            raise FileIOError(f"{self.path}: cannot publish (paho error {info.rc})")
        with self._acknowledged:  # (the acknowledgement may have come before publish returned)
            if info.mid in self._early:
                self._early.discard(info.mid)
            else:
                self._unacknowledged.add(info.mid)
        self._hash.update(data)
        self.size += 1

    def flush(self) -> None:
        pass  # (paho's thread sends at once)

    def sync(self, timeout: float | None = None) -> None:
        """Wait until the broker has acknowledged every message (however long a reconnection
        takes; ``timeout``: at most that long, then :class:`FileIOError`)."""
        with self._acknowledged:
            if not self._acknowledged.wait_for(lambda: not self._unacknowledged, timeout):
                raise FileIOError(f"{self.path}: {len(self._unacknowledged)} message(s) not acknowledged by the "
                                  f"broker in {timeout:.0f} s")

    @property
    def committed(self) -> tuple[int, str]:
        return self.size, self._hash.hexdigest()

    def close(self) -> None:
        try:
            self.sync(timeout=30.0)
        finally:
            self._client.disconnect()
            self._client.loop_stop()
