"""Rule files load in time linear in their size: `dotr check` and the start of `dotr run` on
generated programs of thousands of rules of the shapes users write (joins, negation, windows,
@ heads, assignments, IRI predicates, events, names one edit away from derived ones)."""

import time

import pytest

from dotr.examples.workloads.rule_files import program, stream as _stream
from dotr.pipeline.cli import main
from dotr.rules import check_text


def check_seconds(n: int) -> float:
    text = program(n)
    best = float("inf")
    for _ in range(2):
        started = time.process_time()
        result = check_text(text, "generated.dotr")
        best = min(best, time.process_time() - started)
        assert result.ok and any(d.code == "W301" for d in result.diagnostics)
    return best


@pytest.mark.slow
def test_check_time_grows_linearly_with_the_rules():
    small, large = check_seconds(1000), check_seconds(4000)
    assert large < 6 * small, (small, large)


@pytest.mark.slow
def test_ten_thousand_rules_run(tmp_path):
    rules, stream, out = tmp_path / "r.dotr", tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    rules.write_text(program(10_000))
    stream.write_text(_stream(3))
    started = time.process_time()
    assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out)]) == 0
    assert time.process_time() - started < 120
    assert out.read_text()
