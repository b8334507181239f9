"""A stream fuzzer: good records mixed with records made bad at the byte level (truncated,
invalid UTF-8, NUL, huge numbers), the JSON level (wrong types, unknown keys, nesting) and the
term level (IRIs holding '>' or a space, 17-argument atoms, integers of thousands of digits),
through ``dotr run --on-error skip``. Never a traceback; exit code 0; the output is byte for byte
that of the run over the good records alone; every bad record is in the rejects file with its
line, and nothing else is. The default example count keeps it well under a minute; ``-m slow``
runs more (``DOTR_FUZZ``), and a few cases go through the command itself."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotr.pipeline.cli import main

ROOT = Path(__file__).parents[1]
RULES = ROOT / "examples" / "cooling" / "rules.dotr"
ONTOLOGY = ROOT / "examples" / "cooling" / "ontology.ttl"


def good(t: int, values: list[int]) -> bytes:
    return json.dumps({"t": t, "facts": [f"temp({v})" for v in values]}).encode()


def _json(value) -> bytes:
    return json.dumps(value).encode()


# each strategy makes a record that is bad whatever it is drawn as
_any_t = st.integers(0, 40)
_fact = st.integers(0, 200).map(lambda v: f"temp({v})")
byte_level = st.one_of(
    st.builds(lambda t, f, cut: good(t, [1])[:cut], _any_t, _fact, st.integers(1, 12)),  # truncated
    st.builds(lambda t, at, junk: (lambda b: b[:at % len(b)] + junk + b[at % len(b):])(good(t, [5])),
              _any_t, st.integers(0, 40), st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])),
    st.builds(lambda t, at: (lambda b: b[:at % len(b)] + b"\x00" + b[at % len(b):])(good(t, [5])),
              _any_t, st.integers(0, 40)),  # NUL
    st.builds(lambda digits: b'{"t": 1' + b"0" * digits + b', "facts": ["temp(1)"]}', st.integers(19, 5000)),
    st.just(b'{"t": 1e999, "facts": ["temp(1)"]}'),
)
json_level = st.one_of(
    st.builds(lambda t: _json({"t": str(t), "facts": ["temp(1)"]}), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": "temp(1)"}), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": [1, 2]}), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": [["temp(1)"]]}), _any_t),
    st.builds(lambda t, key: _json({"t": t, "facts": ["temp(1)"], key: 1}), _any_t,
              st.sampled_from(["fact", "Facts", "extra", "ttl", ""])),
    st.builds(lambda t: _json([t, ["temp(1)"]]), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": ["temp(1)"], "graphs": {"a": 1}}), _any_t),
    st.builds(lambda t: _json({"t": True, "facts": ["temp(1)"]}), _any_t),
    st.builds(lambda depth: b"[" * depth + b"]" * depth, st.integers(1, 100_000)),  # nesting
    st.just(b"null"), st.just(b'"text"'), st.just(b"{}"),
)
term_level = st.one_of(
    st.builds(lambda t: _json({"t": t, "facts": ["temp(<http://e/a>b>)"]}), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": ["temp(<http://e/a b>)"]}), _any_t),
    st.builds(lambda t: _json({"t": t, "facts": ["temp(<http://e/a\nb>)"]}), _any_t),
    st.builds(lambda t, n: _json({"t": t, "facts": [f"wide({', '.join(map(str, range(n)))})"]}), _any_t,
              st.integers(17, 40)),
    st.builds(lambda t, digits: _json({"t": t, "facts": [f"temp(1{'0' * digits})"]}), _any_t,
              st.integers(4300, 9000)),
    st.builds(lambda t: _json({"t": t, "facts": ['temp("open']}), _any_t),
    st.builds(lambda t: _json({"t": t, "turtle": "<http://e/a> <http://e/p> ."}), _any_t),
)
bad_records = st.one_of(byte_level, json_level, term_level)


@st.composite
def streams(draw) -> list[tuple[bool, bytes]]:
    """(good, line) pairs: good records in time order with bad ones among them."""
    lines: list[tuple[bool, bytes]] = []
    t = 0
    for _ in range(draw(st.integers(1, 8))):
        t += draw(st.integers(1, 3))
        lines.append((True, good(t, draw(st.lists(st.integers(0, 200), min_size=1, max_size=3)))))
        lines.extend((False, bad) for bad in draw(st.lists(bad_records, max_size=2)))
    return lines


def _run(tmp: Path, lines: list[bytes], via_cli: bool = False) -> tuple[int, bytes, list[int], str]:
    stream, out = tmp / "s.jsonl", tmp / "o.jsonl"
    rejects = tmp / "o.jsonl.rejects.jsonl"
    for path in (out, rejects):
        path.unlink(missing_ok=True)
    stream.write_bytes(b"".join(line + b"\n" for line in lines))
    argv = ["run", "-q", "--rules", str(RULES), "--ontology", str(ONTOLOGY), "--input", str(stream),
            "--output", str(out), "--on-error", "skip"]
    if via_cli:
        proc = subprocess.run([sys.executable, "-m", "dotr", *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        code, err = proc.returncode, proc.stderr
    else:
        code, err = main(argv), ""
    rejected = [json.loads(line)["line"] for line in rejects.read_text().splitlines()] if rejects.exists() else []
    return code, out.read_bytes(), rejected, err


def _check(tmp: Path, stream: list[tuple[bool, bytes]], via_cli: bool = False) -> None:
    code, output, rejected, err = _run(tmp, [line for _, line in stream], via_cli)
    assert code == 0 and "Traceback" not in err, err
    assert rejected == [n for n, (ok, _) in enumerate(stream, 1) if not ok]
    alone = _run(tmp, [line for ok, line in stream if ok])
    assert alone[0] == 0 and alone[2] == []
    assert output == alone[1]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(streams())
def test_bad_records_are_rejected_with_their_line_and_change_nothing_else(tmp_path_factory, stream):
    _check(tmp_path_factory.mktemp("fuzz"), stream)


@pytest.mark.slow
def test_many_more_fuzzed_streams(tmp_path):
    @settings(max_examples=int(os.environ.get("DOTR_FUZZ", 2000)), deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(streams())
    def run(stream):
        _check(tmp_path, stream)
    run()


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(streams())
def test_fuzzed_streams_through_the_command(tmp_path_factory, stream):
    _check(tmp_path_factory.mktemp("cli"), stream, via_cli=True)
