"""The sensor workloads of the Spark benchmark as files: ``rules.dotr``, ``background.nt`` and
JSON Lines stream files of a given number of triples each, modified in time order (as Spark's
file source reads them). The workloads: DOTR's pattern rules (``dotr``,
:mod:`dotr.examples.workloads.dotr_paper`), per-sensor LARS rules (``lars``, ``LARS_RULES``), with
a pattern beside them (``lars+patterns``), both over the same readings (``mixed``), and
per-sensor C-SPARQL queries (``csparql``).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> write_workload(folder, size=1_000, batch=500, per_point=100, terminators=0.2, rules=2)
>>> sorted(p.name for p in folder.iterdir()), len(list((folder / "in").iterdir()))
(['background.nt', 'counts.json', 'in', 'rules.dotr'], 2)
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from dotr.examples.workloads.dotr_paper import EX, background, program


#: the per-sensor LARS workload (``--workload lars``): windows, negation and a background join,
#: all on the sensor, so that the temporal stage splits by sensor
LARS_RULES = f"""@prefix : <{EX}> .
hot(S) :- [10] <> temp(S, V), V > 80 .
steady(S) :- [5] [] temp(S, V), V < 40 .
alarm(S, R) :- hot(S), not [20] <> maintenance(S), :located(S, R), :risky(R, Y) .
cooled(S) :- [30] <> hot(S), not hot(S) .
"""


#: the LARS workload with a pattern beside it (``--workload lars+patterns``): hot readings of two
#: sensors in one room within 3 readings' time make a graph; the patterns split by room, the
#: rules by sensor (temporal.keys.JointKeys)
LARS_PATTERNS = """
event Hot(?s, ?r, ?v) := temp(?s, ?v), :located(?s, ?r), ?v > 95 .
pattern Crowd from Hot and last Hot(r = Hot.r) as Before within 3000 from Hot
  construct { ?r :crowded ?v } with ?r = Hot.r, ?v = Hot.v .
"""


#: the mixed workload (``--workload mixed``): DOTR's pattern rules and LARS rules over the same
#: readings (ms: windows of 10 s and 30 s, negation, a background join); the rules split by
#: sensor, the patterns by room
MIXED_LARS = """
hot(S) :- [10000] <> :read_valB(S, V), V > 90 .
checked(S) :- :read_valA(S, W) .
alarm(S, R) :- hot(S), not [30000] <> checked(S), :located(S, R) .
"""


#: the C-SPARQL workload (``--workload csparql``): a Datalog rule over the window's readings and
#: the background, a per-sensor aggregate and an IStream query, keyed by sensor
#: (pipeline.keys.csparql_keys)
CSPARQL_QUERIES = f"""@prefix : <{EX}> .
:alarm(?s, ?r) :- :temp(?s, ?v), ?v > 95, :located(?s, ?r), :risky(?r, ?y) .
query Load := register compute every 10000 as select ?s (count(?v) as ?n) (max(?v) as ?m)
    from stream :readings [range 30000 step 10000] where {{ ?s :temp ?v }} group by ?s .
query Alarm := register compute every 10000 as select istream ?s ?r
    from stream :readings [range 10000 step 10000] where {{ ?s :alarm ?r }} .
"""


def lars_background(sensors: int = 500) -> str:
    """The LARS workloads' background, N-Triples: each sensor's room, every third room risky."""
    return "".join(f"<{EX}sensor{i}> <{EX}located> <{EX}room{i % 50}> .\n" for i in range(sensors)) + \
        "".join(f"<{EX}room{r}> <{EX}risky> <{EX}yes> .\n" for r in range(0, 50, 3))


def write_workload(folder: Path, size: int, batch: int, per_point: int, terminators: float, rules: int,
                   workload: str = "dotr", changes_every: int = 0) -> None:
    """rules.dotr, background.nt and the stream files (``batch`` triples each) in ``folder``;
    ``changes_every`` n > 0: every n-th time point also moves a sensor to another room (a
    background change: its ``located`` fact removed, another added)."""
    if workload.startswith("lars") or workload == "csparql":
        (folder / "rules.dotr").write_text(CSPARQL_QUERIES if workload == "csparql" else
                                           LARS_RULES + (LARS_PATTERNS if workload == "lars+patterns" else ""))
        (folder / "background.nt").write_text(lars_background())
    else:
        (folder / "rules.dotr").write_text(program(rules=rules) + (MIXED_LARS if workload == "mixed" else ""))
        (folder / "background.nt").write_text("".join(f"{s.n3()} {p.n3()} {o.n3()} .\n"
                                                      for s, p, o in background(10_000)) +
                                              (lars_background() if workload == "mixed" else ""))
    rnd = random.Random(7)
    stream = folder / "in"
    stream.mkdir()
    points_per_file = max(1, batch // per_point)
    lines: list[str] = []
    counts: list[int] = []  # triples per file
    written, t, mtime = 0, 0, time.time() - 86_400
    rooms = {i: i % 50 for i in range(500)}  # where each sensor is (lars_background)
    while written < size:
        facts = []
        for _ in range(min(per_point, size - written)):
            if workload == "csparql":
                facts.append(f"<{EX}temp>(<{EX}sensor{rnd.randrange(500)}>,{rnd.randrange(100)})")
                continue
            if workload.startswith("lars"):
                sensor = f"<{EX}sensor{rnd.randrange(500)}>"  # (the background's IRIs: the join meets them)
                facts.append(f"maintenance({sensor})" if rnd.random() < 0.01
                             else f"temp({sensor},{rnd.randrange(100)})")
                continue
            pred = "read_valA" if rnd.random() < terminators else "read_valB"
            facts.append(f"<{EX}{pred}>(<{EX}sensor{rnd.randrange(500)}>,{rnd.randrange(100)})")
        written += len(facts)
        record: dict = {"t": t, "facts": facts}
        if changes_every and (t // 1000) % changes_every == changes_every - 1:
            moved, room = rnd.randrange(500), rnd.randrange(50)
            record["background"] = {"remove": [f"<{EX}located>(<{EX}sensor{moved}>,<{EX}room{rooms[moved]}>)"],
                                    "add": [f"<{EX}located>(<{EX}sensor{moved}>,<{EX}room{room}>)"]}
            rooms[moved] = room
        lines.append(json.dumps(record))
        t += 1000
        if len(lines) == points_per_file or written >= size:
            path = stream / f"{t:012d}.jsonl"
            path.write_text("\n".join(lines) + "\n")
            os.utime(path, (mtime, mtime))  # files in time order for Spark's file source
            mtime += 1
            counts.append(sum(len(json.loads(line)["facts"]) for line in lines))
            lines = []
    (folder / "counts.json").write_text(json.dumps(counts))
