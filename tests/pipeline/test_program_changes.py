"""Program changes in the stream (docs/language.md, "Changing the program"), through ``dotr
run``: generated whole programs swapped at random time points agree with the composition
reference read as the docs define a change (program P before T; from T on, P' over the stream
from T - reach(P) on, as if it had begun there), with background changes before and after the
swap and a new background file; and the bad records a change can be."""

from __future__ import annotations

import json
import random
from collections import Counter
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dotr.pipeline import state_file, swap
from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner
from dotr.pipeline.history import reach
from dotr.rules import DotrError, check, check_text
from tests.pipeline.composition_reference import reference_output
from tests.pipeline.runs import DOTR, finish_after_kills
from tests.strategies.composition import DATALOG, EVENTS, PATTERNS, lars_rule, programs, streams, streams_with_changes

HERE = Path(__file__).parent


def write_stream(path: Path, records, swap: dict | None = None) -> None:
    """The records as JSON Lines, ``swap`` (a record with "t") placed before the first record of a
    later time point."""
    lines, placed = [], swap is None
    for t, facts, payload, change in records:
        if not placed and t > swap["t"]:
            lines.append(swap)
            placed = True
        record = {"t": t, "facts": facts}
        if payload:
            record["turtle"] = payload
        if change:
            record["background"] = change
        lines.append(record)
    if not placed:
        lines.append(swap)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def run(tmp: Path, *options: str) -> tuple[int, list[dict]]:
    out = tmp / "out.jsonl"
    code = main(["run", "-q", "--rules", str(tmp / "p.dotr"), "--ontology", str(tmp / "bg.ttl"),
                 "--input", str(tmp / "stream.jsonl"), "--output", str(out), "--full-iris", *options])
    return code, [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def expected_output(tmp: Path, records, swap_t: int, new_background: bool) -> list[dict]:
    """P's reference records before T (P evaluated up to T), then P''s from T on over the records
    of the time points from T - reach(P) on (from the first record when P keeps all), with the
    background changes made up to that start made at it, in time order (each time point's
    removals first, as docs/cli.md says)."""
    before = records + [(swap_t, [], None, None)]
    old = [r for r in reference_output(tmp / "p.dotr", (tmp / "bg.ttl").read_text(), before, False)
           if r["t"] < swap_t]
    kept_reach = reach(check(tmp / "p.dotr"))
    first = min(t for t, *_ in before)
    start = first if kept_reach is None else max(first, swap_t - kept_reach)
    at: dict[int, dict] = {}  # the changes before start, by time point: all removals, then all additions
    kept = []
    for t, facts, payload, change in records:
        if t <= start and change:  # (start's own after the earlier ones: one change at start, in time order)
            point = at.setdefault(t, {"add": [], "remove": []})
            point["add"] += change.get("add", [])
            point["remove"] += change.get("remove", [])
            change = None
        if t >= start:
            kept.append((t, facts, payload, change))
    earlier = {"add": [], "remove": []}  # (a background fact removed then added again: in time order)
    for t in sorted(at):
        earlier = _then(earlier, at[t])
    opening = (start, [], None, earlier if earlier["add"] or earlier["remove"] else None)
    after = [opening] + [r for r in kept if r[0] < swap_t] + [(swap_t, [], None, None)] + \
        [r for r in kept if r[0] >= swap_t]
    background = (tmp / ("bg2.ttl" if new_background else "bg.ttl")).read_text()
    new = [r for r in reference_output(tmp / "p2.dotr", background, after, False) if r["t"] >= swap_t]
    return old + new


def _then(first: dict, second: dict) -> dict:
    """One background change doing ``first`` then ``second`` (removals, then additions, each)."""
    added = [f for f in first["add"] if f not in second.get("remove", [])] + second.get("add", [])
    removed = [f for f in first["remove"] if f not in second.get("add", [])] + second.get("remove", [])
    return {"add": list(dict.fromkeys(added)), "remove": list(dict.fromkeys(removed))}


def swap_agrees(tmp: Path, old, new, records, swap_t: int, new_background: bool, *options: str) -> list[dict]:
    for name, (rules, turtle, _) in (("p", old), ("p2", new)):
        (tmp / f"{name}.dotr").write_text(rules)
        (tmp / ("bg.ttl" if name == "p" else "bg2.ttl")).write_text(turtle)
        assume(check(tmp / f"{name}.dotr").ok)  # (a generated negation can close a cycle: not a program)
    swap = {"t": swap_t, "program": str(tmp / "p2.dotr")}
    if new_background:
        swap["ontology"] = [str(tmp / "bg2.ttl")]
    write_stream(tmp / "stream.jsonl", records, swap)
    code, actual = run(tmp, *options)
    assert code == 0
    expected = expected_output(tmp, records, swap_t, new_background)
    assert actual == expected, (old[0], new[0], records, swap_t)
    return actual


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), programs(), streams_with_changes(), st.integers(0, 12), st.booleans())
def test_a_program_swapped_at_a_random_time_point_agrees_with_the_reference(tmp_path_factory, old, new, records,
                                                                           swap_t, new_background):
    swap_agrees(tmp_path_factory.mktemp("case"), old, new, records, swap_t, new_background)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), programs(), streams_with_changes(), st.integers(0, 12), st.booleans())
def test_a_program_swapped_at_a_random_time_point_agrees_with_the_reference_at_length(
        tmp_path_factory, old, new, records, swap_t, new_background):
    swap_agrees(tmp_path_factory.mktemp("case"), old, new, records, swap_t, new_background)


@st.composite
def same_stage_programs(draw):
    """A program, and the same program with a temporal rule more: a change that keeps the
    ontological part, whose stage the new program takes over (``pipeline.swap.same_stage``)."""
    rules, turtle, features = draw(programs())
    return (rules, turtle, features), (rules + "\n" + draw(lars_rule(7, Counter())), turtle, features)


@st.composite
def same_background_programs(draw):
    """A program, and the same program with Datalog rules added and removed (and maybe a
    temporal rule, or events and a pattern, more): a change whose stage's rules change in place
    (``pipeline.swap.same_background``)."""
    rules, turtle, features = draw(programs())
    changed = rules
    for text, _ in draw(st.lists(st.sampled_from(DATALOG), min_size=1, max_size=3, unique=True)):
        changed = changed.replace("\n" + text, "") if "\n" + text in changed else changed + "\n" + text
    if draw(st.booleans()):
        changed += "\n" + draw(lars_rule(7, Counter()))
    if "event " not in changed and draw(st.booleans()):
        changed += "\n" + EVENTS + PATTERNS["P1"].format(sel=draw(st.sampled_from(["each", "last"])), w=2)
    return (rules, turtle, features), (changed, turtle, features)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(same_stage_programs(), same_background_programs()), streams(), st.integers(0, 12))
def test_a_change_on_the_running_stage_taken_over_or_its_rules_changed_in_place_agrees_with_the_reference(
        tmp_path_factory, programs, records, swap_t):
    old, new = programs
    swap_agrees(tmp_path_factory.mktemp("case"), old, new, [(*r, None) for r in records], swap_t, False)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.tuples(programs(), programs()), same_background_programs()), streams_with_changes(),
       st.integers(0, 12), st.booleans(), st.integers(0, 6))
def test_a_program_swapped_then_stopped_continues_from_its_checkpoint_as_if_never_stopped(
        tmp_path_factory, programs, records, swap_t, new_background, stop_after):
    """As a kill would, but at a chosen moment: the run stops at a bad record (``--on-error
    stop`` commits the time points before it), the record is taken out, and the same command
    continues from the checkpoint. Whole programs, or a program and the same with other Datalog
    rules (whose stage's rules change in place when the stream changes no background)."""
    tmp = tmp_path_factory.mktemp("case")
    expected = swap_agrees(tmp, *programs, records, swap_t, new_background)
    stream = tmp / "stream.jsonl"
    lines = stream.read_text().splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if json.loads(line)["t"] >= swap_t + stop_after), len(lines))
    bad = json.dumps({"t": swap_t + stop_after, "facts": ["broken("]}) + "\n"
    stream.write_text("".join(lines[:at] + [bad] + lines[at:]))
    checkpoint = ("--checkpoint", str(tmp / "ck"))
    assert run(tmp, *checkpoint)[0] == 3
    stream.write_text("".join(lines))
    code, actual = run(tmp, *checkpoint)
    assert code == 0
    assert actual == expected



# ---------------------------------------------------------------------------------------------
# Changes that cannot be applied: bad records, the running program runs on

HOT = "hot(X) :- [2] <> temp(X, V), V > 30 .\n"
WARM = "warm(X) :- [2] <> temp(X, V), V > 28 .\n"
TEMPS = [{"t": 1, "facts": ["temp(a, 29)"]}, {"t": 2, "facts": ["temp(a, 31)"]}, {"t": 4, "facts": ["temp(b, 29)"]}]


def run_records(tmp: Path, records: list[dict], *options: str, rules: str = HOT) -> tuple[int, list[dict]]:
    (tmp / "p.dotr").write_text(rules)
    (tmp / "bg.ttl").write_text("")
    (tmp / "stream.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run(tmp, *options)


def with_change(change: dict) -> list[dict]:
    return TEMPS[:2] + [{"t": 3, **change}] + TEMPS[2:]


@pytest.mark.parametrize("change, rules, reason", [
    ({"program": "bad.dotr"}, "warm(X) :- temp(X, V), V > 28\n", "bad.dotr:1:30: error[E001]: unexpected end of input"),
    ({"program": "absent.dotr"}, None, "error[E002]: cannot read absent.dotr"),
    ({"program": "bad.dotr", "ontology": ["absent.ttl"]}, WARM, "the ontology file absent.ttl: no such file"),
    ({"program": "bad.dotr"}, "@timeunit ms .\n" + WARM, "the new program's time unit (ms) is not the running one's"),
    ({"ontology": ["bg.ttl"]}, None, '"ontology" comes with "program"'),
    ({"program": 3}, None, '"program" is the path of a rule file'),
])
def test_a_change_that_cannot_be_applied_is_a_bad_record_and_the_program_runs_on(tmp_path, monkeypatch, capsys,
                                                                                   change, rules, reason):
    monkeypatch.chdir(tmp_path)  # (paths in records are relative to the working directory)
    if rules is not None:
        (tmp_path / "bad.dotr").write_text(rules)
    _, unchanged = run_records(tmp_path, TEMPS)
    code, out = run_records(tmp_path, with_change(change), "--on-error", "skip")
    assert code == 0 and out == unchanged
    [reject] = [json.loads(line) for line in (tmp_path / "out.jsonl.rejects.jsonl").read_text().splitlines()]
    assert reject["line"] == 3 and reason in reject["reason"] and json.loads(reject["record"]) == {"t": 3, **change}
    capsys.readouterr()
    code, out = run_records(tmp_path, with_change(change))  # --on-error stop
    err = capsys.readouterr().err
    # (a malformed record stops the run as it is read, before the time point ahead of it is written)
    assert code == 3 and out == unchanged[:0 if "program" not in change or change["program"] == 3 else 1]
    assert "Traceback" not in err
    assert err.startswith(f"{tmp_path / 'stream.jsonl'}:line 3: ") and reason in err


def test_a_change_failing_on_the_running_stage_is_a_bad_record_and_the_program_runs_on(tmp_path, monkeypatch):
    """The new program takes the running stage over (the ontological part is the same), then
    exceeds the budget evaluating the history: the change is not made, the running program is
    restored and runs on."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p2.dotr").write_text("pair(X, Y) :- [2] <> temp(X, V), [2] <> temp(Y, W) .\n" + HOT)
    many = [{"t": t, "facts": [f"temp(s{i}, {29 + t})" for i in range(12)]} for t in range(1, 6)]
    records = many[:3] + [{"t": 4, "program": "p2.dotr"}] + many[3:]
    _, unchanged = run_records(tmp_path, many, "--max-derived", "100")
    code, out = run_records(tmp_path, records, "--on-error", "skip", "--max-derived", "100")
    assert code == 0 and out == unchanged and out[-1]["t"] == 5
    reject = json.loads((tmp_path / "out.jsonl.rejects.jsonl").read_text())
    assert reject["line"] == 4 and "derived more than 100 facts" in reject["reason"]


def test_a_program_writing_what_the_format_cannot_hold_is_a_bad_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p2.dotr").write_text("warm(X) :- temp(X, V), V > 28 .\n")
    rules = "@prefix : <http://ex.org/> .\n:Hot(?x) :- temp(?x, ?v), ?v > 30 .\n"
    code, _ = run_records(tmp_path, with_change({"program": "p2.dotr"}), "--format", "nquads", "--on-error", "skip",
                          rules=rules)
    assert code == 0
    reject = json.loads((tmp_path / "out.jsonl.rejects.jsonl").read_text())
    assert "--format nquads writes RDF triples, and these of the new program's are not: warm/1" in reject["reason"]


def test_a_bad_change_after_a_good_one_leaves_the_new_program_running(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p2.dotr").write_text(WARM)
    records = TEMPS[:2] + [{"t": 3, "program": "p2.dotr"}, {"t": 4, "program": "absent.dotr", "facts": ["temp(b, 29)"]}]
    code, out = run_records(tmp_path, records, "--on-error", "skip")
    assert code == 0
    assert out == [{"t": 2, "facts": ["hot(a)"]}, {"t": 3, "facts": ["warm(a)"]},
                   {"t": 4, "facts": ["warm(a)", "warm(b)"]}]


def test_the_cooling_example_retuned_mid_stream_matches_its_golden_output(monkeypatch, tmp_path):
    """examples/cooling/retune.jsonl: the thresholds change at t = 8; the new program's
    ``[3] @T`` windows see the readings before it at once (veryHot(5) at 8)."""
    root = HERE.parents[1]
    monkeypatch.chdir(root)  # (the record names examples/cooling/retuned.dotr)
    cooling = root / "examples" / "cooling"
    out = tmp_path / "out.jsonl"
    assert main(["run", "-q", "--rules", str(cooling / "rules.dotr"), "--ontology", str(cooling / "ontology.ttl"),
                 "--input", str(cooling / "retune.jsonl"), "--output", str(out)]) == 0
    assert out.read_text() == (HERE / "golden" / "cooling-retune.jsonl").read_text()


# ---------------------------------------------------------------------------------------------
# Across a kill: the checkpoint knows the program in effect; --upgrade

COOLING = HERE.parents[1] / "examples" / "cooling"


def cooling_stream(path: Path, n: int, seed: int, change_at: int | None = None, program: str = "") -> Path:
    rnd = random.Random(seed)
    lines = []
    for t in range(n):
        if t == change_at:
            lines.append(json.dumps({"t": t, "program": program}))
        lines.append(json.dumps({"t": t, "facts": [f"temp({rnd.choice([1, 50, 95, 120, 140, 160])})"]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def cooling_args(tmp: Path, stream: Path, output: str, *extra: str) -> list[str]:
    return [*DOTR, "--rules", str(tmp / "rules.dotr"), "--ontology", str(COOLING / "ontology.ttl"),
            "--input", str(stream), "--output", str(tmp / output), *extra]


#: the retuned program with its ontological rule replaced by two (its stage's rules change in place)
RETUNED_RULES = (COOLING / "retuned.dotr").read_text().replace(
    "overLimit(Tank, V) :-", "cooled(Tank) :- :monitors(S, Tank), :TemperatureSensor(S) .\n"
    "nearLimit(Tank, V) :- temp(V), cooled(Tank), :designLimit(Tank, L), V + 25 > L .\nunused(Tank, V) :-")


@pytest.mark.parametrize("seed", [random.randrange(10**6)])  # other moments in every run
@pytest.mark.parametrize("retuned", [(COOLING / "retuned.dotr").read_text(), RETUNED_RULES],
                         ids=["stage taken over", "stage's rules changed"])
def test_killed_with_minus_9_around_a_program_change_the_same_command_gives_the_same_output(tmp_path, seed, retuned):
    (tmp_path / "rules.dotr").write_text((COOLING / "rules.dotr").read_text())
    (tmp_path / "retuned.dotr").write_text(retuned)
    stream = cooling_stream(tmp_path / "s.jsonl", 12000, seed, 6000, str(tmp_path / "retuned.dotr"))
    whole = subprocess.run(cooling_args(tmp_path, stream, "whole.jsonl"), capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    args = cooling_args(tmp_path, stream, "o.jsonl", "--checkpoint", str(tmp_path / "ck"), "--commit-every", "40")
    finish_after_kills(args, random.Random(seed), tmp_path / "o.jsonl", tmp_path / "ck", seed, cwd=tmp_path)
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes(), seed
    assert retuned == (COOLING / "retuned.dotr").read_text() or b"nearLimit" in (tmp_path / "o.jsonl").read_bytes()


def test_a_rule_file_edited_before_a_restart_is_refused_unless_upgrade_applies_it_at_the_next_time_point(tmp_path):
    (tmp_path / "rules.dotr").write_text((COOLING / "rules.dotr").read_text())
    stream = cooling_stream(tmp_path / "s.jsonl", 3000, 1)
    old = subprocess.run(cooling_args(tmp_path, stream, "old.jsonl"), capture_output=True, text=True)
    (tmp_path / "rules.dotr").write_text((COOLING / "retuned.dotr").read_text())
    new = subprocess.run(cooling_args(tmp_path, stream, "new.jsonl"), capture_output=True, text=True)
    assert old.returncode == new.returncode == 0
    (tmp_path / "rules.dotr").write_text((COOLING / "rules.dotr").read_text())
    args = cooling_args(tmp_path, stream, "o.jsonl", "--checkpoint", str(tmp_path / "ck"), "--commit-every", "50")
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "o.jsonl"
    while proc.poll() is None and not (out.exists() and out.stat().st_size > 2000):
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    (tmp_path / "rules.dotr").write_text((COOLING / "retuned.dotr").read_text())
    refused = subprocess.run(args, capture_output=True, text=True)
    assert refused.returncode == 2 and "the rule file" in refused.stderr and "--upgrade" in refused.stderr
    assert "Traceback" not in refused.stderr
    upgraded = subprocess.run([*args, "--upgrade"], capture_output=True, text=True)
    assert upgraded.returncode == 0, upgraded.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    before = [json.loads(line) for line in (tmp_path / "old.jsonl").read_text().splitlines()]
    after = [json.loads(line) for line in (tmp_path / "new.jsonl").read_text().splitlines()]
    # the old program's output up to a time point T inside the stream, the new one's from T on
    # (the cooling program reaches back 24 ticks: the new one over those is the new one's output)
    cut = next(i for i, (a, b) in enumerate(zip(written, before)) if a != b)
    change_t = written[cut]["t"]
    assert 0 < change_t < 3000 and written == before[:cut] + [r for r in after if r["t"] >= change_t]
    again = subprocess.run([*args, "--upgrade"], capture_output=True, text=True)  # (finished: the upgrade stands)
    assert again.returncode == 0 and "has finished" in again.stderr


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen) -> list[dict]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= n:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {n} lines ({proc.poll()})")


def test_sighup_under_follow_reads_the_rule_file_again_at_the_next_time_point_and_a_restart_continues(tmp_path):
    rules, stream, out = tmp_path / "r.dotr", tmp_path / "s.jsonl", tmp_path / "o.jsonl"
    rules.write_text(HOT)
    stream.write_text("".join(json.dumps({"t": t, "facts": ["temp(a, 31)"]}) + "\n" for t in range(3)))
    args = [*DOTR, "--rules", str(rules), "--input", str(stream), "--output", str(out), "--follow",
            "--checkpoint", str(tmp_path / "ck")]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lines(out, 2, proc)  # (t = 0 and 1; t = 2 waits for a later record)
        rules.write_text(WARM)
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        with open(stream, "a") as f:
            f.write(json.dumps({"t": 3, "facts": ["temp(b, 29)"]}) + "\n")
        written = _wait_for_lines(out, 3, proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, proc.stderr.read()
    finally:
        proc.kill()
    # the change is made at the next time point evaluated, 2, over the history kept
    assert written == [{"t": 0, "facts": ["hot(a)"]}, {"t": 1, "facts": ["hot(a)"]}, {"t": 2, "facts": ["warm(a)"]}]
    # the same command continues: the checkpoint's program is the rule file read again, as it is now
    with open(stream, "a") as f:
        f.write(json.dumps({"t": 4, "facts": []}) + "\n")
    again = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        written = _wait_for_lines(out, 4, again)
        again.send_signal(signal.SIGINT)
        assert again.wait(timeout=60) == 130, again.stderr.read()
    finally:
        again.kill()
    assert written[3] == {"t": 3, "facts": ["warm(a)", "warm(b)"]}


def test_a_snapshot_after_a_program_change_resumes_with_the_program_in_effect(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p2.dotr").write_text(WARM)
    first = TEMPS[:2] + [{"t": 3, "program": "p2.dotr"}, {"t": 4, "facts": ["temp(b, 29)"]}]
    second = [{"t": 5, "facts": ["temp(c, 29)"]}]
    _, whole = run_records(tmp_path, first + second)
    _, before = run_records(tmp_path, first, "--snapshot", str(tmp_path / "snap.state"))
    (tmp_path / "stream.jsonl").write_text("".join(json.dumps(r) + "\n" for r in second))
    out = tmp_path / "after.jsonl"
    assert main(["run", "-q", "--rules", "p2.dotr", "--resume", str(tmp_path / "snap.state"),
                 "--input", str(tmp_path / "stream.jsonl"), "--output", str(out), "--full-iris"]) == 0
    assert before + [json.loads(line) for line in out.read_text().splitlines()] == whole
    assert whole[-1] == {"t": 5, "facts": ["warm(b)", "warm(c)"]}  # (the history came through the snapshot)


# ---------------------------------------------------------------------------------------------
# The running ontological stage taken over (pipeline.swap.same_stage)

OLD = "watched(X) :- reading(X, V), critical(X) .\nrecent(X) :- [3] <> reading(X, V) .\n"
NEW = OLD + "alarm(X, high) :- [2] <> reading(X, V), V > 40 .\n"  # (a term the old program has not)
BACKGROUND = ["critical(s2)", "critical(s7)"]
RULES_CHANGED = ("seen(X) :- reading(X, V), watched(X) .\nwatched(X) :- critical(X) .\n"  # (a rule less, two more)
                 "recent(X) :- [3] <> reading(X, V) .\nalarm(X, high) :- [2] <> seen(X), reading(X, V), V > 40 .\n")


def readings(t: int) -> list[str]:
    return [f"reading(s{t}, {t * 10})", "reading(s2, 1)"]  # (a new name at every time point)


def run_old(until: int) -> Reasoner:
    old = Reasoner(check_text(OLD), BACKGROUND)
    for t in range(1, until):
        old.step(t, readings(t))
    return old


def test_a_checkpoint_after_the_stage_was_taken_over_restores_on_a_reasoner_built_from_the_files():
    """A checkpoint's state restores on a reasoner built afresh (``restore_temporal``): the new
    program's terms have the ids a fresh build gives them, though the stream brought terms
    before the change."""
    old = run_old(6)
    new = swap.swapped(old, check_text(NEW), BACKGROUND, 6, running_background=True)
    assert new.ontology is old.ontology
    for t in (6, 7):
        new.step(t, readings(t))
    restored = Reasoner(check_text(NEW), BACKGROUND)
    restored.restore_temporal(new.temporal_snapshot())
    for t in (8, 9):
        assert restored.step(t, readings(t)).facts == new.step(t, readings(t)).facts
    assert "alarm(s8,high)" in new.step(10, readings(8)).facts


def test_a_change_taking_over_the_stage_gives_what_one_building_its_own_gives():
    taken = swap.swapped(run_old(6), check_text(NEW), BACKGROUND, 6, running_background=True)
    built = swap.swapped(run_old(6), check_text(NEW), BACKGROUND, 6)
    assert built.ontology is not taken.ontology
    for t in range(6, 12):
        assert taken.step(t, readings(t)).facts == built.step(t, readings(t)).facts


@pytest.mark.parametrize("program", [NEW, RULES_CHANGED], ids=["stage taken over", "stage's rules changed"])
def test_a_change_failing_on_the_running_stage_leaves_the_running_program_restored(monkeypatch, program):
    def failing(new, history, t):
        replay(new, history, t)
        raise DotrError("no")

    replay = swap.replay
    monkeypatch.setattr(swap, "replay", failing)
    with pytest.raises(swap.NotSwapped) as raised:
        swap.swapped(run_old(6), check_text(program), BACKGROUND, 6, running_background=True)
    running, untouched = raised.value.running, run_old(6)
    assert running.built_from_files
    restored = Reasoner(check_text(OLD), BACKGROUND)  # (its terms are those of a build from the files)
    restored.restore_temporal(running.temporal_snapshot())
    for t in range(6, 10):
        facts = untouched.step(t, readings(t)).facts
        assert running.step(t, readings(t)).facts == facts
        assert restored.step(t, readings(t)).facts == facts


@pytest.mark.parametrize("new, why", [
    ("@profile rdfs .\n" + OLD, "another profile"),
    (OLD + "critical(s3) .\n", "another fact"),
])
def test_a_change_of_the_ontological_part_builds_its_own_stage(new, why):
    old = run_old(3)
    assert not swap.same_stage(old, check_text(new)), why
    assert swap.swapped(old, check_text(new), BACKGROUND, 3, running_background=True).ontology is not old.ontology


def test_a_change_after_a_background_change_builds_its_own_stage():
    old = run_old(3)
    old.change_background(["critical(s3)"])
    assert not swap.same_stage(old, check_text(NEW))


# ---------------------------------------------------------------------------------------------
# The running stage's rules changed in place (OntologicalStage.change_rules: DRed)

def test_a_change_of_the_ontological_rules_changes_them_on_the_running_stage_and_gives_what_building_gives():
    changed = swap.swapped(run_old(6), check_text(RULES_CHANGED), BACKGROUND, 6, running_background=True)
    built = swap.swapped(run_old(6), check_text(RULES_CHANGED), BACKGROUND, 6)
    assert not changed.built_from_files and built.built_from_files
    for t in range(6, 12):
        assert changed.step(t, readings(t)).facts == built.step(t, readings(t)).facts
    assert "seen(s2)" in changed.step(12, readings(12)).facts


def test_the_state_of_a_stage_whose_rules_changed_is_whole_and_resumes():
    """Its terms are not those a reasoner built from the files has: its state holds the stage
    (``Reasoner.state``), and ``Reasoner.resumed`` continues from it without a build."""
    new = swap.swapped(run_old(6), check_text(RULES_CHANGED), BACKGROUND, 6, running_background=True)
    for t in (6, 7):
        new.step(t, readings(t))
    state = new.state()
    assert "ontology" in state
    resumed = Reasoner.resumed(state, check_text(RULES_CHANGED), lambda: pytest.fail("built"), **new.options)
    for t in (8, 9, 10):
        assert resumed.step(t, readings(t)).facts == new.step(t, readings(t)).facts
    again = swap.swapped(resumed, check_text(OLD), BACKGROUND, 11, running_background=True)  # (and back)
    assert not again.built_from_files
    assert again.step(11, readings(11)).facts == run_old(11).step(11, readings(11)).facts


@pytest.mark.parametrize("new", [NEW, RULES_CHANGED], ids=["stage taken over", "stage's rules changed"])
def test_a_run_stopped_at_a_bad_record_after_a_program_change_continues_from_its_checkpoint(tmp_path, new):
    """The state committed after the change restores, and the run goes on as if never stopped.
    With a checkpoint, a change of the stage's rules builds the stage afresh: the committed state
    is the temporal state, not the whole background's (``pipeline.swap.swapped(in_place=False)``)."""
    facts = "critical(s2) .\ncritical(s7) .\n"

    def stream(seventh: list[str]) -> list[dict]:
        records = [{"t": t, "facts": readings(t) if t != 7 else seventh} for t in range(1, 11)]
        return records[:3] + [{"t": 4, "program": str(tmp_path / "p2.dotr")}] + records[3:]

    (tmp_path / "p2.dotr").write_text(new + facts)
    code, whole = run_records(tmp_path, stream(readings(7)), rules=OLD + facts)
    assert code == 0
    checkpoint = ("--checkpoint", str(tmp_path / "ck"))
    code, _ = run_records(tmp_path, stream(["reading(s7"]), *checkpoint, rules=OLD + facts)
    assert code == 3
    assert "ontology" not in state_file.read(tmp_path / "ck" / "state.dotr", "checkpoint")[1]["reasoner"]
    code, resumed = run_records(tmp_path, stream(readings(7)), *checkpoint, rules=OLD + facts)
    assert code == 0 and resumed == whole


def test_a_time_point_over_the_budget_after_the_stage_s_rules_changed_is_undone(tmp_path):
    """--on-error skip undoes it from the state taken at the change (without a checkpoint, the
    stage's rules changed in place: a whole state) and goes on as if its record had never come."""
    facts = "critical(s2) .\ncritical(s7) .\n"
    (tmp_path / "p2.dotr").write_text(RULES_CHANGED + facts)
    records = [{"t": t, "facts": readings(t)} for t in range(1, 11)]
    records = records[:3] + [{"t": 4, "program": str(tmp_path / "p2.dotr")}] + records[3:]
    without = [r for r in records if r["t"] != 5]  # (a time point's records are rejected together)
    code, expected = run_records(tmp_path, without, "--max-derived", "60", rules=OLD + facts)
    assert code == 0
    flood = {"t": 5, "facts": [f"reading(s2, {v})" for v in range(100)]}  # (the windows reach before the change)
    code, actual = run_records(tmp_path, records[:5] + [flood] + records[5:], "--max-derived", "60",
                               "--on-error", "skip", rules=OLD + facts)
    assert code == 0
    assert actual == expected
