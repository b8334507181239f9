"""Invalid inputs: every error with its exact position and stable code, all at once."""

import os
from pathlib import Path

import pytest

from dotr.rules import RuleSyntaxError, check_text, parse
from dotr.rules.lang.errors import CODES
from dotr.pipeline.cli import main

CASES = [
    # (source, [(code, line, column), ...])
    ("p(X) :- q(X", [("E001", 1, 12)]),
    ("p(X) :- q(X)) .", [("E001", 1, 13)]),
    ("p(X) :- q(X), .", [("E001", 1, 15)]),
    ("p(X) :- q(X) ?", [("E001", 1, 14)]),
    ("h(X, Y) :- p(X).", [("E101", 1, 6)]),
    ("h(X) :- p(X), not q(Y).", [("E102", 1, 21)]),
    ("h(X) :- p(X), Y > 3.", [("E103", 1, 15)]),
    ("h(X) :- p(X), Z = Y + 1.", [("E103", 1, 15)]),
    ("@T h(X) :- p(X).", [("E104", 1, 2)]),
    ("a :- not b.\nb :- not a.", [("E201", 1, 6)]),
    ("a(X) :- [3 #] <> b(X).\nb(X) :- c(X).", [("E202", 1, 9)]),
    ("a(X) :- b(X).\nc :- b(X, Y), a(X).", [("E301", 2, 6)]),
    ("pattern P from Nope construct { <x:a> <x:b> <x:c> } .", [("E302", 1, 16)]),
    ("event A(?x) := a(?x) .\nevent B(?x) := b(?x) .\npattern P from A and last B(x = C.x) within 3 from A .",
     [("E303", 3, 33)]),
    ("event A(?x) := a(?x) .\nevent B(?x) := b(?x) .\npattern P from A and last B within 3 from C .",
     [("E303", 3, 29)]),
    ("h(X) :- ex:p(X, Y).", [("E304", 1, 9)]),
    ("h(X) :- [3 s] <> p(X).", [("E305", 1, 9)]),
    ("@output nope .\nh(X) :- p(X).", [("E306", 1, 9)]),
    ("@prefix : <http://e/> .\nh(X) :- :p(X, X, X).", [("E307", 2, 9)]),
    ("h(X) :- [3] <> P(X, Y).", [("E308", 1, 9)]),
    ("smoke(X) :- sensor(X).\nalarm(X) :- smokee(X).", [("W301", 2, 13)]),
    ("hot(X) :- Temp(X, V), V > 30.", [("W302", 1, 11)]),
    ("warm(X) :- temp(X, _).", [("W303", 1, 20)]),
    ("warm(X) :- temp(X), true.", [("W304", 1, 21)]),
    ("pair(X, Y) :- p(X), q(Y).", [("W305", 1, 21)]),
    ("a(X) :- b(X), not [3] <> a(X).", [("E201", 1, 15)]),
    ("@timeunit hours .", [("E308", 1, 11)]),
    ("@profile owl3 .", [("E308", 1, 10)]),
    ("h(X) :- [3] @t p(X).", [("E308", 1, 14)]),
    ("event A(?x) := a(?x) .\nevent A(?y) := b(?y) .", [("E309", 2, 7)]),
    ("event A(?x) := select ?x where {\n  ?x <http://e/p> ?y ?z } .", [("E401", 2, 22)]),
    ("event A(?x) := select ?y where { ?y <http://e/p> 1 } .", [("E402", 1, 9)]),
    ("event A(?x) := a(?x) .\npattern P from A where A.x > X construct { <x:a> <x:b> ?v } with ?v = A.x .",
     [("E403", 2, 30)]),
    ("event A(?x) := a(?x) .\npattern P from A construct { <x:a> <x:b> ?w } with ?v = A.x .", [("E404", 2, 28)]),
    ("event A(?x) := a(?x) .\npattern P from A construct { <x:a> <x:b> ?v } with ?v = A.x consuming A .",
     [("E405", 2, 9)]),
    ("event A(?x) := select ?x where { ?x <http://e/p> ?v filter(?v >> 6) } .", [("E401", 1, 63)]),
]


@pytest.mark.parametrize("source,expected", CASES, ids=[c[1][0][0] + ":" + c[0][:30] for c in CASES])
def test_invalid_input_reports_code_and_position(source, expected):
    result = check_text(source, "bad.dotr")
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == expected


def test_syntax_error_renders_line_and_caret():
    with pytest.raises(RuleSyntaxError) as err:
        parse("ok :- a.\np(X) :- q(X) ?\n", "r.dotr")
    assert str(err.value).splitlines() == [
        "r.dotr:2:14: error[E001]: unexpected character '?'; expected ',', '.', ':-'",
        "    p(X) :- q(X) ?",
        "                 ^",
    ]


FIVE_ERRORS = """\
@prefix : <http://example.org/> .
alarm(R, S) :- smoke(R).
hot(R) :- temp(R, V), V > .
cold(R) :- temp(R, V), not frozen(R, W).
@T late(R) :- smoke(R).
fire(R) :- [5 min] <> smoke(R), :p(R, R, R).
"""


def test_check_prints_every_error_of_a_file(tmp_path, capsys):
    path = tmp_path / "five.dotr"
    path.write_text(FIVE_ERRORS)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    heads = [line.split(": error")[0].removeprefix(str(path) + ":") for line in err.splitlines() if ": error[" in line]
    codes = [line.split("error[")[1][:4] for line in err.splitlines() if ": error[" in line]
    assert list(zip(heads, codes)) == [
        ("2:10", "E101"), ("3:27", "E001"), ("4:38", "E102"), ("5:2", "E104"), ("6:12", "E305"), ("6:33", "E307"),
    ]
    assert f"{path}: 6 errors" in err
    assert "    hot(R) :- temp(R, V), V > ." in err


def test_imports_resolve_relative_and_report_cycles(tmp_path):
    from dotr.rules import check

    (tmp_path / "sub").mkdir()
    (tmp_path / "main.dotr").write_text('@import "sub/a.dotr" .\nh(X) :- a(X).')
    (tmp_path / "sub/a.dotr").write_text('@import "b.dotr" .\na(X) :- b(X).')
    (tmp_path / "sub/b.dotr").write_text('@import "a.dotr" .\nb(X) :- c(X).')
    result = check(tmp_path / "main.dotr")
    assert [d.code for d in result.diagnostics] == ["E002"]
    assert "import cycle" in result.diagnostics[0].message
    assert len(result.program.rules) == 3

    (tmp_path / "sub/b.dotr").write_text('@import "missing.dotr" .\nb(X) :- c(X).')
    result = check(tmp_path / "main.dotr")
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == [("E002", 1, 9)]


def test_a_comparison_between_groups_is_no_cross_product_warning():
    assert not check_text("pair(X, Y) :- p(X), q(Y), X < Y.\nh(X) :- p(X), q(1).").diagnostics


INVALID = Path(__file__).parent / "corpus" / "invalid"


@pytest.mark.parametrize("path", sorted(INVALID.glob("*.dotr")), ids=lambda p: p.stem)
def test_invalid_corpus_prints_its_golden_check_output(path, monkeypatch, capsys):
    """One file per diagnostic code (the file's name), with what ``dotr check`` prints for it
    beside it (``.out``: standard output, then standard error). DOTR_UPDATE_GOLDEN=1 rewrites
    the golden files."""
    monkeypatch.chdir(INVALID)
    status = main(["check", path.name])
    out = capsys.readouterr()
    printed = f"exit {status}\n--- stdout\n{out.out}--- stderr\n{out.err}"
    assert f"[{path.stem}]" in out.err
    golden = path.with_suffix(".out")
    if os.environ.get("DOTR_UPDATE_GOLDEN"):
        golden.write_text(printed, encoding="utf-8")
    assert printed == golden.read_text(encoding="utf-8")


def test_invalid_corpus_has_a_file_per_code():
    assert {p.stem for p in INVALID.glob("*.dotr")} == set(CODES)
