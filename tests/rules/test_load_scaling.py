"""Rule files load in time linear in their size: `dotr check` and the start of `dotr run` on
generated programs of thousands of rules of the shapes users write (joins, negation, windows,
@ heads, assignments, IRI predicates, events, names one edit away from derived ones)."""

import json
import time

import pytest

from dotr.pipeline.cli import main
from dotr.rules import check_text


def program(n: int) -> str:
    lines = ["@prefix : <http://example.org/> ."]
    for i in range(n):
        head, a, b = f"der{i}", f"der{i - 7}" if i >= 7 else f"obs{i % 20}", f"obs{(i * 7) % 20}"
        lines.append([
            f"{head}(X, Y) :- {a}(X, Y), {b}(Y, Z).",
            f"{head}(X, Y) :- {a}(X, Y), not {b}(X, Y).",
            f"{head}(X, Y) :- [3] <> {a}(X, Y), X != Y.",
            f"{head}(X, Y) :- [5] [] {b}(X, Y).",
            f"@T {head}(X, Y) :- [4] @T {a}(X, Y), Y > 10.",
            f"{head}(X, W) :- {a}(X, Y), W = Y * 2 + 1.",
            f"{head}(X, Y) :- :p{i % 37}(X, Y), {b}(Y, X).",
            f"{head}(X, Y) :- {a}(X, Z), {b}(Z, Y), ctx{i % 13}(Y, X).",
            f"event E{i}(?x, ?y) := {a}(?x, ?y), ?y > 3 .",  # der{8 mod 10} is read, never derived: W301
            f"{head}(X, Y) :- {a}(X, Y), {b}(X, Y), Y >= {i}.",
        ][i % 10])
    return "\n".join(lines) + "\n"


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
    stream.write_text("".join(json.dumps({"t": t, "facts": [f"obs{t}(a, {t * 5})", f"obs{t + 1}(a, {t})"]}) + "\n"
                              for t in range(1, 4)))
    started = time.process_time()
    assert main(["run", "-q", "--rules", str(rules), "--input", str(stream), "--output", str(out)]) == 0
    assert time.process_time() - started < 120
    assert out.read_text()
