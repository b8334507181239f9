"""A mosquitto broker of a test's own, on a free loopback port with a temporary configuration,
and small clients to publish records and collect messages (paho-mqtt)."""

from __future__ import annotations

import queue
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
needs_mosquitto = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed (Debian: "
                                                               "apt-get install mosquitto)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """``mosquitto`` listening on 127.0.0.1:``port``, keeping every message for a client away."""

    def __init__(self, folder: Path):
        self.port = _free_port()
        config = folder / "mosquitto.conf"
        config.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                          "max_queued_messages 0\nmax_inflight_messages 0\n")
        self.log = folder / "mosquitto.log"
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"mosquitto did not start: {self.log.read_text()}")

    def url(self, topic: str) -> str:
        return f"mqtt://127.0.0.1:{self.port}/{topic}"

    def client(self):
        import paho.mqtt.client as mqtt

        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-{uuid.uuid4().hex[:8]}",
                             protocol=mqtt.MQTTv5)
        client.connect("127.0.0.1", self.port)
        client.loop_start()
        return client

    def publish(self, topic: str, lines: list[str]) -> None:
        """Publish each line as one message, QoS 1, and wait for the broker's acknowledgements."""
        client = self.client()
        try:
            infos = [client.publish(topic, line, qos=1) for line in lines]
            for info in infos:
                info.wait_for_publish(10)
        finally:
            client.disconnect()
            client.loop_stop()

    def collect(self, topic: str) -> "Collector":
        return Collector(self, topic)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Collector:
    """The messages published to ``topic`` from now on, as text."""

    def __init__(self, broker: Broker, topic: str):
        self.messages: queue.Queue = queue.Queue()
        subscribed = queue.Queue()
        self.client = broker.client()
        self.client.on_message = lambda _c, _u, message: self.messages.put(message.payload.decode())
        self.client.on_subscribe = lambda *_: subscribed.put(True)
        self.client.subscribe(topic, qos=1)
        subscribed.get(timeout=10)

    def take(self, n: int, timeout: float = 60) -> list[str]:
        """The next ``n`` messages (fewer if they do not come in ``timeout`` seconds)."""
        got, deadline = [], time.monotonic() + timeout
        while len(got) < n and (left := deadline - time.monotonic()) > 0:
            try:
                got.append(self.messages.get(timeout=left))
            except queue.Empty:
                break
        return got

    def rest(self, wait: float = 1.0) -> list[str]:
        """What else comes within ``wait`` seconds."""
        return self.take(10**9, wait)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
