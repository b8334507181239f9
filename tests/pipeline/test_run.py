"""End to end: every example through `dotr run` against its golden output; bad input handling."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "rules.dotr").exists())


def _run(example: str, tmp_path, *extra) -> tuple[int, str]:
    out = tmp_path / "out.jsonl"
    ex = ROOT / "examples" / example
    code = main(["run", "-q", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"),
                 "--input", str(ex / "stream.jsonl"), "--output", str(out), *extra])
    return code, out.read_text() if out.exists() else ""


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_matches_golden_output(example, tmp_path):
    code, text = _run(example, tmp_path)
    assert code == 0
    assert text == (ROOT / "tests/pipeline/golden" / f"{example}.jsonl").read_text()


def test_dotr_paper_rule_r_gives_exactly_the_fire_graph_at_12(tmp_path):
    _, text = _run("fire", tmp_path)
    records = [json.loads(line) for line in text.splitlines()]
    graphs = [(r["t"], g) for r in records for g in r.get("graphs", [])]
    assert len(graphs) == 1 and graphs[0][0] == 12
    assert {(p, o) for _, p, o in graphs[0][1]} == {("rdf:type", ":Fire"), (":at_room", ":roomA"), (":temp", "65")}


def test_trex_example_gives_exactly_one_fire_area_1_52():
    ex = ROOT / "examples" / "trex"
    reasoner = Reasoner.from_files(ex / "rules.dotr", [ex / "ontology.ttl"])
    stream = [(r["t"], r["facts"]) for r in map(json.loads, (ex / "stream.jsonl").read_text().splitlines())]
    emitted = [(result.t, e) for result in reasoner.run(stream) for e in result.events]
    assert emitted == [(4000, {"type": "Fire", "pattern": "Fire", "attributes": {"area": "area_1", "temperature": "52"}})]


def test_formats_trig_and_nquads(tmp_path):
    for fmt in ("trig", "nquads"):
        code, text = _run("fire", tmp_path, "--format", fmt)
        assert code == 0 and "urn:dotr:t:12" in text and "Fire" in text


def _stream(tmp_path, lines):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cooling(tmp_path, path, *extra):
    out = tmp_path / "o.jsonl"
    code = main(["run", "-q", "--rules", str(ROOT / "examples/cooling/rules.dotr"), "--input", str(path),
                 "--output", str(out), *extra])
    return code, out


def test_malformed_record_stops_with_exit_3_after_the_time_points_before_it(tmp_path, capsys):
    path = _stream(tmp_path, ['{"t": 0, "facts": ["temp(150)"]}', '{"t": 1, "facts": ["temp(150)"]}',
                              '{"t": 1, "facts": [42]}', '{"t": 2, "facts": ["temp(1)"]}'])
    code, out = _cooling(tmp_path, path)
    # t = 0 was complete (a later record arrived) and is written; t = 1 was not (the bad record
    # may have belonged to it)
    assert code == 3 and [json.loads(line)["t"] for line in out.read_text().splitlines()] == [0]
    err = capsys.readouterr().err
    assert f"{path}:line 3:" in err and "the time points before it are written" in err


def test_skip_mode_keeps_going_and_loses_nothing(tmp_path):
    good = ['{"t": 0, "facts": ["temp(50)"]}', '{"t": 2, "facts": ["temp(120)"]}']
    path = _stream(tmp_path, [good[0], "not json", '{"t": 1, "facts": ["temp("]}', good[1]])
    code, out = _cooling(tmp_path, path, "--on-error", "skip")
    assert code == 0
    rejects = [json.loads(line) for line in Path(str(out) + ".rejects.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rejects] == [2, 3] and rejects[1]["record"] == '{"t": 1, "facts": ["temp("]}'
    clean_code, clean = _cooling(tmp_path / "..", _stream(tmp_path, good))
    assert out.read_text() == clean.read_text()


def test_out_of_order_is_an_error_unless_reordered(tmp_path):
    path = _stream(tmp_path, ['{"t": 0, "facts": ["temp(50)"]}', '{"t": 3, "facts": ["temp(60)"]}',
                              '{"t": 2, "facts": ["temp(120)"]}', '{"t": 9, "facts": ["temp(1)"]}',
                              '{"t": 1, "facts": ["temp(1)"]}'])
    code, _ = _cooling(tmp_path, path)
    assert code == 3
    code, out = _cooling(tmp_path, path, "--reorder-within", "2", "--on-error", "skip")
    assert code == 0
    times = [json.loads(line)["t"] for line in out.read_text().splitlines()]
    assert times == sorted(times) and 2 in times
    rejects = Path(str(out) + ".rejects.jsonl").read_text()
    assert '"line": 5' in rejects


def test_readme_first_command_runs(tmp_path):
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("pip install -e . && dotr run"))
    dotr_part = command.split("&& ", 1)[1].split()
    proc = subprocess.run([sys.executable, "-m", "dotr", *dotr_part[1:]], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"graphs"' in proc.stdout


@pytest.mark.parametrize("example", EXAMPLES)
def test_snapshot_and_resume_give_the_uninterrupted_output(example, tmp_path):
    ex = ROOT / "examples" / example
    lines = (ex / "stream.jsonl").read_text().splitlines()
    half = len(lines) // 2 or 1
    while 0 < half < len(lines) and json.loads(lines[half])["t"] == json.loads(lines[half - 1])["t"]:
        half += 1  # split between time points
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:half]) + "\n")
    (tmp_path / "b.jsonl").write_text("\n".join(lines[half:]) + "\n")
    common = ["run", "-q", "--rules", str(ex / "rules.dotr")]
    assert main([*common, "--ontology", str(ex / "ontology.ttl"), "--input", str(tmp_path / "a.jsonl"),
                 "--output", str(tmp_path / "a.out"), "--snapshot", str(tmp_path / "state.pickle")]) == 0
    assert main([*common, "--resume", str(tmp_path / "state.pickle"), "--input", str(tmp_path / "b.jsonl"),
                 "--output", str(tmp_path / "b.out")]) == 0
    joined = (tmp_path / "a.out").read_text() + (tmp_path / "b.out").read_text()
    assert joined == (ROOT / "tests/pipeline/golden" / f"{example}.jsonl").read_text()


def test_laserpp_and_trig_inputs(tmp_path):
    text = tmp_path / "s.txt"
    text.write_text("0 3\n0 : temp(50)\n1 : temp(120), temp(130)\n")
    code, out = _cooling(tmp_path, text)
    assert code == 0 and '"steam(130)"' in out.read_text()
    trig = tmp_path / "s.trig"
    trig.write_text("@prefix : <http://example.org/building#> .\n<urn:g1> <http://dotr.invalid/time> 10 .\n"
                    "<urn:stream:t:12> { :r2 a :SmokeReading ; :sensor :s2 . :s2 :is_at_location :locB . }\n"
                    "<urn:g1> { :r1 a :TempReading ; :sensor :s1 ; :value 65 . :s1 :is_at_location :locA . }\n")
    out = tmp_path / "o.jsonl"
    ex = ROOT / "examples/fire"
    assert main(["run", "-q", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"),
                 "--input", str(trig), "--output", str(out)]) == 0
    assert [json.loads(line)["t"] for line in out.read_text().splitlines()] == [10, 12]
    assert '":Fire"' in out.read_text()


def test_changes_only(tmp_path):
    code, text = _run("cooling", tmp_path, "--changes")
    records = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and records[0]["facts"] == ["isLiquid", "liquid(50)", "normal"] and records[0]["removed"] == []
    full = [set(json.loads(line)["facts"]) for line in (ROOT / "tests/pipeline/golden/cooling.jsonl").read_text().splitlines()]
    state: set = set()
    for record, expected in zip(records, full):
        state = (state - set(record["removed"])) | set(record["facts"])
        assert state == expected


def _explain(example, t, what, capsys):
    ex = ROOT / "examples" / example
    assert main(["explain", "--rules", str(ex / "rules.dotr"), "--ontology", str(ex / "ontology.ttl"),
                 "--input", str(ex / "stream.jsonl"), "--at", str(t), what]) == 0
    return capsys.readouterr().out


def test_explain_a_derived_fact_down_to_inputs_and_background(capsys):
    out = _explain("fire", 12, "<http://example.org/building#is_in_room>(<http://example.org/building#s2>,"
                               "<http://example.org/building#roomA>)", capsys)
    assert "by :is_in_room(?A, ?B) :- :is_at_location(?A, ?C), :is_in_room(?C, ?B) ." in out
    assert "  :is_at_location(:s2,:locB): input at 12" in out
    assert "  :is_in_room(:locB,:roomA): background fact" in out


def test_explain_a_window_conclusion_and_a_graph(capsys):
    out = _explain("cooling", 4, "veryHot(4)", capsys)
    assert "by veryHot(T) :- [3] @T steam(V), V >= 150 ." in out and "[3] @4 steam(160): held in the window" in out
    out = _explain("fire", 12, "0", capsys)
    assert "pattern Fire fired on these events" in out and "HighTemp(read=:r1, room=:roomA, v=65) at 10" in out
    assert "at 10" in out and "at 12" in out


def test_explain_through_negation_assignment_and_a_variable_predicate(tmp_path, capsys):
    rules = tmp_path / "r.dotr"
    rules.write_text("@prefix : <http://ex.org/> .\n:sym(:near) .\n"
                     "P(Y, X) :- :sym(P), P(X, Y) .\n"
                     "alarm(R, S) :- hot(R), not ok(R), S = R, :near(R, Q), Q != R .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 1, "facts": ["hot(a)", "<http://ex.org/near>(b, a)", "ok(b)"]}\n')
    assert main(["explain", "--rules", str(rules), "--input", str(stream), "--at", "1", "alarm(a,a)"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["alarm(a,a): by alarm(R, S) :- hot(R), not ok(R), S = R, :near(R, Q), Q != R .",
                   "  hot(a): input at 1",
                   "  :near(a,b): by P(Y, X) :- rdf:type(P, :sym), P(X, Y) .",
                   "    :sym(:near): background fact",
                   "    :near(b,a): input at 1"], out
    assert main(["explain", "--rules", str(rules), "--input", str(stream), "--at", "1", "alarm(b,b)"]) == 1


def test_explain_names_the_event_type_a_pattern_declares_in_a_threshold_family(tmp_path, capsys):
    """Warm and Hot differ only in their FILTER's threshold: they share Warm's (the loosest)
    buffer, and the graph Hot's pattern built names Hot's events, not Warm."""
    rules = tmp_path / "r.dotr"
    rules.write_text("@prefix : <http://ex.org/> .\n"
                     "event Warm(?s, ?v) := select ?s ?v where { ?s :temp ?v filter(?v > 20) } .\n"
                     "event Hot(?s, ?v) := select ?s ?v where { ?s :temp ?v filter(?v > 40) } .\n"
                     "pattern Mild from Warm construct { ?s a :Mild } with ?s = Warm.s .\n"
                     "pattern Alarm from Hot and last Hot(s = Hot.s) as Before within 5 from Hot\n"
                     "  construct { ?s a :Alarm } with ?s = Hot.s .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 1, "facts": ["<http://ex.org/temp>(<http://ex.org/a>,50)"]}\n'
                      '{"t": 2, "facts": ["<http://ex.org/temp>(<http://ex.org/a>,45)"]}\n')
    runs = []
    for index in ("0", "1"):
        assert main(["explain", "--rules", str(rules), "--input", str(stream), "--at", "2", index]) == 0
        runs.append(capsys.readouterr().out.splitlines())
    assert runs == [["graph 0 at 2: pattern Alarm fired on these events:", "  Before: Hot(s=:a, v=50) at 1",
                     "  Hot: Hot(s=:a, v=45) at 2"],
                    ["graph 1 at 2: pattern Mild fired on these events:", "  Warm: Warm(s=:a, v=45) at 2"]], runs


def test_ms_mode_evaluates_where_the_output_changes():
    ex = ROOT / "examples" / "traffic"
    reasoner = Reasoner.from_files(ex / "rules.dotr", [ex / "ontology.ttl"])
    elements = [(r["t"], []) for r in map(json.loads, (ex / "stream.jsonl").read_text().splitlines())]
    elements[1] = (1000, ["<http://example.org/city#congestionAt>(<http://example.org/city#road1>,4)"])
    elements[2] = (2000, ["<http://example.org/city#congestionAt>(<http://example.org/city#road1>,5)"])
    times = [(r.t, r.facts) for r in reasoner.run(elements[:3] + [(9000, [])])]
    # jammed holds while both reports are in the 2 s window: until 3000, so 3001 is evaluated
    jammed = [t for t, facts in times if "jammed(<http://example.org/city#road1>)" in facts]
    assert jammed == [2000, 2001] and 3001 in [t for t, _ in times]


STAR_RULES = """@prefix : <http://ex.org/> .
query Q := register compute every 1 as select istream * from stream :s [range 2 step 1]
    where { ?x :p ?y . ?y :q ?zz } .
"""


def test_select_star_gives_the_same_output_in_every_process(tmp_path):
    """``SELECT *`` lists its variables in one order (rdflib's is a set's, which Python's hash
    seed changes): the answers are written alike by every process, and an IStream query resumed
    in another process compares its solutions with the ones it saved."""
    rules = tmp_path / "q.dotr"
    rules.write_text(STAR_RULES)
    records = [{"t": t, "stream": "http://ex.org/s", "turtle": f"<http://ex.org/a{t}> <http://ex.org/p> <http://ex.org/b> . "
                "<http://ex.org/b> <http://ex.org/q> <http://ex.org/c> ."} for t in range(4)]
    for i, part in enumerate((records[:2], records[2:])):
        (tmp_path / f"{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))

    def dotr(seed: int, *args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "dotr", "run", "-q", *args], cwd=ROOT, text=True,
                              capture_output=True, env={**os.environ, "PYTHONHASHSEED": str(seed)})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    (tmp_path / "all.jsonl").write_text((tmp_path / "0.jsonl").read_text() + (tmp_path / "1.jsonl").read_text())
    whole = {dotr(seed, "--rules", str(rules), "--input", str(tmp_path / "all.jsonl")) for seed in range(1, 5)}
    assert len(whole) == 1
    assert '{"x": ":a3", "y": ":b", "zz": ":c"}' in next(iter(whole))
    state = str(tmp_path / "state.pickle")
    for seed in range(1, 5):
        head = dotr(seed, "--rules", str(rules), "--input", str(tmp_path / "0.jsonl"), "--snapshot", state)
        tail = dotr(seed + 10, "--rules", str(rules), "--resume", state, "--input", str(tmp_path / "1.jsonl"))
        assert head + tail in whole
