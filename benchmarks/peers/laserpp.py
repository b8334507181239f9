"""dotr against Laser++ (karmaresearch/laser-plus-plus, the C++ LARS reasoner) on STAR-bench
(maspadaru/starbench: its stream generators and its LARS programs).

Programs (STAR-bench's premade/program/lars/*.star, translated to dotr's syntax by this script:
``[$, n] [D]`` -> ``[n] <>``, ``[$, n] [B]`` -> ``[n] []``, ``&&`` -> ``,``, ``:=`` -> ``:-``):

    atom         a(X1, X2) := p(X1, X2)
    box_w32      a(X1, X2) := [$, 32] [B] p(X1, X2)
    diamond_w32  a(X1, X2) := [$, 32] [D] p(X1, X2)
    problem_w64  warn := [$, 64] [D] p, error := [$, 64] [B] q, prob := error && warn
    snow_w64     snow := [$, 64] [D] p && [$, 64] [B] q
    traffic_w64  warning := [$, 64] [D] p, stop := [$, 64] [B] q, jam := p && q

Streams: STAR-bench's scripts/gen_seq.py END_TIME FACT_FLOW NUM_PRED ARITY, as its
all_data_gen.sh runs it (one predicate for the programs over p alone, two for the others, as
the STAR app's bench.sh pairs them), at 200 and 1000 atoms per time point over 1000 time points
(STAR-bench's names: seq_1k_200_1_2, seq_1k_1k_2_2, ...). The generated stream is written once in
Laser++'s text format (``start end`` then ``t : p(0,1), p(2,3)`` lines, the first element on the
header line as in Laser++'s own tests); both read that file: Laser++ through a small driver
(drivers/laserpp.cpp, built by the user against Laser++ as its own instructions build it, given as
``--laserpp PATH``) that hands it to the library's ``ExampleIOManager`` and ``Reasoner`` and writes
the conclusions to a file, dotr through ``dotr run --input-format laserpp``.

Before timing, the outputs are compared at every time point of the stream's first
``--check-prefix`` time points and of a random stream (STAR-bench's gen_random.py, 100 x 100, two
predicates: it exercises the windows, which the sequential streams, the same atoms at every time
point, do not); after timing, at a sample of time points of the timed runs. Reported: CPU
seconds of each process (Laser++ runs a reader, an evaluator and a writer thread; its wall time
is in the JSON), and dotr's start-up (``dotr run`` on one record) apart.

    python benchmarks/peers/laserpp.py [--sizes 200x1000 1000x1000] [--programs atom ...] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PROGRAMS = ["atom", "box_w32", "diamond_w32", "problem_w64", "snow_w64", "traffic_w64"]
ONE_PREDICATE = {"atom", "box_w32", "diamond_w32"}  # the STAR app's bench.sh runs these on *_1_2 streams

# -- programs ------------------------------------------------------------------------------------

def translate(star: str) -> str:
    """A STAR-bench program in dotr's syntax (the operators these programs use)."""
    out = []
    for line in star.splitlines():
        if not line.strip():
            continue
        head, sep, body = line.partition(":=")
        if not sep:
            raise SystemExit(f"cannot translate {line!r}: no ':='")
        body = re.sub(r"\[\s*\$\s*,\s*(\d+)\s*\]\s*\[\s*D\s*\]", r"[\1] <>", body)
        body = re.sub(r"\[\s*\$\s*,\s*(\d+)\s*\]\s*\[\s*B\s*\]", r"[\1] []", body)
        body = body.replace("&&", ",")
        if re.search(r"\[\s*[$#@]", head + body):
            raise SystemExit(f"cannot translate {line!r}: only [$, n] [D] and [$, n] [B] are translated")
        out.append(f"{head.strip()} :- {body.strip()} .")
    return "\n".join(out) + "\n"


# -- streams -------------------------------------------------------------------------------------

def k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def generate(starbench: Path, script: str, points: int, rate: int, preds: int, work: Path, python: str,
             spaced: bool = False) -> Path:
    """STAR-bench's generator output, rewritten in Laser++'s text format (cached). Arguments are
    written ``p(0,1)``, or with SPACED ``p(0, 1)`` as Laser++'s README, tests and writer do."""
    name = f"{script.removeprefix('gen_')}_{k(points)}_{k(rate)}_{preds}_2"
    path = work / f"{name}{'.spaced' if spaced else ''}.txt"
    if path.exists() and script == "gen_seq":
        return path
    common.log(f"generating {name} with STAR-bench's scripts/{script}.py")
    text = subprocess.run([python, str(starbench / "scripts" / f"{script}.py"), str(points), str(rate), str(preds), "2"],
                          check=True, capture_output=True, text=True).stdout
    lines = text.split("\n")
    start, end = lines[0].split()
    elements, facts, t = [], [], int(start)
    separator = ", " if spaced else ","
    for line in lines[1:]:
        if line.strip():
            pred, *args = line.split()
            facts.append(f"{pred}({separator.join(args)})")
        elif t <= int(end):  # a blank line closes a time point
            elements.append(f"{t} : {', '.join(facts)}")
            t, facts = t + 1, []
    path.write_text(f"{start} {end} " + "\n".join(elements) + "\n")
    return path


def one_record(stream: Path) -> Path:
    """The stream's first time point alone, for dotr's start-up."""
    first = stream.open().readline().split(None, 2)
    path = stream.with_suffix(".one.txt")
    path.write_text(f"{first[0]} {first[0]} {first[2]}")
    return path


# -- outputs -------------------------------------------------------------------------------------

ATOM = re.compile(r"([^\s(]+)\(([^)]*)\)")


def canonical(pred: str, args: str) -> str:
    """dotr's form of a Laser++ conclusion: no spaces; numbers as numbers (dotr reads ``07`` as
    the integer 7, Laser++ keeps the string "07": gen_random.py writes zero-padded values)."""
    parts = [a.strip() for a in args.split(",")]
    return f"{pred}({','.join(str(int(a)) if a.isdigit() else a for a in parts)})"


def read_laserpp(path: Path, points: set[int] | None = None) -> dict[int, set[str]]:
    out = {}
    with open(path) as f:
        for line in f:
            t, sep, rest = line.partition(" -> ")
            if not sep or (points is not None and int(t) not in points):
                continue
            out[int(t)] = {canonical(p, a) for p, a in ATOM.findall(rest)}
    return out


def read_dotr(path: Path, points: set[int] | None = None) -> dict[int, set[str]]:
    return {t: set(rec.get("facts", [])) for t, rec in common.read_dotr_jsonl(path).items()
            if points is None or t in points}


def compare(what: str, peer: dict[int, set[str]], ours: dict[int, set[str]], points) -> None:
    for t in points:
        common.check_equal(f"{what}, time point {t}", peer.get(t, set()), ours.get(t, set()), "Laser++")


def run_laserpp(exe: Path, program: Path, stream: Path, output: Path) -> tuple[float, dict]:
    cpu, _, err = common.run_peer(
        [str(exe), str(program), str(stream)], stdout_path=output,
        why="Laser++'s Reasoner notifies its writer thread without holding the mutex the writer "
            "waits with, so a notification can be lost")
    return cpu, json.loads(err.strip().splitlines()[-1])


def prefix(stream: Path, points: int) -> Path:
    """The stream's first POINTS time points (its header shortened accordingly)."""
    path = stream.with_name(f"{stream.stem}.first{points}.txt")
    with open(stream) as f:
        lines = [next(f) for _ in range(points)]
    start = int(lines[0].split()[0])
    lines[0] = f"{start} {start + points - 1} " + lines[0].split(None, 2)[2]
    path.write_text("".join(lines))
    return path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laserpp", help="the driver drivers/laserpp.cpp built against Laser++ (README.md)")
    ap.add_argument("--starbench", help="a checkout of STAR-bench (its generator scripts and programs)")
    ap.add_argument("--programs", nargs="+", default=PROGRAMS)
    ap.add_argument("--sizes", nargs="+", default=["200x1000", "1000x1000"],
                    help="ATOMS_PER_TIME_POINTxTIME_POINTS")
    ap.add_argument("--generator", choices=["gen_seq", "gen_random"], default="gen_seq",
                    help="STAR-bench's generator for the timed streams (all_data_gen.sh uses gen_seq)")
    ap.add_argument("--spaced-facts", action="store_true",
                    help="write facts as p(0, 1), as Laser++'s README and writer do, instead of p(0,1) "
                         "(dotr reads a fact with spaces through its rule grammar, much more slowly)")
    ap.add_argument("--check-prefix", type=int, default=100, help="time points compared in full before timing")
    ap.add_argument("--check-points", type=int, default=12, help="time points of the timed runs compared")
    common.common_arguments(ap, "Laser++")
    args = ap.parse_args(argv)

    exe = common.peer_path(args.laserpp, "--laserpp", "the Laser++ driver, drivers/laserpp.cpp built against Laser++")
    starbench = common.peer_path(args.starbench, "--starbench", "a checkout of STAR-bench", directory=True)
    work = Path(args.work).resolve() / "laserpp"
    work.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    programs = {}
    for name in args.programs:
        star = starbench / "premade" / "program" / "lars" / f"{name}.star"
        if not star.exists():
            raise SystemExit(f"STAR-bench has no program {name} ({star})")
        (work / f"{name}.star").write_text(star.read_text())
        (work / f"{name}.dotr").write_text(translate(star.read_text()))
        programs[name] = (work / f"{name}.star", work / f"{name}.dotr")

    random_stream = generate(starbench, "gen_random", 100, 100, 2, work, py, args.spaced_facts)
    for name, (star, dotr) in programs.items():
        common.log(f"{name}: comparing Laser++ and dotr on every time point of {random_stream.name}")
        run_laserpp(exe, star, random_stream, work / "check.lpp.out")
        common.dotr_run(dotr, random_stream, work / "check.dotr.out", "--input-format", "laserpp")
        compare(f"{name} on {random_stream.name}", read_laserpp(work / "check.lpp.out"),
                read_dotr(work / "check.dotr.out"), range(100))

    rows = []
    for size in args.sizes:
        rate, points = map(int, size.lower().split("x"))
        for name, (star, dotr) in programs.items():
            stream = generate(starbench, args.generator, points, rate, 1 if name in ONE_PREDICATE else 2, work, py,
                              args.spaced_facts)
            workload = f"{name} {stream.stem}"
            lpp_out, dotr_out = work / f"{name}.{stream.stem}.lpp.out", work / f"{name}.{stream.stem}.dotr.out"
            first = prefix(stream, min(points, args.check_prefix))
            common.log(f"{workload}: comparing every time point of the first {min(points, args.check_prefix)}")
            run_laserpp(exe, star, first, work / "check.lpp.out")
            common.dotr_run(dotr, first, work / "check.dotr.out", "--input-format", "laserpp")
            compare(workload, read_laserpp(work / "check.lpp.out"), read_dotr(work / "check.dotr.out"),
                    range(min(points, args.check_prefix)))
            common.log(f"{workload}: timing ({rate * points} atoms, {args.pairs} pairs)")
            stats: dict = {}

            def peer() -> float:
                cpu, stats["last"] = run_laserpp(exe, star, stream, lpp_out)
                return cpu

            timed = common.alternate(peer, lambda: common.dotr_run(dotr, stream, dotr_out, "--input-format", "laserpp"),
                                     args.pairs)
            startup = common.dotr_startup(dotr, one_record(stream), work, "--input-format", "laserpp")
            sample = common.sample_points(0, points - 1, args.check_points, must=(32, 33, 64, 65))
            compare(f"{workload} (timed runs)", read_laserpp(lpp_out, set(sample)),
                    read_dotr(dotr_out, set(sample)), sample)
            row = {"workload": workload, "program": name, "rate": rate, "points": points, "atoms": rate * points,
                   **timed, "laserpp_wall_s": stats["last"]["wall_s"],
                   "laserpp_conclusions": stats["last"]["conclusions"], "dotr_startup_s": startup}
            row["peer_cell"] = f"{row['peer_s']:.2f} ({common.span(row['peer_range'], '.2f')})"
            row["dotr_cell"] = f"{row['dotr_s']:.2f} ({common.span(row['dotr_range'], '.2f')})"
            row["ratio_cell"] = f"{row['ratio']:.2f} ({common.span(row['ratio_range'], '.2f')})"
            rows.append(row)
            common.log(f"{workload}: Laser++ {row['peer_s']:.2f} s, dotr {row['dotr_s']:.2f} s (medians)")

    common.print_table(
        f"Laser++ on STAR-bench vs dotr run --input-format laserpp: CPU seconds of the whole process (user + system), "
        f"start-up included; median (range) of {args.pairs} alternating pairs",
        [("workload", "workload", ""), ("peer_cell", "Laser++ CPU s", ""), ("dotr_cell", "dotr run CPU s", ""),
         ("dotr_startup_s", "of which dotr start-up", ".2f"), ("ratio_cell", "Laser++ / dotr", "")], rows)
    print("Laser++ / dotr > 1: dotr faster. Both: the whole process, reading the same file and writing every time "
          "point's conclusions.")
    common.write_json(args.json, "Laser++", {"laserpp": str(exe), "starbench": str(starbench),
                                             "generator": args.generator, "dotr": common.dotr_command()}, rows)


if __name__ == "__main__":
    main()
