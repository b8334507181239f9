"""With --on-error skip, a time point that makes more than --max-derived facts and answers is
rejected, the reasoner as if its records had never come: through `dotr run`, the output and
rejects file byte for byte those of a run without them (plus their rejects lines), wherever the
last snapshot was taken; with --checkpoint, a run killed after it continues without meeting it
again."""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dotr.pipeline import rollback
from dotr.pipeline.cli import main
from dotr.rules.engine.guard import GUARD

ROOT = Path(__file__).parents[2]
CROSS = "big(A, B, C, D) :- p(A), q(B), r(C), s(D) .\n"  # (a time point of n facts each: n^4)
PROGRAMS = {
    "windows": CROSS + "seen(X) :- [3] <> p(X) .\nkept(X) :- [2] [] q(X) .\n"
                       "lone(X) :- [4] <> r(X), not [2] <> s(X) .\n",
    "windows in ms": "@timeunit ms .\n" + CROSS + "seen(X) :- [3 ms] <> p(X) .\n"
                                                   "lone(X) :- [4 ms] <> r(X), not s(X) .\n",
    "@T and tuples": CROSS + "@T was(X) :- [5] @T p(X) .\nlast(X) :- [6 #] <> q(X) .\n",
    "sequence": "@prefix : <http://e/> .\nquery Q := select ?a ?b where { ?a :p ?x } seq { ?b :q ?y } within 4 .\n"
                + "event Big(?a, ?c, ?e) := select ?a ?c ?e where { ?a :r ?b . ?c :r ?d . ?e :r ?f } .\n",
}
LIMIT = 2000


@pytest.fixture(autouse=True)
def _guard_as_it_was():
    limit = GUARD.limit
    yield
    GUARD.limit = limit


def _facts(program: str, rnd: random.Random, many: bool) -> list[str]:
    if program == "sequence":
        if many:
            return [f"<http://e/r>(<http://e/a{i}>, <http://e/b{i}>)" for i in range(20)] + [
                "<http://e/p>(<http://e/z>, <http://e/z>)", "<http://e/q>(<http://e/z>, <http://e/z>)"]
        return [f"<http://e/{rnd.choice('pq')}>(<http://e/a{rnd.randrange(5)}>, <http://e/b{rnd.randrange(5)}>)"
                for _ in range(rnd.randrange(3))]
    if many:
        return [f"{p}({i})" for p in "pqrs" for i in range(9)]
    return [f"{rnd.choice('pqrs')}({rnd.randrange(6)})" for _ in range(rnd.randrange(3))]


def _stream(program: str, seed: int) -> tuple[list[dict], set[int]]:
    """Records, some time points of which make more than LIMIT (their times)."""
    rnd = random.Random(seed)
    records, bad, t = [], set(), 0
    for _ in range(rnd.randrange(8, 20)):
        t += rnd.choice((1, 1, 2, 3, 7))
        many = rnd.random() < 0.25
        for _ in range(rnd.choice((1, 1, 2))):
            records.append({"t": t, "facts": _facts(program, rnd, many)})
        if many:
            bad.add(t)
    return records, bad


def _write(path: Path, records: list[dict]) -> list[str]:
    lines = [json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines))
    return lines


def _run(tmp_path: Path, rules: Path, stream: Path, name: str, *extra: str) -> tuple[int, str, str]:
    out = tmp_path / f"{name}.out"
    code = main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out),
                 "--max-derived", str(LIMIT), *extra])
    rejects = tmp_path / f"{name}.out.rejects.jsonl"
    return code, out.read_text(), rejects.read_text() if rejects.exists() else ""


@pytest.mark.parametrize("ratio", [0, 1, None, float("inf")],
                         ids=["snapshot each", "often", "default", "at start only"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("extra", [(), ("--changes",), ("--all-time-points",)], ids=["", "changes", "all"])
def test_a_rejected_time_point_is_as_if_its_records_never_came(tmp_path, monkeypatch, capsys, ratio, program, extra):
    rules = tmp_path / "r.dotr"
    rules.write_text(PROGRAMS[program])
    monkeypatch.setattr(rollback, "RATIO", 20 if ratio is None else ratio)
    seen_bad = 0
    for seed in range(6):
        records, bad = _stream(program, seed)
        lines = _write(tmp_path / "s.jsonl", records)
        _write(tmp_path / "good.jsonl", [r for r in records if r["t"] not in bad])
        code, out, rejects = _run(tmp_path, rules, tmp_path / "s.jsonl", "skip", "--on-error", "skip", *extra)
        assert code == 0, capsys.readouterr().err
        good_code, good_out, _ = _run(tmp_path, rules, tmp_path / "good.jsonl", "good", *extra)
        assert good_code == 0
        assert out == good_out, (seed, bad)
        expected = [{"line": i + 1, "record": line,
                     "reason": f"time point {r['t']} derived more than {LIMIT} facts and answers (the budget per time "
                               "point; --max-derived raises it)"}
                    for i, (r, line) in enumerate(zip(records, lines)) if r["t"] in bad]
        assert [json.loads(line) for line in rejects.splitlines()] == expected
        seen_bad += bool(bad)
    assert seen_bad >= 3  # (the generator makes bad time points)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "rejected, the run goes on" in err


def test_without_skip_an_exploding_time_point_still_stops_the_run(tmp_path, capsys):
    rules = tmp_path / "r.dotr"
    rules.write_text(PROGRAMS["windows"])
    _write(tmp_path / "s.jsonl", [{"t": 1, "facts": ["p(1)"]},
                                  {"t": 2, "facts": _facts("windows", random.Random(), True)},
                                  {"t": 3, "facts": ["p(2)"]}])
    code, out, rejects = _run(tmp_path, rules, tmp_path / "s.jsonl", "stop")
    assert code == 4 and rejects == "" and [json.loads(line)["t"] for line in out.splitlines()] == [1]


def test_a_killed_run_continues_after_the_rejected_time_point_without_meeting_it_again(tmp_path):
    rules = tmp_path / "r.dotr"
    rules.write_text(PROGRAMS["windows"])
    records = [{"t": 1, "facts": ["p(1)", "q(1)"]}, {"t": 2, "facts": _facts("windows", random.Random(1), True)},
               {"t": 3, "facts": ["p(2)"]}, {"t": 4, "facts": ["q(3)"]}, {"t": 5, "facts": ["r(4)"]}]
    _write(tmp_path / "all.jsonl", records)
    _write(tmp_path / "good.jsonl", [r for r in records if r["t"] != 2])
    stream, out = tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    _write(stream, records[:3])  # (t = 3 completes time point 2; the rest comes later)
    command = [sys.executable, "-m", "dotr", "run", "-q", "--rules", str(rules), "--input", str(stream), "--output",
               str(out), "--max-derived", str(LIMIT), "--on-error", "skip", "--checkpoint", str(tmp_path / "cp")]
    proc = subprocess.Popen([*command, "--follow"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "rejected, the run goes on" not in (line := proc.stderr.readline()):
            assert line and time.monotonic() < deadline, "the time point was not rejected"
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    _write(stream, records)
    again = subprocess.run(command, cwd=ROOT, stderr=subprocess.PIPE, text=True, timeout=120)
    assert again.returncode == 0 and "rejected, the run goes on" not in again.stderr, again.stderr
    assert main(["run", "-q", "--rules", str(rules), "--input", str(tmp_path / "good.jsonl"), "--output",
                 str(tmp_path / "good.out"), "--max-derived", str(LIMIT)]) == 0
    assert out.read_text() == (tmp_path / "good.out").read_text()
    assert [json.loads(line)["line"] for line in (tmp_path / "out.jsonl.rejects.jsonl").read_text().splitlines()] == [2]


def test_a_time_point_undone_after_a_program_change_is_evaluated_again_by_the_new_program(tmp_path):
    """The undo rebuilds the program in effect (it rebuilt the command line's: the new rule's
    conclusions were gone after the undo)."""
    (tmp_path / "old.dotr").write_text("hot(X) :- temp(X, V), V > 30 .\n")
    (tmp_path / "new.dotr").write_text("hot(X) :- temp(X, V), V > 30 .\nwarm(X) :- [3] <> temp(X, V), V > 20 .\n"
                                       "big(A, B) :- p(A), q(B) .\n")
    records = [{"t": 1, "facts": ["temp(a, 25)"]}, {"t": 2, "program": str(tmp_path / "new.dotr"), "facts": ["temp(b, 25)"]},
               {"t": 3, "facts": ["temp(c, 35)"]}, {"t": 4, "facts": [f"{p}({i})" for p in "pq" for i in range(60)]},
               {"t": 5, "facts": ["temp(d, 22)"]}]

    def run(name: str, kept: list[dict]) -> str:
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
        code = main(["run", "-q", "--rules", str(tmp_path / "old.dotr"), "--input", str(tmp_path / f"{name}.jsonl"),
                     "--output", str(tmp_path / f"{name}.out"), "--on-error", "skip", "--max-derived", "1000"])
        assert code == 0
        return (tmp_path / f"{name}.out").read_text()

    undone, without = run("all", records), run("without", records[:3] + records[4:])
    assert undone == without and "warm(d)" in undone.splitlines()[-1]
    assert json.loads((tmp_path / "all.out.rejects.jsonl").read_text())["line"] == 4
