"""``dotr run`` with a broker's topics as input and output (a mosquitto of the test's own):
records in through the broker give the messages ``dotr run`` prints on the same records; killed
with -9 and run again with ``--checkpoint``, nothing is lost and nothing committed is published
twice; SIGTERM ends a live run with a commit. Skipped when mosquitto is not installed."""

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dotr.pipeline import state_file
from dotr.pipeline.mqtt import Address

from .broker import needs_mosquitto

ROOT = Path(__file__).parents[2]
COOLING = ROOT / "examples" / "cooling"
FIRE = ROOT / "examples" / "fire"
pytestmark = needs_mosquitto


def _cooling_lines(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    return [json.dumps({"t": t, "facts": [f"temp({rnd.choice([1, 50, 120, 160])})"]}) for t in range(n)]


def _reference(tmp_path: Path, rules: Path, lines: list[str], *args: str) -> list[str]:
    """What ``dotr run`` prints for ``lines`` read from a file (the last time point left out: on
    a topic it is complete only when a later record comes)."""
    stream = tmp_path / "reference.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, "-m", "dotr", "run", "-q", "--rules", str(rules), *args, "--input",
                          str(stream)], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    last = json.loads(lines[-1])["t"]
    return [line for line in out if json.loads(line)["t"] != last]


def _start(rules: Path, *args: str) -> subprocess.Popen:
    """``dotr run`` in the background, once it is subscribed."""
    proc = subprocess.Popen([sys.executable, "-m", "dotr", "run", "-q", "--rules", str(rules), *args], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert line.startswith("dotr: subscribed to mqtt://"), line + proc.stderr.read()
    return proc


def test_records_through_the_broker_give_what_dotr_run_prints(broker, tmp_path):
    lines = open(FIRE / "stream.jsonl").read().splitlines() + [json.dumps({"t": 10**6, "facts": []})]
    expected = _reference(tmp_path, FIRE / "rules.dotr", lines, "--ontology", str(FIRE / "ontology.ttl"))
    out = broker.collect("conclusions")
    proc = _start(FIRE / "rules.dotr", "--ontology", str(FIRE / "ontology.ttl"), "--input", broker.url("readings"),
                  "--output", broker.url("conclusions"))
    try:
        broker.publish("readings", lines)
        assert out.take(len(expected)) == expected
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert out.rest(0.5) == []
    finally:
        proc.kill()
        out.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_killed_and_run_again_with_a_checkpoint_loses_nothing_and_repeats_nothing_committed(broker, tmp_path, seed):
    lines = _cooling_lines(241, seed)  # (the last, t = 240, completes the one before)
    rules = COOLING / "rules.dotr"
    expected = _reference(tmp_path, rules, lines, "--all-time-points")
    checkpoint = tmp_path / "checkpoint"
    command = ("--all-time-points", "--input", broker.url("in"), "--output", broker.url("out"), "--checkpoint",
               str(checkpoint), "--commit-every", "7")
    out = broker.collect("out")
    first = _start(rules, *command)
    try:
        broker.publish("in", lines[:150])
        seen = out.take(random.Random(seed).randrange(20, 120))  # killed at some point of the run
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        seen += out.rest(2.0)  # (what the killed run published before it died: in flight on a loaded machine)
        broker.publish("in", lines[150:])  # while no run is there: the broker keeps them for the session
        committed = state_file.read(checkpoint / "state.dotr", "checkpoint")[1]["run"]["output"][0]
        assert 0 < committed <= len(seen)
        second = _start(rules, *command)
        again = out.take(len(expected) - committed)
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 143
    finally:
        first.kill()
        out.close()
    assert seen == expected[:len(seen)]  # the first run: in order, nothing wrong
    assert again == expected[committed:]  # the second: from the last commit on, nothing lost or repeated
    assert out.rest(0.5) == []


def test_sigterm_commits_and_the_same_command_continues(broker, tmp_path):
    lines = _cooling_lines(61)
    rules = COOLING / "rules.dotr"
    expected = _reference(tmp_path, rules, lines, "--all-time-points")
    checkpoint = tmp_path / "checkpoint"
    command = ("--all-time-points", "--input", broker.url("in"), "--output", broker.url("out"), "--checkpoint",
               str(checkpoint))
    out = broker.collect("out")
    proc = _start(rules, *command)
    try:
        broker.publish("in", lines[:30])
        seen = out.take(29)  # t = 29 waits for a later record
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143
        assert state_file.read(checkpoint / "state.dotr", "checkpoint")[1]["run"]["output"][0] == 29
        broker.publish("in", lines[30:])
        proc = _start(rules, *command)
        seen += out.take(len(expected) - 29)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
    finally:
        proc.kill()
        out.close()
    assert seen == expected


def test_a_broker_that_is_not_there_is_one_line(tmp_path):
    from tests.pipeline.broker import _free_port

    port = _free_port()
    run = subprocess.run([sys.executable, "-m", "dotr", "run", "-q", "--rules", str(COOLING / "rules.dotr"),
                          "--input", f"mqtt://user:secret@127.0.0.1:{port}/in"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr == f"dotr: mqtt://127.0.0.1:{port}/in: cannot connect (connection refused)\n"  # (no password)


def test_a_password_file_that_cannot_be_read_is_one_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dotr", "run", "-q", "--rules", str(COOLING / "rules.dotr"),
                          "--input", "mqtt://127.0.0.1:1/in", "--mqtt-password-file", str(tmp_path / "none")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (2, f"dotr: --mqtt-password-file {tmp_path / 'none'}: cannot be read "
                                               "(no such file or directory)\n")


def test_tls_files_that_cannot_be_used_are_one_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dotr", "run", "-q", "--rules", str(COOLING / "rules.dotr"),
                          "--input", "mqtts://127.0.0.1:1/in", "--mqtt-ca", str(tmp_path / "none.pem")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (2, "dotr: mqtts://127.0.0.1:1/in: the TLS files cannot be used "
                                               "(no such file or directory)\n")


def test_addresses():
    a = Address.parse("mqtt://[::1]:1884/a%23b/#")
    assert (a.host, a.port, a.topic) == ("::1", 1884, "a#b/#")
    for bad in ("mqtt://host", "mqtt://host/", "mqtt:///topic", "mqtt://host:x/t"):
        with pytest.raises(Exception, match="mqtt://"):
            Address.parse(bad)
