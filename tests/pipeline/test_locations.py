"""Locations that are not files (pipeline/locations.py): a new kind is a sink module and one
line of SCHEMES, used through ``dotr run`` with no file checked for it; the refusals of what
such a location cannot do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotr.pipeline import locations
from dotr.pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIRE = ROOT / "examples" / "fire"
WRITTEN: list[str] = []


class ListSink:
    """A sink that keeps what it is given (in WRITTEN)."""

    def __init__(self, location, committed, checkpoint, login):
        self.location, self.committed = location, committed or (0, "")

    def write(self, text: str) -> None:
        WRITTEN.append(text)

    def flush(self) -> None:
        pass

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_new_kind_of_output_is_a_sink_and_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(locations.SCHEMES, "memory", ("unused:Source", f"{__name__}:ListSink"))
    WRITTEN.clear()
    code = main(["run", "-q", "--rules", str(FIRE / "rules.dotr"), "--ontology", str(FIRE / "ontology.ttl"),
                 "--input", str(FIRE / "stream.jsonl"), "--output", "memory://here/out"])
    assert code == 0
    assert not (Path.cwd() / "memory:").exists()
    out = tmp_path / "out.jsonl"
    assert main(["run", "-q", "--rules", str(FIRE / "rules.dotr"), "--ontology", str(FIRE / "ontology.ttl"),
                 "--input", str(FIRE / "stream.jsonl"), "--output", str(out)]) == 0
    assert "".join(WRITTEN) == out.read_text() and [json.loads(line)["t"] for line in WRITTEN]


@pytest.mark.parametrize("extra, words", [
    (["--input", "mqtt://localhost:1/a", "--engine", "spark"], "a mqtt:// location is read and written by the embedded"),
    (["--input", "mqtt://localhost:1/a", "--follow"], "a mqtt:// input is read until the run is stopped"),
    (["--input", "mqtts://localhost:1/a", "--input-format", "trig"], "a mqtts:// input's messages are JSON Lines"),
])
def test_what_a_topic_cannot_do_is_refused_before_anything_loads(extra, words, capsys):
    assert main(["run", "-q", "--rules", str(FIRE / "rules.dotr"), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
