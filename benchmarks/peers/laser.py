"""dotr against Laser (karmaresearch/Laser, the Python prototype of the Laser paper, ISWC 2017).

Laser is Python 2: ``--laser DIR`` is a checkout that the interpreter ``--python`` runs (a Python 2
or PyPy 2, or a copy the user made runnable on Python 3). This script runs its evaluation
workloads as its repository's eval.py does: rule strings in Laser's syntax, a
``Program`` stepped through the time points in process, ``time.clock()`` (here
``time.process_time()``) around each ``evaluate(t)``. The workloads are those of
benchmarks/lars.py (dotr's own versions of the paper's workloads, with its stream generators):

    diamond  q(A,B) :- [n] <> p(A,B)                  stream "unique" (fresh atoms)
    box      q(A,B) :- [n] [] p(A,B)                  stream "repeat" (a stable population)
    join     q(A,C) :- [n] <> p(A,B), [n] <> p(B,C)   stream "join" (random pairs)
    cooling  the cooling system of the paper's Fig. 4 stream "temp" (random temperatures)

With ``--streams laser``, the streams have the shapes of those of Laser's eval.py instead (fresh
atoms, the same atoms at every time point for the box, chains for the join, random
temperatures): its join then has far fewer results.

Laser reads the generated atoms from memory (a Stream subclass serving precomputed rows); dotr
reads the same atoms as JSON Lines through ``dotr run`` and writes its output file. Before
timing, the outputs are compared at a sample of time points: Laser's conclusions at t against
the facts dotr prints at t, and, for ``@T`` heads, what Laser reports for earlier time points
against what dotr printed there. Reported: microseconds of CPU per input atom.

With ``--growth [WINDOW ...]`` it measures instead the cost per time point as the window grows
(benchmarks/lars.py --growth: 100 atoms per time point over 100 keys; time windows of n time
points, tuple windows of 100n atoms): Laser's CPU time of ``evaluate()`` over the last 200 time
points, and ``dotr run``'s CPU time over the same time points (a run over n + 210 time points minus
one over n + 10: start-up and filling the window cancel out), in ms per time point. Programs with
``not`` are left out: Laser's negation of an atom whose variables a window atom binds (``p(A,B)
and not(r(A))``, also without a window) derives nothing on this stream, and its
``diamond(not(r(A)))`` means "some time point in the window without r(A)", not LARS's "no r(A) in
the window".

Both sides are timed in alternating pairs (median and range).

    python benchmarks/peers/laser.py --laser DIR [--python PY] [--window 20] [--rate 200] [--points 100] [--streams dotr|laser]
    python benchmarks/peers/laser.py --laser DIR --growth [10 100 400]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

sys.path.insert(0, str(common.REPO))
from benchmarks.lars import GROWTH, WORKLOADS as DOTR_WORKLOADS, run_growth_cli, stream  # noqa: E402

# Laser's rule strings, as in its eval.py (predicate IRIs shortened to p and q)
LASER_RULES = {
    "diamond": ["q(A,B) :- time_win({n}, 0, 1, diamond(p(A,B)))"],
    "box": ["q(A,B) :- time_win({n}, 0, 1, box(p(A,B)))"],
    "join": ["q(A,C) :- time_win({n}, 0, 1, diamond(p(A,B))) and time_win({n}, 0, 1, diamond(p(B,C)))"],
    "cooling": [
        "@(T, steam(V)) :- time_win({n}, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)",
        "@(T, liquid(V)) :- time_win({n}, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)",
        "@(T, isSteam) :- time_win({n}, 0, 1, @(T, steam(V)))",
        "@(T, isLiquid)  :- time_win({n}, 0, 1, @(T, liquid(V)))",
        "alarm :- time_win({n}, 0, 1, box(isSteam))",
        "normal :- time_win({n}, 0, 1, box(isLiquid))",
        "veryHot(T) :- time_win({n},0,1, @(T, steam(V))) and COMP(>=, V, 150)",
        "veryCold(T) :- time_win({n},0,1, @(T, liquid(V))) and COMP(=, V, 1)",
        "freeze :- not(alarm) and not(normal)",
    ],
}
# the growth programs of benchmarks/lars.py that Laser derives the same conclusions for
LASER_GROWTH = {
    "diamond": "q(A) :- time_win({n}, 0, 1, diamond(p(A,B)))",
    "tuple": "q(A) :- tuple_win({m}, diamond(p(A,B)))",
    "tuple box": "q(A) :- tuple_win({m}, box(p(A,B)))",
}
# predicates of @T heads: Laser reports them at the time points they were placed at
AT_HEADS = {"cooling": ("steam", "liquid", "isSteam", "isLiquid")}

# Runs under --python, with Laser's checkout first on its path (Python 2 and 3 alike).
DRIVER = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[3])
from evalunit.program import Program
from stream.stream import Stream

class MemoryStream(Stream):
    """The interface of Laser's eval streams (stream/rdfstream1.py, ...), serving rows built
    beforehand: (time, horizon, tuple counter, None, arguments...)."""
    def __init__(self, points):
        self.timeLine = {"startTime": 0, "endTime": 999999999}
        self.rows, self.sizes, counter = [], [], 0
        for t, facts in enumerate(points):
            by_pred = {}
            for pred, args in facts:
                by_pred.setdefault(pred, set()).add((t, self.timeLine["endTime"], counter, None) + tuple(args))
                counter += 1
            self.rows.append(by_pred)
            self.sizes.append(len(facts))
    def getNumberOfTuplesAt(self, t): return self.sizes[t]
    def getTimeLine(self): return self.timeLine
    def hasTimePoint(self, t): return t < len(self.rows)
    def get(self, t): return self.rows[t]

spec = json.load(open(sys.argv[1]))
record = set(spec["record"])
real_stdout, sys.stdout = sys.stdout, open(os.devnull, "w")   # Laser prints as it parses
program = Program(spec["rules"], MemoryStream(spec["points"]))
cpu, outputs, timed_from = 0.0, {}, spec.get("timed_from", 0)
clock = getattr(time, "process_time", None) or time.clock
for t in range(len(spec["points"])):
    start = clock()
    holds, derived = program.evaluate(t)
    if t >= timed_from:
        cpu += clock() - start
    if t in record:
        outputs[t] = {k: sorted(v) for k, v in derived.items()}
json.dump({"cpu_s": cpu, "atoms": sum(len(f) for f in spec["points"]), "outputs": outputs},
          open(sys.argv[2], "w"))
'''


def laser_eval_stream(name: str, rate: int, points: int, seed: int = 5) -> list[list[tuple]]:
    """The atoms of the streams Laser's eval.py uses for each workload (stream/*.py), with short
    names for their IRIs: RDFStream1 (diamond: fresh p(s_k, o_k)), EvalStreamOldvsNewBox (box, as
    evalBox2: p(c, c) for c < rate, the same at every time point), RDFStream2 (join: chains
    p(c_k, c_k+1), p(c_k+1, c_k+2), about rate + 1 distinct atoms per time point), EvalStream
    (cooling: temp(V), V random in 0..200, here seeded)."""
    rnd = random.Random(seed)
    out = []
    for t in range(points):
        if name == "diamond":
            facts = [("p", (f"s{t * rate + c}", f"o{t * rate + c}")) for c in range(rate)]
        elif name == "box":
            facts = [("p", (c, c)) for c in range(rate)]
        elif name == "join":
            facts = []
            for c in range(rate):
                k = t * rate + c
                facts += [("p", (f"c{k}", f"c{k + 1}")), ("p", (f"c{k + 1}", f"c{k + 2}"))]
            facts = list(dict.fromkeys(facts))
        else:
            facts = [("temp", (rnd.randint(0, 200),)) for _ in range(rate)]
        out.append(facts)
    return out


def run_laser(laser: Path, python: str, rules: list[str], data, record: list[int], work: Path,
              timed_from: int = 0) -> dict:
    """Laser (the checkout LASER) on DATA; its CPU seconds in evaluate() from time point
    TIMED_FROM on, and its conclusions at the time points RECORD."""
    spec, result, driver = work / "laser_spec.json", work / "laser_result.json", work / "laser_driver.py"
    spec.write_text(json.dumps({"rules": rules, "points": data, "record": record, "timed_from": timed_from}))
    driver.write_text(DRIVER)
    common.run_cpu([python, "-OO", "-W", "ignore", str(driver), str(spec), str(result), str(laser)], cwd=laser)
    return json.loads(result.read_text())


def write_dotr_inputs(name: str, n: int, data, work: Path) -> tuple[Path, Path, Path]:
    template, _ = DOTR_WORKLOADS[name]
    rules = work / f"{name}.dotr"
    rules.write_text(template.format(n=n))
    jsonl, one = work / f"{name}.jsonl", work / f"{name}.one.jsonl"
    write_jsonl(jsonl, data)
    one.write_text(jsonl.open().readline())
    return rules, jsonl, one


def write_jsonl(path: Path, data) -> None:
    """The atoms as dotr's JSON Lines stream, one record per time point."""
    with open(path, "w") as f:
        for t, facts in enumerate(data):
            f.write(json.dumps({"t": t, "facts": [f"{p}({','.join(map(str, a))})" for p, a in facts]}) + "\n")


def compare(name: str, laser_out: dict, dotr_out: dict[int, dict], points: list[int]) -> None:
    at_heads = AT_HEADS.get(name, ())
    for t in points:
        derived = laser_out[str(t)]
        ours = set(dotr_out.get(t, {}).get("facts", []))
        common.check_equal(f"{name}: conclusions at time point {t}", set(derived.get(str(t), [])), ours, "Laser")
        for key, atoms in derived.items():  # atoms of @T heads, reported for earlier time points
            k = int(key)
            if k == t:
                continue
            placed = {a for a in dotr_out.get(k, {}).get("facts", []) if a.split("(")[0] in at_heads}
            common.check_equal(f"{name}: @T conclusions for time point {k}, as reported at {t}",
                               set(atoms), placed, "Laser")


def growth(args, laser: Path, work: Path) -> None:
    """``--growth``: ms per time point of Laser and of ``dotr run`` as the window grows."""
    windows, timed, rows = args.growth or [10, 100, 400], 200, []
    for name, template in LASER_GROWTH.items():
        for n in windows:
            rules = [template.format(n=n, m=n * 100)]
            points = [n, n + 5, n + 19]
            common.log(f"growth {name}, window {n}: comparing Laser and dotr at time points {points}")
            data = stream("growth", 100, n + 20)
            dotr_rules, jsonl, dotr_out = (work / f"growth.{ext}" for ext in ("dotr", "jsonl", "out.jsonl"))
            dotr_rules.write_text(GROWTH[name].format(n=n, m=n * 100) + "\n")
            write_jsonl(jsonl, data)
            common.dotr_run(dotr_rules, jsonl, dotr_out)
            compare(name, run_laser(laser, args.python, rules, data, points, work)["outputs"],
                    common.read_dotr_jsonl(dotr_out), points)
            common.log(f"growth {name}, window {n}: timing ({args.pairs} pairs)")
            data = stream("growth", 100, n + 10 + timed)
            timed_pairs = common.alternate(
                lambda: run_laser(laser, args.python, rules, data, [], work, timed_from=n + 10)["cpu_s"] / timed * 1e3,
                lambda: run_growth_cli(GROWTH[name].format(n=n, m=n * 100), data, timed, pairs=1) * 1e3, args.pairs)
            rows.append({"program": name, "window": n, **timed_pairs})
    for row in rows:
        row["peer_cell"] = f"{row['peer_s']:.2f} ({common.span(row['peer_range'], '.2f')})"
        row["dotr_cell"] = f"{row['dotr_s']:.2f} ({common.span(row['dotr_range'], '.2f')})"
        row["ratio_cell"] = f"{row['ratio']:.2f} ({common.span(row['ratio_range'], '.2f')})"
    common.print_table(
        f"Laser vs dotr run as the window grows: CPU ms per time point, 100 atoms per time point, time windows of n "
        f"time points, tuple windows of 100n atoms; median (range) of {args.pairs} alternating pairs",
        [("program", "program", ""), ("window", "n", "d"), ("peer_cell", "Laser", ""),
         ("dotr_cell", "dotr run", ""), ("ratio_cell", "Laser / dotr", "")], rows)
    print("Laser / dotr > 1: dotr faster. Laser: evaluate() over the last 200 time points; dotr: a run over n + 210 "
          "time points minus one over n + 10.")
    common.write_json(args.json, "Laser", {"laser": str(laser), "laser_python": args.python, "growth": True}, rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laser", help="a checkout of Laser that --python runs")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs Laser (Laser is Python 2: a Python 2 or PyPy 2)")
    ap.add_argument("--workloads", nargs="+", default=list(LASER_RULES), choices=list(LASER_RULES))
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--rate", type=int, default=200, help="atoms per time point")
    ap.add_argument("--points", type=int, default=100, help="time points")
    ap.add_argument("--check-points", type=int, default=12, help="time points compared before timing")
    ap.add_argument("--streams", choices=["dotr", "laser"], default="dotr",
                    help="dotr: the generators of benchmarks/lars.py; laser: the shapes of the streams "
                         "of Laser's eval.py")
    ap.add_argument("--growth", type=int, nargs="*", metavar="WINDOW",
                    help="only the cost per time point as the window grows (default windows 10 100 400)")
    common.common_arguments(ap, "Laser")
    args = ap.parse_args(argv)

    laser = common.peer_path(args.laser, "--laser", "a checkout of Laser", directory=True)
    work = Path(args.work).resolve() / "laser"
    work.mkdir(parents=True, exist_ok=True)
    if args.growth is not None:
        return growth(args, laser, work)
    n = args.window
    rows = []
    for name in args.workloads:
        if args.streams == "dotr":
            data = stream(DOTR_WORKLOADS[name][1], args.rate, args.points)
        else:
            data = laser_eval_stream(name, args.rate, args.points)
        atoms = sum(len(f) for f in data)
        rules = [r.format(n=n) for r in LASER_RULES[name]]
        dotr_rules, jsonl, one = write_dotr_inputs(name, n, data, work)
        dotr_out = work / f"{name}.out.jsonl"
        points = common.sample_points(0, args.points - 1, args.check_points, must=(n, n + 1))
        common.log(f"{name}: comparing Laser and dotr at time points {points}")
        laser_out = run_laser(laser, args.python, rules, data, points, work)["outputs"]
        common.dotr_run(dotr_rules, jsonl, dotr_out)
        compare(name, laser_out, common.read_dotr_jsonl(dotr_out), points)
        common.log(f"{name}: timing ({atoms} atoms, {args.pairs} pairs)")
        timed = common.alternate(lambda: run_laser(laser, args.python, rules, data, [], work)["cpu_s"] / atoms * 1e6,
                                 lambda: common.dotr_run(dotr_rules, jsonl, dotr_out) / atoms * 1e6, args.pairs)
        startup = common.dotr_startup(dotr_rules, one, work)
        row = {"workload": name, "streams": args.streams, "window": n, "rate": args.rate, "points": args.points,
               "atoms": atoms, **timed, "dotr_startup_s": startup}
        row["peer_cell"] = f"{row['peer_s']:.1f} ({common.span(row['peer_range'], '.1f')})"
        row["dotr_cell"] = f"{row['dotr_s']:.1f} ({common.span(row['dotr_range'], '.1f')})"
        row["ratio_cell"] = f"{row['ratio']:.2f} ({common.span(row['ratio_range'], '.2f')})"
        rows.append(row)
        common.log(f"{name}: Laser {row['peer_s']:.1f} µs/atom, dotr {row['dotr_s']:.1f} µs/atom (medians)")

    common.print_table(
        f"Laser ({args.python}) vs dotr run: CPU microseconds per input atom, window {n}, {args.rate} atoms x "
        f"{args.points} time points, {args.streams}'s streams; median (range) of {args.pairs} alternating pairs",
        [("workload", "workload", ""), ("peer_cell", "Laser", ""), ("dotr_cell", "dotr run", ""),
         ("dotr_startup_s", "dotr start-up (s)", ".2f"), ("ratio_cell", "Laser / dotr", "")], rows)
    print("Laser / dotr > 1: dotr faster. Laser: evaluate() only, atoms already in memory (its eval.py's measure); "
          "dotr: the whole `dotr run` process (JSON Lines in, output file written, start-up included).")
    common.write_json(args.json, "Laser", {"laser": str(laser), "laser_python": args.python,
                                           "dotr": common.dotr_command()}, rows)


if __name__ == "__main__":
    main()
