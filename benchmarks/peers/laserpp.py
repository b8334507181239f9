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
(written and built here with CMake against Laser++'s sources) that hands it to the library's
``ExampleIOManager`` and ``Reasoner`` and writes the conclusions to a file, dotr through
``dotr run --input-format laserpp``.

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

DRIVER = r"""// Runs a Laser++ program on a stream file in Laser++'s text format through the library's own
// ExampleIOManager and Reasoner. Conclusions go to standard output, one line per time point
// ("t -> a(1, 2) a(3, 4) ", ExampleWriter's format); statistics to standard error as JSON.
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <core/reasoner.h>
#include <example/example_io_manager.h>
#include <rule/rule_parser.h>
#include <util/chase_algorithm.h>
#include <util/settings.h>

static std::string slurp(const char *path) {
    std::ifstream f(path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: lpp_run PROGRAM STREAM > OUTPUT" << std::endl;
        return 2;
    }
    std::ios::sync_with_stdio(false);
    double cpu0 = cpu_seconds();
    auto wall0 = std::chrono::steady_clock::now();
    laser::util::Settings::get_instance().set_chase_algorithm(laser::util::ChaseAlgorithm::OBLIVIOUS);
    auto io = laser::example::ExampleIOManager(slurp(argv[2]));
    auto parser = laser::rule::RuleParser(slurp(argv[1]));
    auto rules = parser.get_rules();
    auto reasoner = laser::core::Reasoner(rules, &io);
    reasoner.start();
    std::cout.flush();
    double evaluate = 0;
    for (double t : reasoner.get_runtimes()) evaluate += t;
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
    std::cerr << "{\"facts\": " << reasoner.get_total_facts_read()
              << ", \"conclusions\": " << reasoner.get_total_conclusions()
              << ", \"evaluate_wall_s\": " << evaluate << ", \"cpu_s\": " << cpu_seconds() - cpu0
              << ", \"wall_s\": " << wall.count() << "}" << std::endl;
    return 0;
}
"""

CMAKELISTS = """cmake_minimum_required(VERSION 3.7)
project(lpp_run LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(LPP "{src}")
include_directories(${{LPP}}/include)
# the sources of Laser++'s own CMakeLists.txt
file(GLOB LASER_SOURCES
  ${{LPP}}/src/formula/*.cpp ${{LPP}}/src/formula/extended/*.cpp ${{LPP}}/src/util/*.cpp
  ${{LPP}}/src/rule/*.cpp ${{LPP}}/src/rule/filter/*.cpp ${{LPP}}/src/rule/math/*.cpp
  ${{LPP}}/src/rule/math/evaluator/*.cpp ${{LPP}}/src/core/*.cpp ${{LPP}}/src/example/*.cpp
  ${{LPP}}/src/service/*.cpp ${{LPP}}/src/acyclicity/*.cpp)
find_package(Threads REQUIRED)
add_executable(lpp_run lpp_run.cpp ${{LASER_SOURCES}})
target_link_libraries(lpp_run Threads::Threads)
"""


def build_laserpp(cache: Path, source: str | None) -> tuple[Path, str]:
    src = cache / "laserpp" / "src"
    commit = common.fetch_source("karmaresearch", "laser-plus-plus", src, source)
    project = cache / "laserpp" / "cmake"
    project.mkdir(parents=True, exist_ok=True)
    common.write_if_changed(project / "lpp_run.cpp", DRIVER)
    common.write_if_changed(project / "CMakeLists.txt", CMAKELISTS.format(src=src))
    return common.cmake_build(project, cache / "laserpp" / "build", "lpp_run"), commit


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
    ap.add_argument("--source", help="Laser++'s source: a git directory, a checkout or a copy "
                                     "(default: the local mirror, else github.com/karmaresearch/laser-plus-plus)")
    ap.add_argument("--starbench-source", help="STAR-bench's source (default: the local mirror, else "
                                               "github.com/maspadaru/starbench)")
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

    cache = Path(args.cache).resolve()
    exe, commit = build_laserpp(cache, args.source)
    starbench = cache / "starbench" / "src"
    star_commit = common.fetch_source("maspadaru", "starbench", starbench, args.starbench_source)
    work = cache / "work" / "laserpp"
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

    if not args.skip_check:
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
            if not args.skip_check:
                first = prefix(stream, min(points, args.check_prefix))
                common.log(f"{workload}: comparing every time point of the first {min(points, args.check_prefix)}")
                run_laserpp(exe, star, first, work / "check.lpp.out")
                common.dotr_run(dotr, first, work / "check.dotr.out", "--input-format", "laserpp")
                compare(workload, read_laserpp(work / "check.lpp.out"), read_dotr(work / "check.dotr.out"),
                        range(min(points, args.check_prefix)))
            common.log(f"{workload}: timing ({rate * points} atoms)")
            lpp_runs = [run_laserpp(exe, star, stream, lpp_out) for _ in range(args.repeat)]
            lpp_cpu, stats = min(lpp_runs, key=lambda r: r[0])
            dotr_cpu = min(common.dotr_run(dotr, stream, dotr_out, "--input-format", "laserpp")
                           for _ in range(args.repeat))
            startup = common.dotr_startup(dotr, one_record(stream), work, "--input-format", "laserpp")
            if not args.skip_check:
                sample = common.sample_points(0, points - 1, args.check_points, must=(32, 33, 64, 65))
                compare(f"{workload} (timed runs)", read_laserpp(lpp_out, set(sample)),
                        read_dotr(dotr_out, set(sample)), sample)
            row = {"workload": workload, "program": name, "rate": rate, "points": points, "atoms": rate * points,
                   "laserpp_s": lpp_cpu, "laserpp_wall_s": stats["wall_s"],
                   "laserpp_evaluate_wall_s": stats["evaluate_wall_s"], "laserpp_conclusions": stats["conclusions"],
                   "dotr_s": dotr_cpu, "dotr_startup_s": startup, "dotr_net_s": max(dotr_cpu - startup, 0.0),
                   "checked": not args.skip_check}
            row["ratio"] = lpp_cpu / dotr_cpu
            row["ratio_net"] = lpp_cpu / row["dotr_net_s"] if row["dotr_net_s"] > 0 else None
            row["dotr_net_us_per_atom"] = row["dotr_net_s"] / row["atoms"] * 1e6
            row["laserpp_us_per_atom"] = lpp_cpu / row["atoms"] * 1e6
            rows.append(row)
            common.log(f"{workload}: Laser++ {lpp_cpu:.2f} s, dotr {dotr_cpu:.2f} s")

    common.print_table(
        f"Laser++ ({common.short(commit)}) on STAR-bench ({common.short(star_commit)}) vs dotr run --input-format laserpp: CPU seconds",
        [("workload", "workload", ""), ("laserpp_s", "Laser++ (s)", ".2f"), ("dotr_s", "dotr end to end (s)", ".2f"),
         ("dotr_startup_s", "dotr start-up (s)", ".2f"), ("dotr_net_s", "dotr minus start-up (s)", ".2f"),
         ("ratio", "ratio", ".3f"), ("ratio_net", "ratio minus start-up", ".3f"),
         ("laserpp_us_per_atom", "Laser++ us/atom", ".2f"), ("dotr_net_us_per_atom", "dotr us/atom", ".2f")], rows)
    print("ratio = Laser++ / dotr (> 1: dotr faster). Both: the whole process, reading the same file and "
          "writing every time point's conclusions. dotr us/atom: minus start-up.")
    common.write_json(args.json, "Laser++", {"commit": commit, "starbench_commit": star_commit,
                                             "generator": args.generator, "dotr": common.dotr_command()}, rows)


if __name__ == "__main__":
    main()
