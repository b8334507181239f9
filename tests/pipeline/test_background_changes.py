"""The background changes with the stream (docs/cli.md, "Background changes"): through dotr run
with each input format, with LARS rules, and across a snapshot and a checkpoint."""

import json
from pathlib import Path

from dotr.pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
MOVES = ROOT / "examples/moves"
GOLDEN = (ROOT / "tests/pipeline/golden/moves.jsonl").read_text()


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "out.jsonl"
    out.unlink(missing_ok=True)
    code = main(["run", "-q", "--rules", str(MOVES / "rules.dotr"), "--output", str(out), *args])
    return code, out.read_text() if out.exists() else ""


def test_a_moved_sensor_is_in_its_new_room_from_the_change_on():
    records = [json.loads(line) for line in GOLDEN.splitlines()]
    rooms = {r["t"]: [o for g in r["graphs"] for _, p, o in g if p == ":at_room"] for r in records}
    assert rooms == {12: [":roomA"], 21: [":roomB"], 32: [":roomB"]}


def test_snapshot_resume_and_checkpoint_keep_the_changed_background(tmp_path):
    lines = (MOVES / "stream.jsonl").read_text().splitlines()
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:5]) + "\n")  # up to the first change and after it
    (tmp_path / "b.jsonl").write_text("\n".join(lines[5:]) + "\n")
    state = str(tmp_path / "state.pickle")
    code, head = _run(tmp_path, "--ontology", str(MOVES / "ontology.ttl"), "--input", str(tmp_path / "a.jsonl"),
                      "--snapshot", state)
    assert code == 0
    code, tail = _run(tmp_path, "--resume", state, "--input", str(tmp_path / "b.jsonl"))
    assert code == 0 and head + tail == GOLDEN
    code, out = _run(tmp_path, "--ontology", str(MOVES / "ontology.ttl"), "--input", str(MOVES / "stream.jsonl"),
                     "--checkpoint", str(tmp_path / "ck"), "--commit-every", "1")
    assert code == 0 and out == GOLDEN


def test_trig_graphs_change_the_background(tmp_path):
    trig = tmp_path / "s.trig"
    trig.write_text("""@prefix : <http://example.org/building#> .
<urn:g:t:10> { :r1 a :TempReading ; :sensor :s1 ; :value 65 . }
<urn:dotr:background:remove:t:20> { :s2 :is_at_location :locB . }
<urn:dotr:background:add:t:20> { :s2 :is_at_location :locA . }
<urn:g:t:21> { :r4 a :SmokeReading ; :sensor :s2 . }
""")
    code, out = _run(tmp_path, "--ontology", str(MOVES / "ontology.ttl"), "--input", str(trig))
    assert code == 0
    [record] = [json.loads(line) for line in out.splitlines()]
    assert record["t"] == 21 and [o for _, p, o in record["graphs"][0] if p == ":at_room"] == [":roomA"]


def test_lars_rules_see_the_background_of_each_time_point(tmp_path):
    """A window keeps what held: ``seen`` keeps s1's smoke as it was concluded while s1 was
    watched; ``alarm`` joins the window with the background as it is now."""
    rules = tmp_path / "r.dotr"
    rules.write_text("alarm(S) :- [2] <> smoke(S), watched(S) .\nwatched(s1) .\n"
                     "flagged(S) :- smoke(S), watched(S) .\nseen(S) :- [3] <> flagged(S) .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(json.dumps(r) for r in [
        {"t": 0, "facts": ["smoke(s1)", "smoke(s2)"]},
        {"t": 1, "background": {"add": ["watched(s2)"]}},
        {"t": 2, "background": {"remove": ["watched(s1)"]}},
        {"t": 3, "facts": ["smoke(s1)"]}]) + "\n")
    out = tmp_path / "o.jsonl"
    assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out)]) == 0
    facts = {r["t"]: r["facts"] for r in map(json.loads, out.read_text().splitlines())}
    assert facts == {0: ["alarm(s1)", "flagged(s1)", "seen(s1)"],
                     1: ["alarm(s1)", "alarm(s2)", "seen(s1)"],  # smoke(s2) at 0 was not flagged then
                     2: ["alarm(s2)", "seen(s1)"],
                     3: ["seen(s1)"]}  # smoke(s1) at 3: s1 is no longer watched


def test_a_malformed_change_is_a_bad_record(tmp_path):
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 1, "background": {"move": []}}\n{"t": 2, "background": {"add": [3]}}\n')
    code, _ = _run(tmp_path, "--input", str(stream), "--on-error", "skip")
    assert code == 0
    rejects = [json.loads(line) for line in (tmp_path / "out.jsonl.rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"][:30]) for r in rejects] == [(1, '"background" is an object with'),
                                                                (2, '"background" "add" is a list o')]


def test_c_sparql_windows_see_the_changed_background(tmp_path):
    """A C-SPARQL query joins its window with the background: a sensor moved at 3 is reported in
    its new room from the evaluation at 3 on (its reading at 1 is still in the window), also across
    a checkpointed restart."""
    rules = tmp_path / "r.dotr"
    rules.write_text("""@prefix : <http://ex.org/> .
:in(s1, r1) . :in(s2, r1) .
query Hot := register compute every 1 as select ?s ?r from stream <http://ex.org/s> [range 3 step 1]
             where { ?s :hot ?v . ?s :in ?r } .
""")
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(json.dumps(r) for r in [
        {"t": 1, "facts": [":hot(s1, 1)"]},
        {"t": 2, "facts": [":hot(s2, 1)"]},
        {"t": 3, "background": {"remove": [":in(s1, r1)"], "add": [":in(s1, r2)"]}},
        {"t": 4, "background": {"remove": [":in(s2, r1)"]}},
        {"t": 5, "facts": [":hot(s1, 2)"]}]) + "\n")
    expected = {1: [{"r": "r1", "s": "s1"}], 2: [{"r": "r1", "s": "s1"}, {"r": "r1", "s": "s2"}],
                3: [{"r": "r2", "s": "s1"}, {"r": "r1", "s": "s2"}], 4: [],  # s2 is in no room from 4 on
                5: [{"r": "r2", "s": "s1"}]}
    for extra in ([], ["--checkpoint", str(tmp_path / "ck"), "--commit-every", "1"]):
        out = tmp_path / "o.jsonl"
        assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out), *extra]) == 0
        answers = {r["t"]: r["answers"]["Hot"] for r in map(json.loads, out.read_text().splitlines())
                   if "answers" in r}
        assert answers == expected


def test_the_records_of_a_time_point_change_the_background_at_once(tmp_path):
    """At a time point every removal is made first, then every addition, whatever the order of
    its records (a TriG file's graphs have none): a fact one record adds and a later one removes
    stays."""
    (tmp_path / "r.dotr").write_text("h(X) :- e(X), d(X) .\n")
    seen = ["e(b)", "e(c)"]
    records = [{"t": 1, "facts": seen, "background": {"add": ["d(b)"]}},
               {"t": 1, "background": {"add": ["d(c)"], "remove": ["d(b)"]}},
               {"t": 2, "facts": seen, "background": {"remove": ["d(c)"]}},
               {"t": 2, "background": {"add": ["d(c)"]}},
               {"t": 3, "facts": seen, "background": {"add": ["d(c)"]}},
               {"t": 3, "background": {"remove": ["d(c)", "d(b)"]}}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out.jsonl"
    assert main(["run", "-q", "--rules", str(tmp_path / "r.dotr"), "--input", str(tmp_path / "s.jsonl"),
                 "--output", str(out)]) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"t": 1, "facts": ["h(b)", "h(c)"]}, {"t": 2, "facts": ["h(b)", "h(c)"]}, {"t": 3, "facts": ["h(c)"]}]
