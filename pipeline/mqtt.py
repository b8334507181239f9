"""An MQTT broker as a run's input or output (``mqtt://HOST:PORT/TOPIC``): the address, how to
log in (options or environment, never the URL that is printed), and a connected client
(paho-mqtt, MQTT 5). The source is :mod:`~dotr.pipeline.sources.mqtt`, the sink
:mod:`~dotr.pipeline.sinks.mqtt`.

>>> a = Address.parse("mqtt://ops:secret@broker.example:1884/city/+/traffic")
>>> a.host, a.port, a.topic, a.username, a.password
('broker.example', 1884, 'city/+/traffic', 'ops', 'secret')
>>> str(a)  # (what a log shows: no credentials)
'mqtt://broker.example:1884/city/+/traffic'
>>> Address.parse("mqtts://broker.example/a/#").port
8883
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from urllib.parse import unquote

from .files import FileProblem

SCHEMES = ("mqtt", "mqtts")
QOS = 1
#: how long the first connection may take before the run gives up (seconds)
CONNECT_TIMEOUT = 15.0


@dataclass
class Login:
    """How to log in and encrypt (``dotr run``'s ``--mqtt-*`` options, else the environment's
    ``DOTR_MQTT_USERNAME`` and ``DOTR_MQTT_PASSWORD``)."""

    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    @classmethod
    def from_environment(cls, username: str | None = None, password_file: str | None = None, **tls) -> "Login":
        password = None
        if password_file:
            try:
                with open(password_file, encoding="utf-8") as f:
                    password = f.read().rstrip("\r\n")
            except OSError as err:
                raise FileProblem(f"--mqtt-password-file {password_file}: cannot be read "
                                  f"({(err.strerror or str(err)).lower()})") from None
        return cls(username or os.environ.get("DOTR_MQTT_USERNAME") or None,
                   password if password is not None else os.environ.get("DOTR_MQTT_PASSWORD"), **tls)


@dataclass
class Address:
    """A topic on a broker, from ``mqtt[s]://[USER[:PASSWORD]@]HOST[:PORT]/TOPIC`` (the topic may
    hold ``/``, ``+`` and ``#``; percent escapes are decoded)."""

    host: str
    port: int
    topic: str
    tls: bool = False
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, url: str) -> "Address":
        scheme, _, rest = url.partition("://")
        where, slash, topic = rest.partition("/")
        login, at, hostport = where.rpartition("@")
        host, colon, port = hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
        if not colon:
            host, port = hostport, ""
        host = host.strip("[]")
        topic = unquote(topic)
        shown = f"{scheme}://{hostport}/{topic}"
        if scheme.lower() not in SCHEMES or not host or not slash or not topic:
            raise FileProblem(f"{shown}: not a topic's address (mqtt://HOST:PORT/TOPIC)")
        try:
            number = int(port) if port else (8883 if scheme.lower() == "mqtts" else 1883)
        except ValueError:
            raise FileProblem(f"{shown}: the port {port!r} is not a number") from None
        user, _, password = login.partition(":") if at else ("", "", "")
        return cls(host, number, topic, scheme.lower() == "mqtts", unquote(user) or None,
                   unquote(password) if at and ":" in login else None)

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}/{self.topic}"


def client_id(checkpoint: str | None, role: str) -> str:
    """The client's identifier: with a checkpoint, the same for the same checkpoint directory (the
    broker keeps its session across runs), else a new one per run."""
    if checkpoint is None:
        return f"dotr-{role}-{os.getpid()}-{os.urandom(4).hex()}"
    digest = hashlib.sha256(os.path.realpath(checkpoint).encode()).hexdigest()[:16]
    return f"dotr-{role}-{digest}"


def connect(address: Address, login: Login, identifier: str, persistent: bool, manual_ack: bool = False,
            on_connect=None, on_message=None, on_subscribe=None):
    """A client connected to ``address`` with its network loop running in a thread; it
    reconnects by itself. ``persistent``: the broker keeps the session (subscriptions, messages
    not acknowledged) while the client is away, for a day. ``on_connect(client)`` is called at
    each connection (to subscribe), ``on_message`` and ``on_subscribe`` are paho's. Raises :class:`FileProblem` naming
    the address if the broker cannot be reached or refuses the login."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=identifier, protocol=mqtt.MQTTv5,
                         manual_ack=manual_ack)
    username = login.username or address.username
    password = login.password if login.password is not None else address.password
    if username is not None:
        client.username_pw_set(username, password)
    if address.tls or login.tls:
        try:
            client.tls_set(ca_certs=login.ca_file, certfile=login.cert_file, keyfile=login.key_file)
        except (OSError, ValueError) as err:  # (ssl.SSLError is an OSError)
            reason = (getattr(err, "strerror", None) or str(err)).lower()
            raise FileProblem(f"{address}: the TLS files cannot be used ({reason})") from None
    client.reconnect_delay_set(1, 30)
    client.max_queued_messages_set(0)
    ready, outcome = threading.Event(), {}

    def connected(client, _userdata, _flags, reason, _properties) -> None:
        outcome.setdefault("reason", reason)
        if not reason.is_failure and on_connect is not None:
            on_connect(client)
        ready.set()

    client.on_connect = connected
    client.on_message = on_message  # (before connecting: a kept session's messages come at once)
    client.on_subscribe = on_subscribe
    properties = Properties(PacketTypes.CONNECT)
    properties.SessionExpiryInterval = 86400 if persistent else 0
    properties.ReceiveMaximum = 65535  # (a message stays unacknowledged until the commit after it)
    try:
        client.connect(address.host, address.port, keepalive=30, clean_start=not persistent, properties=properties)
    except (OSError, ValueError) as err:
        raise FileProblem(f"{address}: cannot connect ({(getattr(err, 'strerror', None) or str(err)).lower()})") \
            from None
    client.loop_start()
    if not ready.wait(CONNECT_TIMEOUT) or outcome["reason"].is_failure:
        client.loop_stop()
        reason = outcome.get("reason")
        raise FileProblem(f"{address}: the broker refused the connection ({str(reason).lower()})" if reason
                          else f"{address}: no answer from the broker in {CONNECT_TIMEOUT:.0f} s")
    return client
