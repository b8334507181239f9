"""``dotr serve`` as a process with real HTTP clients: ``/sparql`` answers what ``dotr run``
printed at the time point the run is at, ``/events`` delivers every time point ``dotr run``
writes, ``/metrics`` parses as Prometheus's text, SIGTERM stops it with its exit code."""

import json
import random
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).parents[2]
FIRE = ROOT / "examples" / "fire"
B = "http://example.org/building#"
FIRE_ARGS = ["--rules", str(FIRE / "rules.dotr"), "--ontology", str(FIRE / "ontology.ttl")]


def _stream(n: int, seed: int = 1) -> list[str]:
    """Readings of sensors at locations: each time point places some sensors (and so, by the
    rules, in rooms), now and then a smoke or a temperature reading."""
    rnd = random.Random(seed)
    lines = []
    for t in range(n):
        triples = " ".join(f":s{s} :is_at_location :loc{rnd.choice('ABC')} ." for s in rnd.sample(range(6), 2))
        if rnd.random() < 0.3:
            triples += f" :r{t} a :{rnd.choice(['SmokeReading', 'TempReading'])} ; :sensor :s1 ; :value {rnd.randrange(50, 90)} ."
        lines.append(json.dumps({"t": t * 1000, "turtle": f"@prefix : <{B}> . {triples}"}))
    return lines


class Served:
    """``dotr serve`` reading its standard input, once it listens."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "dotr", "serve", "-q", *FIRE_ARGS, "--http",
                                      "127.0.0.1:0", *args], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
        line = self.proc.stderr.readline()
        assert line.startswith("dotr: serving http://"), line + self.proc.stderr.read()
        self.url = line.split()[-1]

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=30) as answer:
            return answer.read()

    def select(self, query: str, post: bool = False) -> list[dict]:
        if post:
            request = urllib.request.Request(self.url + "/sparql", query.encode(),
                                             {"Content-Type": "application/sparql-query"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                data = json.load(answer)
        else:
            data = json.loads(self.get("/sparql?" + urllib.parse.urlencode({"query": query})))
        return [{k: v["value"] for k, v in row.items()} for row in data["results"]["bindings"]]

    def events(self) -> "EventStream":
        return EventStream(self.url + "/events")

    def stop(self, signum=signal.SIGTERM) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(30)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


class EventStream:
    """The events of ``GET /events``, read by a thread as they come."""

    def __init__(self, url: str):
        self.answer = urllib.request.urlopen(url, timeout=60)
        assert self.answer.headers["Content-Type"] == "text/event-stream"
        assert self.answer.readline() == b": dotr\n"  # (the stream is open: what comes next reaches it)
        self.answer.readline()
        self.data: list[str] = []
        self.ended = threading.Event()
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.answer:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                with self.arrived:
                    self.data.append(line[len("data: "):])
                    self.arrived.notify_all()
        self.ended.set()

    def wait_for(self, n: int, timeout: float = 30) -> list[str]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.data) >= n, timeout), self.data
            return list(self.data)


def _dotr_run(tmp_path: Path, lines: list[str]) -> list[str]:
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    return subprocess.run([sys.executable, "-m", "dotr", "run", "-q", *FIRE_ARGS, "--input", str(stream)], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout.splitlines()


def test_sparql_answers_what_dotr_run_printed_at_the_time_point_the_run_is_at(tmp_path):
    lines = _stream(25)
    printed = {json.loads(line)["t"]: json.loads(line)["facts"] for line in _dotr_run(tmp_path, lines)}
    served = Served()
    try:
        events = served.events()
        served.send(lines[0])
        for i, line in enumerate(lines[1:], 1):
            served.send(line)  # (completes the time point before it: the run waits there for the next)
            event = json.loads(events.wait_for(i)[-1])
            t = event["t"]
            assert event["facts"] == printed[t]
            rows = served.select(f"SELECT ?s ?room {{ ?s <{B}is_in_room> ?room ; <{B}is_at_location> ?l }}",
                                 post=i % 2 == 0)
            assert sorted(f":is_in_room(:{r['s'].split('#')[1]},:{r['room'].split('#')[1]})" for r in rows) == \
                printed[t]
            assert json.loads(served.get("/health"))["last_t"] == t
        background = served.select(f"SELECT ?label {{ <{B}roomA> <http://www.w3.org/2000/01/rdf-schema#label> ?label }}")
        assert background == [{"label": "Room A"}]
    finally:
        served.kill()


def test_events_deliver_every_time_point_and_sigterm_ends_the_service(tmp_path):
    lines = _stream(40, seed=2)
    expected = _dotr_run(tmp_path, lines)
    served = Served()
    try:
        events = served.events()
        for line in lines:
            served.send(line)
        served.proc.stdin.close()  # (the input ends: the last time point is complete)
        assert events.wait_for(len(expected)) == expected
        assert json.loads(served.get("/health"))["status"] == "finished"
        assert served.stop() == 143
        assert events.ended.wait(10)
    finally:
        served.kill()


def test_metrics_parse_as_prometheus_text(tmp_path):
    lines = _stream(10, seed=3)
    served = Served()
    try:
        events = served.events()
        for line in lines:
            served.send(line)
        served.proc.stdin.close()
        events.wait_for(len(_dotr_run(tmp_path, lines)))
        families = {f.name: f for f in text_string_to_metric_families(served.get("/metrics").decode())}
        value = {name: families[name].samples[0].value for name in
                 ("dotr_records_read", "dotr_time_points", "dotr_outputs", "dotr_last_time_point",
                  "process_resident_memory_bytes")}
        assert value["dotr_records_read"] == value["dotr_time_points"] == 10
        assert value["dotr_last_time_point"] == 9000
        assert value["process_resident_memory_bytes"] > 0
        stages = {s.labels["stage"]: s.value for s in families["dotr_stage_seconds"].samples}
        assert {"enrich", "patterns"} <= set(stages) and all(v >= 0 for v in stages.values())
    finally:
        served.kill()


def test_bad_requests_are_answered_with_their_reason():
    served = Served()
    try:
        for path, status, words in (("/sparql?query=SELEC", 400, "does not parse"), ("/sparql", 400, "one query"),
                                    ("/nothing", 404, "no such resource")):
            with pytest.raises(urllib.error.HTTPError) as err:
                served.get(path)
            assert err.value.code == status and words in err.value.read().decode()
        assert served.stop(signal.SIGINT) == 130
    finally:
        served.kill()


def test_a_port_in_use_is_one_line():
    served = Served()
    try:
        port = served.url.rsplit(":", 1)[1]
        run = subprocess.run([sys.executable, "-m", "dotr", "serve", "-q", *FIRE_ARGS, "--http", f"127.0.0.1:{port}"],
                             cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert run.returncode == 2
        assert run.stderr == f"dotr: --http 127.0.0.1:{port}: cannot listen (address already in use)\n"
    finally:
        served.kill()


def test_after_a_time_point_undone_sparql_answers_from_the_reasoner_that_goes_on(tmp_path):
    """--on-error skip rebuilds the reasoner to undo a time point past --max-derived: /sparql and
    /health follow the new one."""
    def placed(t: int, sensors: range) -> str:
        triples = " ".join(f":s{s} :is_at_location :locA ." for s in sensors)
        return json.dumps({"t": t, "turtle": f"@prefix : <{B}> . {triples}"})

    served = Served("--on-error", "skip", "--max-derived", "60", "--rejects", str(tmp_path / "rejects.jsonl"))
    try:
        events = served.events()
        for line in (placed(0, range(2)), placed(1000, range(100, 160)), placed(2000, range(7, 9)), placed(3000, [])):
            served.send(line)
        assert [json.loads(e)["t"] for e in events.wait_for(2)] == [0, 2000]
        rows = served.select(f"SELECT ?s {{ ?s <{B}is_in_room> ?room ; <{B}is_at_location> ?l }}")
        assert sorted(r["s"].split("#")[1] for r in rows) == ["s7", "s8"]
        assert json.loads(served.get("/health"))["last_t"] == 2000
    finally:
        served.kill()
    assert [json.loads(line)["line"] for line in (tmp_path / "rejects.jsonl").read_text().splitlines()] == [2]


def _post_program(served: Served, body) -> tuple[int, str]:
    request = urllib.request.Request(served.url + "/program", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_post_program_changes_the_program_at_the_next_time_point_and_sparql_sees_the_new_one(tmp_path):
    """The new program (a rule added) is evaluated from the next time point on over what the run
    kept; /sparql answers about it; a rule file with an error is 400 naming its line and column,
    and the program runs on."""
    (tmp_path / "bad.dotr").write_text("p(X) :- q(X)\n")
    (tmp_path / "new.dotr").write_text((FIRE / "rules.dotr").read_text()
                                       + "\n:seen_at(?A, ?C) :- :is_at_location(?A, ?C) .\n")
    lines = _stream(6)
    served = Served()
    try:
        events = served.events()
        seen = f"SELECT ?s {{ ?s <{B}seen_at> ?l }}"
        for line in lines[:3]:
            served.send(line)
        events.wait_for(2)
        assert served.select(seen) == []
        code, text = _post_program(served, {"program": str(tmp_path / "bad.dotr")})
        assert code == 400 and "bad.dotr:1:13: error[E001]" in text
        assert _post_program(served, {"programme": "x"})[0] == 400
        code, text = _post_program(served, {"program": str(tmp_path / "new.dotr")})
        assert code == 202 and "from the next time point on" in text
        for line in lines[3:]:
            served.send(line)
        printed = [json.loads(e) for e in events.wait_for(5)]
        assert not any(":seen_at" in f or "seen_at" in f for e in printed[:2] for f in e["facts"])
        assert all(any("seen_at" in f for f in e["facts"]) for e in printed[2:])
        assert served.select(seen) != []
        assert served.stop() == 143
    finally:
        served.kill()
