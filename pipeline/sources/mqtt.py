"""Records from an MQTT topic: one message, one record (one "line" of the input format), QoS 1.

Without a checkpoint, a message is acknowledged as it arrives. With one, the broker keeps the
session (the client's identifier derives from the checkpoint directory) and a message is
acknowledged only after the commit that covers the time point it belongs to: killed at any
moment, the same command receives again every message the broker delivered after the last
commit, and skips those that came again but belong to time points the commit holds.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections import deque
from typing import Iterator

from ..files import FileProblem, TooLong
from ..mqtt import CONNECT_TIMEOUT, QOS, Address, Login, client_id, connect


class MqttSource:
    """The messages of ``url``'s topic as lines, numbered on from ``skip``'s count (the messages
    consumed before the last commit). ``digest`` chains the committed one with the bytes of the
    messages consumed since (a broker cannot be read again to check it)."""

    def __init__(self, url: str, limit: int, skip: tuple[int, str] | None, checkpoint: str | None, login: Login):
        self.address = Address.parse(url)
        self.path = str(self.address)  # (what messages name)
        self.limit = limit
        self._persistent = checkpoint is not None
        self._messages: queue.Queue = queue.Queue()
        self._number = skip[0] if skip else 0
        self._hash = hashlib.sha256(skip[1].encode() if skip and skip[0] else b"")
        self._pending: deque = deque()  # (number, message) received, not yet consumed
        self._to_ack: list = []  # consumed, to acknowledge after the next commit
        topic = self.address.topic

        subscribed = threading.Event()
        granted: list = []

        def subscribe(client) -> None:
            client.subscribe(topic, qos=QOS)

        def on_subscribe(_client, _userdata, _mid, reasons, _properties) -> None:
            granted[:] = reasons
            subscribed.set()

        self._client = connect(self.address, login, client_id(checkpoint, "in"), self._persistent,
                               manual_ack=self._persistent, on_connect=subscribe,
                               on_message=lambda _client, _userdata, message: self._messages.put(message),
                               on_subscribe=on_subscribe)
        if not subscribed.wait(CONNECT_TIMEOUT) or any(reason.is_failure for reason in granted):
            self.close()
            reason = ", ".join(str(r).lower() for r in granted) or f"no answer in {CONNECT_TIMEOUT:.0f} s"
            raise FileProblem(f"{self.path}: the broker refused the subscription ({reason})")

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()

    @property
    def lines_read(self) -> int:
        return self._number

    def consumed(self, lines: int) -> None:
        pending = self._pending
        while pending and pending[0][0] <= lines:
            message = pending.popleft()[1]
            self._hash.update(message.payload)
            self._to_ack.append(message)

    def after_commit(self) -> None:
        """The commit is on disk: the broker may forget the messages it covers."""
        for message in self._to_ack:
            self._client.ack(message.mid, message.qos)
        self._to_ack = []

    def __iter__(self) -> Iterator[str]:
        while True:
            message = self._messages.get()  # (a signal interrupts the wait)
            self._number += 1
            if self._persistent:
                self._pending.append((self._number, message))
            payload = message.payload
            if 0 < self.limit < len(payload):
                text = TooLong(payload[:200].decode("utf-8", "replace"))
                text.limit = self.limit
                yield text
            else:
                yield payload.decode("utf-8", "surrogateescape").rstrip("\r\n")

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()
