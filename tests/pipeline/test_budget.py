"""An exploding time point (a rule or query whose output grows as a power of its input) is
bounded by --max-derived, stopped by SIGTERM within a second or two, and running out of memory
is one line with its exit code: through `dotr run`."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dotr.pipeline import cli
from dotr.pipeline.cli import main
from dotr.rules.engine.guard import GUARD

ROOT = Path(__file__).parents[2]
DOTR = [sys.executable, "-m", "dotr", "run", "-q"]
CROSS = "big(A, B, C, D, E) :- p(A), q(B), r(C), s(D), u(E).\n"  # five atoms sharing no variable
OPTIONALS = ("@prefix : <http://e/> .\nevent E(?a, ?b) := select ?a ?b where { ?a :p ?b "
             + "".join(f"optional {{ ?x{i} :q ?y{i} " for i in range(6)) + "}" * 6 + " } .\n")


def _files(tmp_path, rules: str, wide: list[str]) -> tuple[str, str, Path]:
    (tmp_path / "r.dotr").write_text(rules)
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps(r) + "\n" for r in [
        {"t": 1, "facts": ["p(1)", "q(1)", "r(1)", "s(1)", "u(1)", "<http://e/p>(<http://e/a>, <http://e/b>)"]},
        {"t": 2, "facts": wide},
        {"t": 3, "facts": ["p(2)"]}]))
    return str(tmp_path / "r.dotr"), str(stream), tmp_path / "out.jsonl"


@pytest.fixture(autouse=True)
def _guard_as_it_was():
    limit = GUARD.limit
    yield
    GUARD.limit = limit


@pytest.mark.parametrize("program,wide", [
    (CROSS, [f"{p}({i})" for p in "pqrsu" for i in range(7)]),
    (OPTIONALS, [f"<http://e/q>(<http://e/x{i}>, <http://e/y{i}>)" for i in range(6)] + ["<http://e/p>(<http://e/a>, <http://e/b>)"]),
], ids=["cross product", "nested optionals"])
def test_an_exploding_time_point_is_an_error_naming_it(tmp_path, capsys, program, wide):
    rules, stream, out = _files(tmp_path, program, wide)
    code = main(["run", "-q", "--rules", rules, "--input", stream, "--output", str(out), "--max-derived", "10000"])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "Traceback" not in err and "warning[W305]" in err  # (warned of at the start)
    assert err.splitlines()[-1].startswith("dotr: time point 2 derived more than 10000 facts and answers"), err
    assert all(json.loads(line)["t"] < 2 for line in out.read_text().splitlines())  # the time points before it
    # the same program within its budget
    assert main(["run", "-q", "--rules", rules, "--input", stream, "--output", str(out), "--max-derived", "0"]) == 0


def test_the_budget_stops_a_round_whose_derivations_are_stored_as_they_come(tmp_path, capsys):
    """A round stores its derivations once they fill a buffer (bounded memory): those stored count
    towards the budget at once, so the round stops there, not after making all of them (9M
    derivations here, 25 s, when the stored ones were counted only at the round's end)."""
    rules, stream, out = _files(tmp_path, "big(A, B) :- p(A), q(B).\n", [f"{p}({i})" for p in "pq" for i in range(3000)])
    started = time.process_time()
    code = main(["run", "-q", "--rules", rules, "--input", stream, "--output", str(out), "--max-derived", "1000000"])
    assert code == 4, capsys.readouterr().err
    assert time.process_time() - started < 8.0


def test_the_budget_is_a_count(tmp_path, capsys):
    rules, stream, out = _files(tmp_path, CROSS, ["p(1)"])
    with pytest.raises(SystemExit) as stop:
        main(["run", "--rules", rules, "--input", stream, "--max-derived", "-1"])
    assert stop.value.code == 2 and "not a count" in capsys.readouterr().err


def test_sigterm_stops_an_exploding_time_point_within_two_seconds(tmp_path):
    rules, stream, out = _files(tmp_path, CROSS, [f"{p}({i})" for p in "pqrsu" for i in range(60)])
    proc = subprocess.Popen([*DOTR, "--rules", rules, "--input", stream, "--output", str(out), "--max-derived", "0"],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60  # (start-up and time point 1, written; then time point 2: 60^5 facts, minutes)
    while not (out.exists() and out.read_text().count("\n") == 1):
        assert proc.poll() is None and time.monotonic() < deadline, "time point 1 was never written"
        time.sleep(0.05)
    time.sleep(1.0)  # (into time point 2)
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    assert time.monotonic() - sent < 6.0  # (half a second of grace, then the native round's next buffer growth)
    err = proc.stderr.read()
    assert "Traceback" not in err and "dotr: interrupted after 1 time points" in err, err
    assert [json.loads(line)["t"] for line in out.read_text().splitlines()] == [1]


def test_running_out_of_memory_is_one_line_with_its_exit_code(tmp_path, capsys, monkeypatch):
    rules, stream, out = _files(tmp_path, "h(X) :- p(X).\n", ["p(1)"])

    def exhausted(args, started, checked):
        raise MemoryError()

    monkeypatch.setattr(cli, "_run_embedded", exhausted)
    assert main(["run", "-q", "--rules", rules, "--input", stream, "--output", str(out)]) == 5
    err = capsys.readouterr().err
    assert err.startswith("dotr: out of memory") and err.count("\n") == 1


def test_an_epsparql_sequence_of_unrelated_groups_is_bounded(tmp_path, capsys):
    rules = tmp_path / "r.dotr"
    rules.write_text("@prefix : <http://e/> .\nquery Q := select * where "
                     + " seq ".join(f"{{ ?a{i} :p ?b{i} }}" for i in range(5)) + " within 100 .\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "facts": [f"<http://e/p>(<http://e/a{t}>, <http://e/b{i}>)"
                                                            for i in range(8)]}) + "\n" for t in range(1, 7)))
    out = tmp_path / "out.jsonl"
    code = main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out),
                 "--max-derived", "10000"])
    err = capsys.readouterr().err
    assert code == 4 and err.splitlines()[-1].startswith("dotr: time point 5 derived more than 10000"), err
    assert "warning[W305]: the operands of seq in query Q share no variable" in err  # (warned of at the start)
