"""``dotr serve`` under a query load: the same stream through ``dotr serve`` with no client, and
with a client asking ``GET /sparql`` steadily (RATE queries a second, or one after another),
against ``dotr run``'s loop on the same stream. The loop's time is from the service's first line
to its "the input has ended" line, both read from its standard error; the loop's CPU is its
thread's (from /proc), the process's CPU the whole process's (``process_cpu_seconds_total`` from
``/metrics`` at the end: the HTTP threads included).

    python benchmarks/serve.py [TIME_POINTS] [RATES ...] [--repeat N] [--json PATH]
    (default: 20000 time points; rates 0 10 max)

Each rate runs ``--repeat`` times (default 5), in turn; the medians and ranges are printed, and each
run's loop time against the run without queries of the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.peers.common import write_json  # noqa: E402

FIRE = ROOT / "examples" / "fire"
B = "http://example.org/building#"
QUERY = f"SELECT ?s ?room {{ ?s <{B}is_in_room> ?room ; <{B}is_at_location> ?l }}"


def stream(path: Path, n: int, seed: int = 1) -> Path:
    """Readings of 50 sensors at locations, two to four placed per time point, now and then a
    smoke or a temperature reading (the fire example's vocabulary)."""
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for t in range(n):
            triples = " ".join(f":s{s} :is_at_location :loc{rnd.choice('ABC')} ." for s in rnd.sample(range(50), rnd.randint(2, 4)))
            if rnd.random() < 0.3:
                triples += f" :r{t} a :{rnd.choice(['SmokeReading', 'TempReading'])} ; :sensor :s1 ; :value {rnd.randrange(50, 90)} ."
            f.write(json.dumps({"t": t * 1000, "turtle": f"@prefix : <{B}> . {triples}"}) + "\n")
    return path


def _thread_cpu(pid: int) -> float:
    """CPU seconds of the process's main thread (the run's loop), from /proc."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(data: Path, rate: float | None) -> tuple[float, float, float, int]:
    """(loop seconds, the loop's CPU seconds, process CPU seconds, queries answered) of one ``dotr
    serve`` run; ``rate`` None: no client, inf: one query after another."""
    proc = subprocess.Popen([sys.executable, "-m", "dotr", "serve", "-q", "--rules", str(FIRE / "rules.dotr"),
                             "--ontology", str(FIRE / "ontology.ttl"), "--input", str(data), "--output", "/dev/null",
                             "--http", "127.0.0.1:0"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()
    start, start_cpu = time.perf_counter(), _thread_cpu(proc.pid)  # (start-up apart)
    url = first.split()[-1]
    done, answered = threading.Event(), [0]

    def client() -> None:
        request = url + "/sparql?" + urllib.parse.urlencode({"query": QUERY})
        gap = 0 if rate == float("inf") else 1 / rate
        due = time.perf_counter()
        while not done.is_set():
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read()
            answered[0] += 1
            due += gap
            time.sleep(max(0.0, due - time.perf_counter()))

    if rate:
        threading.Thread(target=client, daemon=True).start()
    line = proc.stderr.readline()
    loop = time.perf_counter() - start
    loop_cpu = _thread_cpu(proc.pid) - start_cpu
    done.set()
    assert "the input has ended" in line, line + proc.stderr.read()
    metrics = urllib.request.urlopen(url + "/metrics", timeout=60).read().decode()
    cpu = next(float(m.split()[1]) for m in metrics.splitlines() if m.startswith("process_cpu_seconds_total"))
    proc.terminate()
    proc.wait(60)
    return loop, loop_cpu, cpu, answered[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("time_points", type=int, nargs="?", default=20_000)
    parser.add_argument("rates", nargs="*", default=["0", "10", "max"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args()
    rates = [float("inf") if r == "max" else float(r) for r in args.rates]
    with tempfile.TemporaryDirectory() as folder:
        data = stream(Path(folder) / "stream.jsonl", args.time_points)
        runs: dict[float, list] = {r: [] for r in rates}
        for _ in range(args.repeat):
            for r in rates:  # (alternating: a drift of the machine's speed touches every rate alike)
                runs[r].append(one(data, r or None))
    print(f"{args.time_points:,} time points; medians (min-max) of {args.repeat} runs; the loop's time against "
          "the run without queries of the same round")
    print("| queries/s asked | loop s | loop / without queries | loop CPU s | process CPU s | queries answered |")
    print("|---|---|---|---|---|---|")
    base = runs.get(0.0)

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    for r, results in runs.items():
        ratios = cell([x[0] / b[0] for x, b in zip(results, base)]) if base and r else "1"
        print(f"| {'none' if r == 0 else 'one after another' if r == float('inf') else f'{r:g}'} | "
              f"{cell([x[0] for x in results])} | {ratios} | {cell([x[1] for x in results])} | "
              f"{cell([x[2] for x in results])} | {statistics.median(x[3] for x in results):,.0f} |")
    write_json(args.json, "serve", {"time_points": args.time_points, "repeat": args.repeat},
               [{"rate": "max" if r == float("inf") else r, "loop_s": [x[0] for x in results],
                 "loop_cpu_s": [x[1] for x in results], "cpu_s": [x[2] for x in results],
                 "answered": [x[3] for x in results]} for r, results in runs.items()])

if __name__ == "__main__":
    main()
