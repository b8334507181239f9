"""LARS engine benchmarks: the Laser paper's workloads (ISWC 2017, section 5).

Workloads: window-diamond ``q(A,B) :- [n] <> p(A,B)``, window-box ``q(A,B) :- [n] [] p(A,B)``,
single join ``q(A,C) :- [n] <> p(A,B), [n] <> p(B,C)``, multiple rules (10 join rules over
different predicates), and the cooling system of Fig. 4. Streams of unique atoms at 200, 400 and
800 atoms per time point, windows of 1, 20, 40 and 80 time points. Printed: mean time per input
atom, semi-naive (sSNE) against the naive mode (every rule in full at every time point) in the same
run, and, on a small configuration, against the reference evaluator of the tests.

    python benchmarks/lars.py [--windows 1 20 40 80] [--rates 200 400 800] [--points 40]

``--constants [WINDOW ...]`` runs only the many-constants program (``MANY_CONSTANTS``: 100 atoms per
time point over 20,000 constants, 400 time points) through ``dotr run`` at each window, with and
without ``--changes``: whole-process CPU seconds, the windows in turn in each of ``--pairs``
rounds, median and range.

``--constants [WINDOW ...] --format FORMAT ...`` runs it with each output format in turn (``jsonl``,
``trig``, ``nquads``) instead of with and without ``--changes``: its RDF form (``MANY_CONSTANTS_RDF``:
the constants IRIs, the heads classes, so that every fact printed is an ``rdf:type`` triple).

``--undo [WINDOW ...]`` runs only the many-constants program through ``dotr run`` without and with
``--on-error skip`` (which keeps the reasoner's state to undo a time point that cannot finish),
over ``--points`` time points (2000), in turn in each of ``--pairs`` rounds: whole-process CPU
seconds, median and range, and the ratio.

``--growth [WINDOW ...]`` runs only the cost per time point as the window grows, through the
engine's API on interned atoms and, beside it, through ``dotr run`` (JSON Lines in, output file
written; the CPU time of a run over the first n + 10 time points taken from one over n + 1010, so
that start-up and filling the window cancel out; the median of ``--pairs`` such pairs).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dotr.rules import ir, parse  # noqa: E402
from dotr.temporal.lars import LarsEngine  # noqa: E402
from benchmarks.peers.common import dotr_command  # noqa: E402

COOLING = """
@T steam(V)  :- [{n}] @T temp(V), V >= 100 .
@T liquid(V) :- [{n}] @T temp(V), V >= 1, V < 100 .
@T isSteam   :- [{n}] @T steam(V) .
@T isLiquid  :- [{n}] @T liquid(V) .
alarm        :- [{n}] [] isSteam .
normal       :- [{n}] [] isLiquid .
freeze       :- not alarm, not normal .
veryHot(T)   :- [{n}] @T steam(V), V >= 150 .
veryCold(T)  :- [{n}] @T liquid(V), V = 1 .
"""

WORKLOADS = {
    "diamond": ("q(A, B) :- [{n}] <> p(A, B) .", "unique"),
    "box": ("q(A, B) :- [{n}] [] p(A, B) .", "repeat"),
    "join": ("q(A, C) :- [{n}] <> p(A, B), [{n}] <> p(B, C) .", "join"),
    "rules10": ("\n".join(f"q{i}(A, C) :- [{{n}}] <> p{i}(A, B), [{{n}}] <> p{i}(B, C) ." for i in range(10)), "join10"),
    "cooling": (COOLING, "temp"),
}


LASER2 = {
    # Laser2 (impossible derivations), section 6: a box that fails every n time points (best
    # case), a box over a predicate that never arrives with tiny windows (worst case), and a
    # cascade of w rules over a failing box
    "l2best": ("m(X, Y) :- [{n}] <> p(X, Y), [{n}] [] q(X, Y) .", "l2best"),
    "l2worst": ("m(X, Y) :- [10] <> p(X, Y), [{n}] [] q(X, Y) .", "l2worst"),
    "l2chain": ("r0(X, Y) :- [{n}] <> p(X, Y), [{n}] [] q(X, Y) .\n" +
                "\n".join(f"r{i}(X, Y) :- r{i - 1}(X, Y), [{{n}}] [] q(X, Y) ." for i in range(1, 20)),
                "l2best"),
}


def stream(kind: str, rate: int, points: int, seed: int = 5, n: int = 10):
    rnd = random.Random(seed)
    counter = 0
    out = []
    for t in range(points):
        facts = []
        for _ in range(rate):
            counter += 1
            if kind == "unique":
                facts.append(("p", (f"a{counter}", f"b{counter}")))
            elif kind == "repeat":  # a stable population, so that boxes hold
                k = rnd.randrange(rate)
                facts.append(("p", (f"a{k}", f"b{k}")))
            elif kind == "join":
                facts.append(("p", (f"n{rnd.randrange(rate * 4)}", f"n{rnd.randrange(rate * 4)}")))
            elif kind in ("l2best", "l2worst"):
                k = counter % rate
                facts.append(("p", (f"a{k}", f"a{k}")))
                if kind == "l2best" and t % n != 0:
                    facts.append(("q", (f"a{k}", f"a{k}")))
            elif kind == "join10":
                facts.append((f"p{counter % 10}", (f"n{rnd.randrange(rate)}", f"n{rnd.randrange(rate)}")))
            elif kind == "growth":  # 100 keys, one blocking atom every 10 time points
                facts.append(("p", (f"a{rnd.randrange(100)}", f"b{rnd.randrange(1000)}")))
            elif kind == "constants":  # a sensor stream: p, q and r over 20,000 constants
                facts.append((rnd.choices("pqr", weights=(6, 3, 1))[0], (f"c{rnd.randrange(20_000)}",)))
            else:
                facts.append(("temp", (rnd.randrange(0, 200),)))
        if kind == "growth" and t % 10 == 0:
            facts.append(("r", (f"a{rnd.randrange(100)}",)))
        out.append(facts)
    return out


def _interned(engine: LarsEngine, data):
    d = engine.dictionary
    out = []
    for facts in data:
        row = []
        for pred, args in facts:
            row.append(((d.intern(ir.Name(pred)), len(args)),
                        tuple(d.intern(ir.Num(a) if isinstance(a, int) else ir.Name(a)) for a in args)))
        out.append(row)
    return out


def run_engine(program: str, data, semi_naive: bool = True, **options) -> float:
    engine = LarsEngine(parse(program).rules, semi_naive=semi_naive, **options)
    engine.report_facts = False  # (what changed, as the pipeline reads it)
    interned = _interned(engine, data)
    gc.collect()
    start = time.process_time()
    for t, facts in enumerate(interned):
        engine.step(t, facts, interned=True)
    elapsed = time.process_time() - start
    return elapsed / max(1, sum(len(f) for f in data))


#: cost per time point as the window grows: (program, window sizes in time points or atoms)
GROWTH = {
    "diamond": "q(A) :- [{n}] <> p(A, B) .",
    "not": "q(A) :- [{n}] <> p(A, B), not [{n}] <> r(A) .",
    "tuple": "q(A) :- [{m} #] <> p(A, B) .",
    "tuple not": "q(A) :- [{m} #] <> p(A, B), not [{n}] <> r(A) .",
    "tuple box": "q(A) :- [{m} #] [] p(A, B) .",
}
#: the growth programs over the many-constants stream (``stream("constants", ...)``)
MANY_CONSTANTS = {
    "many constants": "a(X) :- [{n}] <> p(X), not [{n}] <> q(X) .\nb(X) :- [{n}] <> p(X), not r(X) .\n"
                      "c(X) :- [{m} #] <> q(X), not [{n}] [] p(X) .",
}


#: the many-constants program with triples for heads (``--constants --format``): each derived fact is a
#: class membership of a constant ``<http://ex.org/cN>``, printed as an ``rdf:type`` triple
MANY_CONSTANTS_RDF = "@prefix : <http://ex.org/> .\n" + MANY_CONSTANTS["many constants"].replace(
    "a(X) :-", ":A(X) :-").replace("b(X) :-", ":B(X) :-").replace("c(X) :-", ":C(X) :-")


def run_growth(program: str, data, timed: int) -> float:
    """Mean CPU seconds per time point over the last ``timed`` time points (the window is full)."""
    engine = LarsEngine(parse(program).rules)
    engine.report_facts = False
    interned = _interned(engine, data)
    gc.collect()
    start = None
    for t, facts in enumerate(interned):
        if t == len(interned) - timed:
            start = time.process_time()
        engine.step(t, facts, interned=True)
    return (time.process_time() - start) / timed


#: ``--growth``: the time points timed through ``dotr run`` (a difference of two whole runs: at 200,
#: one run's noise moved a cell by about 0.5 ms)
TIMED = 1000


def run_growth_cli(program: str, data, timed: int, pairs: int = 3) -> float:
    """The same as :func:`run_growth` through ``dotr run``: CPU seconds per time point, the median
    over ``pairs`` pairs of a run over ``data`` and one without its last ``timed`` time points."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "rules.dotr").write_text(program + "\n")

        def cpu(points) -> float:
            (tmp / "stream.jsonl").write_text("".join(json.dumps({"t": t, "facts": [
                f"{p}({', '.join(map(str, args))})" for p, args in facts]}) + "\n" for t, facts in enumerate(points)))
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([*dotr_command(), "run", "--rules", str(tmp / "rules.dotr"),
                            "--input", str(tmp / "stream.jsonl"), "--output", str(tmp / "out.jsonl"), "-q"],
                           check=True, cwd=root)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return statistics.median(cpu(data) - cpu(data[:-timed]) for _ in range(pairs)) / timed


def _constants_files(tmp: Path, windows: list[int], points: int, rdf: bool = False) -> None:
    """The many-constants stream (``stream.jsonl``) and program per window (``wN.dotr``) in ``tmp``
    (``rdf``: their RDF form, ``MANY_CONSTANTS_RDF``)."""
    def arg(a: str) -> str:
        return f"<http://ex.org/{a}>" if rdf else a
    (tmp / "stream.jsonl").write_text("".join(json.dumps({"t": t, "facts": [
        f"{p}({', '.join(map(arg, args))})" for p, args in facts]}) + "\n"
        for t, facts in enumerate(stream("constants", 100, points))))
    program = MANY_CONSTANTS_RDF if rdf else MANY_CONSTANTS["many constants"]
    for n in windows:
        (tmp / f"w{n}.dotr").write_text(program.format(n=n, m=n * 100) + "\n")


def _run_cpu(tmp: Path, n: int, *extra: str, output: str = "out.jsonl") -> float:
    """CPU seconds (user + system) of ``dotr run`` over ``tmp``'s stream with window ``n``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*dotr_command(), "run", "--rules", str(tmp / f"w{n}.dotr"),
                    "--input", str(tmp / "stream.jsonl"), "--output", str(tmp / output), "-q", *extra],
                   check=True, cwd=Path(__file__).resolve().parents[1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def run_undo(windows: list[int], points: int, pairs: int) -> list[dict]:
    """``--undo``: what ``--on-error skip`` costs a run that rejects nothing (the reasoner's state
    kept to undo a time point that cannot finish): the many-constants program through ``dotr
    run`` at each window without and with it, in turn in each pair; whole-process CPU seconds,
    median and range, and the ratio with to without in the same pair."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _constants_files(tmp, windows, points)
        for n in windows:
            plain, skip = [], []
            for _ in range(pairs):
                plain.append(_run_cpu(tmp, n))
                skip.append(_run_cpu(tmp, n, "--on-error", "skip"))
            ratios = [b / a for a, b in zip(plain, skip)]
            rows.append({"window": n, "points": points, "plain_s": statistics.median(plain),
                         "plain_range": [min(plain), max(plain)], "skip_s": statistics.median(skip),
                         "skip_range": [min(skip), max(skip)], "ratio": statistics.median(ratios),
                         "ratio_range": [min(ratios), max(ratios)]})
            print(f"window {n:>4}, {points} time points: {rows[-1]['plain_s']:.2f} s "
                  f"({min(plain):.2f}-{max(plain):.2f}), "
                  f"--on-error skip {rows[-1]['skip_s']:.2f} s ({min(skip):.2f}-{max(skip):.2f}): "
                  f"{rows[-1]['ratio']:.3f}x ({min(ratios):.3f}-{max(ratios):.3f})", flush=True)
    return rows


def run_constants(windows: list[int], points: int, pairs: int) -> list[dict]:
    """``--constants``: the many-constants program through ``dotr run`` (a stream file in, the
    output file written) at each window, with and without ``--changes``: CPU seconds of the
    whole process, the windows run in turn within each pair; median and range, and each
    window's ratio to the first one's in the same pair."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _constants_files(tmp, windows, points)

        def cpu(n: int, *extra: str) -> float:
            return _run_cpu(tmp, n, *extra)

        for extra in ((), ("--changes",)):
            times: dict[int, list[float]] = {n: [] for n in windows}
            for _ in range(pairs):
                for n in windows:
                    times[n].append(cpu(n, *extra))
            for n in windows:
                ratios = [a / b for a, b in zip(times[n], times[windows[0]])]
                rows.append({"window": n, "changes": bool(extra), "cpu_s": statistics.median(times[n]),
                             "cpu_range": [min(times[n]), max(times[n])], "ratio": statistics.median(ratios),
                             "ratio_range": [min(ratios), max(ratios)]})
                row = rows[-1]
                print(f"{'--changes' if extra else 'every fact':<11} window {n:>4}: {row['cpu_s']:.2f} s "
                      f"({row['cpu_range'][0]:.2f}-{row['cpu_range'][1]:.2f}), {row['ratio']:.2f}x window {windows[0]} "
                      f"({row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f})", flush=True)
    return rows


def run_formats(windows: list[int], points: int, pairs: int, formats: list[str]) -> list[dict]:
    """``--constants --format``: the many-constants program's RDF form through ``dotr run`` at each
    window, writing each output format in turn within each round: CPU seconds of the whole
    process, median and range, and each format's ratio to the first one's in the same round."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _constants_files(tmp, windows, points, rdf=True)
        for n in windows:
            times: dict[str, list[float]] = {fmt: [] for fmt in formats}
            for _ in range(pairs):
                for fmt in formats:
                    times[fmt].append(_run_cpu(tmp, n, "--format", fmt, output=f"out.{fmt}"))
            for fmt in formats:
                ratios = [a / b for a, b in zip(times[fmt], times[formats[0]])]
                rows.append({"window": n, "format": fmt, "cpu_s": statistics.median(times[fmt]),
                             "cpu_range": [min(times[fmt]), max(times[fmt])], "ratio": statistics.median(ratios),
                             "ratio_range": [min(ratios), max(ratios)], "bytes": (tmp / f"out.{fmt}").stat().st_size})
                row = rows[-1]
                print(f"window {n:>4} {fmt:<7}: {row['cpu_s']:.2f} s ({row['cpu_range'][0]:.2f}-{row['cpu_range'][1]:.2f}), "
                      f"{row['ratio']:.2f}x {formats[0]} ({row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f}), "
                      f"{row['bytes'] / 1e6:.1f} MB", flush=True)
    return rows


def run_reference(program: str, data) -> float:
    from tests.temporal.reference import Reference
    ref = Reference(parse(program).rules)
    start = time.process_time()
    for t, facts in enumerate(data):
        ref.step(t, [((ir.Name(p), len(a)), tuple(ir.Num(x) if isinstance(x, int) else ir.Name(x) for x in a))
                     for p, a in facts])
    return (time.process_time() - start) / max(1, sum(len(f) for f in data))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, nargs="+", default=[1, 20, 40, 80])
    ap.add_argument("--rates", type=int, nargs="+", default=[200, 400, 800])
    ap.add_argument("--points", type=int, default=None, help="time points (default 40; --undo 2000)")
    ap.add_argument("--naive", action="store_true", help="also run the naive mode (slow)")
    ap.add_argument("--growth", type=int, nargs="*", metavar="WINDOW",
                    help="only the cost per time point as the window grows (default windows 10 100 400; "
                         "100 atoms per time point, 100 keys)")
    ap.add_argument("--constants", type=int, nargs="*", metavar="WINDOW",
                    help="only the many-constants program through dotr run (default windows 10 300; "
                         "100 atoms per time point over 20,000 constants)")
    ap.add_argument("--format", nargs="+", choices=["jsonl", "trig", "nquads"], dest="formats",
                    help="--constants: write each of these output formats in turn (the program's RDF form)")
    ap.add_argument("--undo", type=int, nargs="*", metavar="WINDOW",
                    help="only the many-constants program through dotr run without and with --on-error skip "
                         "(default windows 10 300; --points time points, 2000 if not given)")
    ap.add_argument("--pairs", type=int, default=5,
                    help="--constants, --undo: runs of each, in turn; --growth: pairs of runs per cell")
    ap.add_argument("--json", default="benchmarks/results/lars.json")
    args = ap.parse_args(argv)
    rows = []
    if args.undo is not None:
        rows = run_undo(args.undo or [10, 300], args.points or 2000, args.pairs)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(rows, indent=2))
        return
    if args.constants is not None:
        if args.formats:
            rows = run_formats(args.constants or [10, 300], 400, args.pairs, args.formats)
        else:
            rows = run_constants(args.constants or [10, 300], 400, args.pairs)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(rows, indent=2))
        return
    if args.growth is not None:
        windows = args.growth or [10, 100, 400]
        print(f"{'program':<10} " + " ".join(f"{'w' + str(n):>9}" for n in windows) +
              "  (ms per time point: the engine's API | dotr run)")
        programs = [(name, template, "growth") for name, template in GROWTH.items()]
        programs += [(name, template, "constants") for name, template in MANY_CONSTANTS.items()]
        for name, template, kind in programs:
            cells, cli = [], []
            for n in windows:
                program, data = template.format(n=n, m=n * 100), stream(kind, 100, n + 60)
                ms = run_growth(program, data, 50) * 1e3
                cli.append(run_growth_cli(program, stream(kind, 100, n + TIMED + 10), TIMED, args.pairs) * 1e3)
                rows.append({"workload": f"growth {name}", "window": n, "rate": 100, "ms_per_point": ms,
                             "dotr_run_ms_per_point": cli[-1]})
                cells.append(ms)
            print(f"{name:<10} " + " ".join(f"{c:>9.3f}" for c in cells) + f"  last/first {cells[-1] / cells[0]:.2f}x | "
                  + " ".join(f"{c:>7.2f}" for c in cli) + f"  last/first {cli[-1] / cli[0]:.2f}x", flush=True)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(rows, indent=2))
        return
    print(f"{'workload':<9} {'window':>6} {'rate':>5} {'us/atom':>9} {'naive us/atom':>14} {'ratio':>6}")
    for name, (template, kind) in WORKLOADS.items():
        for n in args.windows:
            for rate in args.rates:
                program = template.format(n=n)
                data = stream(kind, rate, max(args.points or 40, n + 10))
                us = run_engine(program, data) * 1e6
                row = {"workload": name, "window": n, "rate": rate, "us_per_atom": us}
                naive = ""
                if args.naive and n <= 20 and rate <= 200:
                    row["naive_us_per_atom"] = run_engine(program, data, semi_naive=False) * 1e6
                    naive = f"{row['naive_us_per_atom']:>14.2f} {row['naive_us_per_atom'] / us:>5.1f}x"
                rows.append(row)
                print(f"{name:<9} {n:>6} {rate:>5} {us:>9.2f} {naive}", flush=True)
    print("\nLaser2 workloads (window n, m atoms of each predicate per time point):")
    for name, (template, kind) in LASER2.items():
        for n in ([1, 2, 3] if name == "l2worst" else [10, 50, 100]):
            for m in (100, 500):
                program = template.format(n=n)
                data = stream(kind, m, 150, n=n)
                on = run_engine(program, data, disable_from=1) * 1e6
                off = run_engine(program, data, rule_disabling=False) * 1e6
                rows.append({"workload": name, "window": n, "rate": m, "us_per_atom": on, "no_disabling_us_per_atom": off})
                print(f"{name:<9} {n:>6} {m:>5} {on:>9.2f} {off:>14.2f} {off / on:>5.2f}x (without disabling)", flush=True)
    # the reference evaluator only copes with tiny inputs: one small configuration each
    print("\nagainst the reference evaluator (window 2, 10 atoms per time point, 8 time points):")
    for name, (template, kind) in WORKLOADS.items():
        program = template.format(n=2)
        data = stream(kind, 10, 8)
        ours, ref = run_engine(program, data) * 1e6, run_reference(program, data) * 1e6
        rows.append({"workload": name, "window": 2, "rate": 10, "us_per_atom": ours, "reference_us_per_atom": ref})
        print(f"{name:<9} engine {ours:>9.2f} us/atom, reference {ref:>11.2f} us/atom, {ref / ours:>8.0f}x")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
