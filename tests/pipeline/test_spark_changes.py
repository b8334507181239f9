"""Background changes through the Spark job's steps (pipeline.spark.changes), without Spark:
generated whole programs and streams that change the background, cut into micro-batches, each
micro-batch's records spread over enrich tasks on fresh or reused workers (a change record to
every task), concluded per key group from the stored state, agree with the embedded reasoner. A
micro-batch run again after failing half way, late and bad change records. The job itself on
Spark: tests/pipeline/test_spark.py."""

from __future__ import annotations

import json
import pickle
import tempfile
from pathlib import Path

import pandas as pd
import rdflib
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dotr.ontology import OntologicalStage
from dotr.pipeline.keys import split_keys
from dotr.pipeline.spark.changes import ChangeLog
from dotr.pipeline.spark.job import _Worker, conclude_rows, dotr_merge, enrich_rows
from dotr.pipeline.spark.elements import split_file
from dotr.rules import check
from tests.pipeline.runs import embedded
from tests.strategies.composition import programs, streams_with_changes

TASKS = 2  # enrich tasks per micro-batch


def lines_of(records) -> list[str]:
    out = []
    for t, facts, payload, change in records:
        record = {"t": t, "facts": facts, **({"turtle": payload} if payload else {}),
                  **({"background": change} if change else {})}
        out.append(json.dumps(record))
    return out


class Job:
    """The job's steps as Spark runs them, on workers kept or replaced between micro-batches."""

    def __init__(self, checked, background, log: Path, **options):
        keys = split_keys(checked)
        self.labels = [0] if keys is None else [7, 3]
        stage = OntologicalStage(checked, background)
        self.bundle = pickle.dumps((checked, stage.snapshot(), options, {"keep_empty": True, "keys": keys,
                                                                         "groups": self.labels}))
        self.workers = [_Worker(self.bundle) for _ in range(TASKS)]
        self.states = [None] * len(self.labels)
        self.log = ChangeLog(log)

    def batch(self, elements: list[tuple], fresh: list[bool]) -> list[tuple]:
        """One micro-batch: ``fresh[i]``, a new worker for task i (enrich) and group i (conclude)."""
        self.workers = [_Worker(self.bundle) if new else w for w, new in zip(self.workers, fresh)]
        rows = []
        for task, worker in enumerate(self.workers):  # a change record goes to every task
            mine = [(*e, 0) for e in elements if e[2] is not None and e[2] % TASKS == task] + \
                [(*e, 1) for e in elements if e[3] == "change" and e[2] % TASKS != task]
            rows += enrich_rows(worker, mine, self.log)
        out = []
        for group, label in enumerate(self.labels):
            worker = self.workers[group % TASKS]
            part, self.states[group] = conclude_rows(worker, [(t, k, p) for t, g, k, p in rows if g == label],
                                                     self.states[group], group, self.log)
            out += part
        if len(self.labels) > 1:
            frame = pd.DataFrame(out, columns=["t", "kind", "json", "graphs"])
            out = list(next(dotr_merge([frame])).itertuples(index=False, name=None))
        return sorted((row[:3] for row in out), key=lambda row: (row[1] == "result", row[0]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), streams_with_changes(), st.booleans(), st.data())
def test_changes_spread_over_tasks_and_micro_batches_agree_with_the_embedded_reasoner(program, records,
                                                                                     include_background, data):
    rules, turtle, _ = program
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "rules.dotr").write_text(rules)
        checked = check(Path(tmp) / "rules.dotr")
        assume(checked.ok)
        background = list(rdflib.Graph().parse(data=turtle, format="turtle"))
        lines = lines_of(records)
        options = {"include_background": include_background}
        expected, rejected = embedded(checked, background, lines, **options)
        elements = list(split_file("s.jsonl", "jsonl", "\n".join(lines).encode(), prefixes=checked.program.prefixes))
        times = sorted({e[2] for e in elements})
        cuts = sorted(data.draw(st.sets(st.sampled_from(times), max_size=3)) | {times[0]})
        job = Job(checked, background, Path(tmp) / "log", **options)
        out = []
        for start, end in zip(cuts, cuts[1:] + [None]):
            batch = [e for e in elements if e[2] >= start and (end is None or e[2] < end)]
            out += job.batch(batch, data.draw(st.lists(st.booleans(), min_size=TASKS, max_size=TASKS)))
    assert [j for _, kind, j in out if kind == "result"] == expected, (rules, turtle, lines)
    assert sorted(json.loads(j)["line"] for _, kind, j in out if kind == "reject") == rejected


ROOT = Path(__file__).resolve().parents[2]
MOVES = ROOT / "examples/moves"


def test_the_records_of_a_time_point_change_the_background_at_once_on_spark(tmp_path):
    """At a time point every removal first, then every addition, as in the embedded run: in the
    micro-batch of the change and (from the log) in the later ones."""
    (tmp_path / "r.dotr").write_text("h(X) :- e(X), d(X) .\n")
    checked = check(tmp_path / "r.dotr")
    seen = ["e(b)", "e(c)"]
    lines = [json.dumps(r) for r in (
        {"t": 1, "facts": seen, "background": {"add": ["d(b)"]}},
        {"t": 1, "background": {"add": ["d(c)"], "remove": ["d(b)"]}},
        {"t": 2, "facts": seen, "background": {"remove": ["d(c)"]}},
        {"t": 2, "background": {"add": ["d(c)"]}},
        {"t": 3, "facts": seen, "background": {"add": ["d(c)"]}},
        {"t": 3, "background": {"remove": ["d(c)", "d(b)"]}},
        {"t": 4, "facts": seen})]
    expected, _ = embedded(checked, [], lines)
    assert [json.loads(r)["facts"] for r in expected] == [["h(b)", "h(c)"], ["h(b)", "h(c)"], ["h(c)"], ["h(c)"]]
    elements = list(split_file("s.jsonl", "jsonl", "\n".join(lines).encode()))
    job = Job(checked, [], tmp_path / "log")
    out = []
    for t in (1, 2, 3, 4):  # a micro-batch per time point: the later ones see the changes through the log
        out += job.batch([e for e in elements if e[2] == t], [t % 2 == 0] * TASKS)
    assert [j for _, kind, j in out if kind == "result"] == expected


def moves_job(tmp: Path) -> tuple[Job, list[tuple]]:
    from dotr.ontology.background import load_triples

    checked = check(MOVES / "rules.dotr")
    job = Job(checked, load_triples(MOVES / "ontology.ttl"), tmp / "log")
    return job, list(split_file("s.jsonl", "jsonl", (MOVES / "stream.jsonl").read_bytes(),
                                prefixes=checked.program.prefixes))


def results(rows: list[tuple]) -> list[str]:
    return [j for _, kind, j in rows if kind == "result" and json.loads(j).get("graphs")]


def test_a_micro_batch_with_a_change_run_again_after_failing_gives_the_output_of_one_run(tmp_path):
    """Spark runs a failed micro-batch again from the state stored before it: what its first
    attempt logged (the change, the time evaluated) does not count twice."""
    golden = [json.loads(line)["t"] for line in (ROOT / "tests/pipeline/golden/moves.jsonl").read_text().splitlines()]
    for fresh in (True, False):
        job, elements = moves_job(tmp_path / str(fresh))
        first = job.batch([e for e in elements if e[2] < 20], [False, False])
        states = list(job.states)
        job.batch([e for e in elements if 20 <= e[2] < 30], [False, False])  # its output is lost
        job.states = states
        again = job.batch([e for e in elements if 20 <= e[2] < 30], [fresh, fresh])
        rest = job.batch([e for e in elements if e[2] >= 30], [fresh, False])
        assert [json.loads(j)["t"] for j in results(first + again + rest)] == golden


def test_late_and_bad_changes_are_rejected_once_and_not_made(tmp_path):
    job, elements = moves_job(tmp_path)
    late = split_file("late.jsonl", "jsonl", b'{"t": 15, "background": {"remove": [":is_at_location(:s2, :locC)"]}}\n'
                                             b'{"t": 33, "background": {"add": ["not a fact(("]}}\n',
                      prefixes=check(MOVES / "rules.dotr").program.prefixes)
    out = job.batch([e for e in elements if e[2] < 30], [False, False])
    out += job.batch([e for e in elements if e[2] >= 30] + list(late), [True, False])
    rejects = [json.loads(j) for _, kind, j in out if kind == "reject"]
    assert [(r["source"], r["line"]) for r in rejects] == [("", None), ("late.jsonl", 2)]
    assert "time point 15 arrived after" in rejects[0]["reason"] and "not a fact" in rejects[1]["reason"]
    rooms = [o for j in results(out) for g in json.loads(j)["graphs"] for o in g.split() if "#room" in o]
    assert rooms == ["<http://example.org/building#roomA>", "<http://example.org/building#roomB>",
                     "<http://example.org/building#roomB>"]


def test_trig_graphs_change_the_background_on_spark(tmp_path):
    """A TriG file's ``urn:dotr:background:...`` graphs, parsed by the split step, move s2 to room
    A before its smoke reading, as in the embedded run (test_background_changes.py)."""
    job, _ = moves_job(tmp_path)
    trig = b"""@prefix : <http://example.org/building#> .
<urn:g:t:10> { :r1 a :TempReading ; :sensor :s1 ; :value 65 . }
<urn:dotr:background:remove:t:20> { :s2 :is_at_location :locB . }
<urn:dotr:background:add:t:20> { :s2 :is_at_location :locA . }
<urn:g:t:21> { :r4 a :SmokeReading ; :sensor :s2 . }
"""
    elements = list(split_file("s.trig", "trig", trig))
    assert [e[3] for e in elements if e[2] == 20] == ["change", "change"]
    out = job.batch([e for e in elements if e[2] < 20], [False, False])
    out += job.batch([e for e in elements if e[2] >= 20], [True, True])
    [record] = [json.loads(j) for j in results(out)]
    assert record["t"] == 21 and "<http://example.org/building#roomA>" in record["graphs"][0]


def test_a_fresh_reasoner_has_the_files_background_after_a_change_on_a_restored_one(tmp_path):
    """A key group restored from its state (fresh_reasoner) and then given a change must not leave
    the change in the copy of the background that the next fresh_reasoner starts from."""
    job, elements = moves_job(tmp_path)
    job.batch([e for e in elements if e[2] < 20], [False, False])
    states = list(job.states)
    job.batch([e for e in elements if 20 <= e[2] < 30], [False, False])
    job.states = states  # run again: each group's live engine no longer matches its state
    job.batch([e for e in elements if 20 <= e[2] < 30], [False, False])
    worker = job.workers[0]
    stage = worker.fresh_reasoner(0).ontology
    located = {(fact[0], fact[1]) for rel, fact in stage.background_facts()
               if stage.dictionary.term(rel[0]).value.endswith("is_at_location")}
    names = {(stage.dictionary.term(s).value.rsplit("#")[-1], stage.dictionary.term(o).value.rsplit("#")[-1])
             for s, o in located}
    assert ("s2", "locB") in names and ("s2", "locC") not in names
