"""Rules with ``not`` over windows, kept up to date from one time point to the next
(temporal/negation.py), through ``dotr run``: a negated fact that comes, leaves its window and
comes back; a head supported twice that loses one support; background joins; a view whose
positive part grows within its stratum; a resumed run."""

from dotr.pipeline.cli import main
from tests.pipeline.runs import facts_by_time, run_text

RULES = """sensor(s1) . sensor(s2) . sensor(s3) .
quiet(S) :- [2] <> reading(S, V), sensor(S), not [1] <> alarm(S) .
seen(S) :- [3] <> reading(S, V) .
calm(S) :- sensor(S), not seen(S) .
twice(S) :- [3] <> reading(S, V), V > 10, not alarm(S) .
"""

STREAM = [
    {"t": 0, "facts": ["reading(s1, 5)", "reading(s2, 20)", "reading(s2, 30)"]},
    {"t": 1, "facts": ["alarm(s1)", "reading(s9, 50)"]},
    {"t": 2, "facts": []},
    {"t": 3, "facts": ["reading(s1, 40)"]},
    {"t": 4, "facts": ["alarm(s2)"]},
    {"t": 8, "facts": ["alarm(s1)"]},
]

EXPECTED = {
    0: ["calm(s3)", "quiet(s1)", "quiet(s2)", "seen(s1)", "seen(s2)", "twice(s2)"],
    # alarm(s1) in [1] <> until 2 blocks quiet(s1); s9 is no sensor, but twice needs none
    1: ["calm(s3)", "quiet(s2)", "seen(s1)", "seen(s2)", "seen(s9)", "twice(s2)", "twice(s9)"],
    2: ["calm(s3)", "quiet(s2)", "seen(s1)", "seen(s2)", "seen(s9)", "twice(s2)", "twice(s9)"],
    # reading(s2) at 0 left [2] <>: quiet(s2) goes; alarm(s1) left [1] <>: quiet(s1) is back
    3: ["calm(s3)", "quiet(s1)", "seen(s1)", "seen(s2)", "seen(s9)", "twice(s1)", "twice(s2)", "twice(s9)"],
    # reading(s2) at 0 left [3] <>: seen(s2) goes, so calm(s2) comes
    4: ["calm(s2)", "calm(s3)", "quiet(s1)", "seen(s1)", "seen(s9)", "twice(s1)", "twice(s9)"],
    5: ["calm(s2)", "calm(s3)", "quiet(s1)", "seen(s1)", "twice(s1)"],
    6: ["calm(s2)", "calm(s3)", "seen(s1)", "twice(s1)"],
    7: ["calm(s1)", "calm(s2)", "calm(s3)"],
    8: ["calm(s1)", "calm(s2)", "calm(s3)"],
}


def test_negation_over_windows_through_dotr_run(tmp_path):
    assert facts_by_time(run_text(tmp_path, RULES, STREAM)) == EXPECTED


def test_a_resumed_run_rebuilds_the_views(tmp_path):
    (tmp_path / "rules.dotr").write_text(RULES)
    lines = [__import__("json").dumps(r) for r in STREAM]
    (tmp_path / "first.jsonl").write_text("\n".join(lines[:3]) + "\n")
    (tmp_path / "rest.jsonl").write_text("\n".join(lines[3:]) + "\n")
    common = ["run", "-q", "--rules", str(tmp_path / "rules.dotr"), "--full-iris"]
    assert main([*common, "--input", str(tmp_path / "first.jsonl"), "--output", str(tmp_path / "a.jsonl"),
                 "--snapshot", str(tmp_path / "state")]) == 0
    assert main([*common, "--input", str(tmp_path / "rest.jsonl"), "--output", str(tmp_path / "b.jsonl"),
                 "--resume", str(tmp_path / "state")]) == 0
    records = [__import__("json").loads(line) for name in ("a.jsonl", "b.jsonl")
               for line in (tmp_path / name).read_text().splitlines()]
    assert facts_by_time(records) == EXPECTED
