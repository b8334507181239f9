"""Shared helpers of the peer comparisons: the peer the user built, running a command and
measuring its CPU time, timing two sides in alternating pairs, running ``dotr run``, printing the
table and writing the JSON.

Each peer script (laser.py, trex.py, laserpp.py) imports this module; see README.md.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_WORK = HERE / ".work"


class Mismatch(SystemExit):
    """The peer and dotr disagree: the script stops with this message (exit status 1)."""

    def __init__(self, message: str):
        super().__init__(f"\nOUTPUTS DIFFER: {message}")


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# -- the peer ------------------------------------------------------------------------------------

def peer_path(path: str | None, option: str, what: str, directory: bool = False) -> Path:
    """The peer the user built, named by OPTION: PATH must exist (an executable, or a directory)."""
    if not path:
        raise SystemExit(f"{option} PATH is required: {what} (see benchmarks/peers/README.md)")
    found = Path(path).expanduser().resolve()
    if directory and not found.is_dir() or not directory and not (found.is_file() and os.access(found, os.X_OK)):
        raise SystemExit(f"{option} {path}: not {'a directory' if directory else 'an executable file'} ({what})")
    return found


# -- running and timing --------------------------------------------------------------------------

class Stalled(RuntimeError):
    """The process used no CPU for the given time (it was killed)."""


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) used so far by a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_cpu(cmd: list[str], stdout=None, cwd=None, stall: float | None = None) -> tuple[float, float, str]:
    """Run CMD to completion; return (CPU seconds, user + system, of the process and its threads;
    wall seconds; its standard error). Fails loudly on a non-zero exit. With STALL, a process
    that uses no CPU for STALL seconds is killed and :class:`Stalled` raised."""
    with tempfile.TemporaryFile() as err:
        wall = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=err, cwd=cwd)
        last_cpu, last_change = -1.0, wall
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG if stall else 0)
            if pid:
                break
            now = time.perf_counter()
            try:
                cpu = _cpu_of(proc.pid)
            except (OSError, IndexError, ValueError):
                cpu = last_cpu
            if cpu != last_cpu:
                last_cpu, last_change = cpu, now
            elif now - last_change > stall:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                raise Stalled(f"no CPU used for {stall:.0f} s, killed: {' '.join(map(str, cmd))}")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - wall
        err.seek(0)
        text = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"command failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{text[-4000:]}")
    return usage.ru_utime + usage.ru_stime, wall, text


def run_peer(cmd: list[str], stdout_path: Path | None = None, why: str = "", attempts: int = 3,
             stall: float = 10) -> tuple[float, float, str]:
    """:func:`run_cpu` for a peer whose threads can wait for each other for ever (WHY): a run that
    uses no CPU for STALL seconds is killed and started again, up to ATTEMPTS times."""
    for attempt in range(1, attempts + 1):
        try:
            if stdout_path is None:
                return run_cpu(cmd, stall=stall)
            with open(stdout_path, "w") as out:
                return run_cpu(cmd, stdout=out, stall=stall)
        except Stalled as stalled:
            log(f"hung (attempt {attempt} of {attempts}; {why}): {stalled}")
    raise SystemExit(f"{cmd[0]} hung {attempts} times in a row ({why})")


def dotr_command() -> list[str]:
    """``dotr`` as a user runs it: the console script next to this interpreter, on the PATH, or
    ``python -m dotr`` (the same program); dotr's modules compiled to bytecode first
    (:func:`compile_dotr`)."""
    compile_dotr()
    script = Path(sys.executable).with_name("dotr")
    if script.exists():
        return [str(script)]
    if shutil.which("dotr"):
        return [shutil.which("dotr")]
    return [sys.executable, "-m", "dotr"]


@functools.cache
def compile_dotr() -> None:
    """Compile the modules of the dotr this interpreter imports to bytecode, as an installed wheel
    has them: run from a source tree without its ``.pyc`` files (``PYTHONDONTWRITEBYTECODE`` set,
    or a tree it cannot write), dotr compiles every module it imports at every start, 0.1-0.15 s
    of its start-up. Once per benchmark run."""
    import compileall
    import importlib.util

    for package in ("dotr", "dotr.rules", "dotr.ontology", "dotr.temporal", "dotr.pipeline"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=2)
    import dotr.compiled

    if python := dotr.compiled.as_python():
        print(f"note: dotr runs {', '.join(python)} as Python ({dotr.compiled.PYTHON_ONLY}=1, or a .py edited "
              "since pip install compiled it)", file=sys.stderr)


def dotr_run(rules: Path, stream: Path, output: Path, *extra: str) -> float:
    """``dotr run`` on STREAM, writing OUTPUT; returns its CPU seconds."""
    cmd = dotr_command() + ["run", "--rules", str(rules), "--input", str(stream), "--output", str(output), "-q",
                            "--full-iris", *extra]  # (the canonical form, which the comparisons read)
    cpu, _, _ = run_cpu(cmd, cwd=REPO)
    return cpu


def dotr_startup(rules: Path, one_record: Path, workdir: Path, *extra: str, repeat: int = 3) -> float:
    """CPU seconds of ``dotr run`` with RULES on a one-record stream (interpreter start, imports,
    parsing the rules, building the engines, writing the output): the median of REPEAT runs."""
    out = workdir / "startup.out"
    return statistics.median(dotr_run(rules, one_record, out, *extra) for _ in range(repeat))


def alternate(peer: Callable[[], float], dotr: Callable[[], float], pairs: int) -> dict:
    """Time the two sides in PAIRS alternating pairs (peer, dotr, peer, dotr, ...: a drift of the
    machine's speed falls on both), each call returning CPU seconds. Returns each side's median
    and range, and the ratio peer / dotr of each pair's median and range (> 1: dotr faster).

    >>> times = iter([2.0, 1.0, 4.0, 1.0, 3.0, 2.0])
    >>> alternate(lambda: next(times), lambda: next(times), 3)["ratio"]
    2.0
    """
    peer_s, dotr_s = [], []
    for _ in range(pairs):
        peer_s.append(peer())
        dotr_s.append(dotr())
    ratios = [p / d for p, d in zip(peer_s, dotr_s) if d > 0]
    return {"peer_s": statistics.median(peer_s), "peer_range": (min(peer_s), max(peer_s)),
            "dotr_s": statistics.median(dotr_s), "dotr_range": (min(dotr_s), max(dotr_s)),
            "ratio": statistics.median(ratios) if ratios else None,
            "ratio_range": (min(ratios), max(ratios)) if ratios else None, "pairs": pairs}


def span(value: tuple[float, float] | None, fmt: str) -> str | None:
    """A range for a table cell: ``low-high``."""
    return None if value is None else f"{format(value[0], fmt)}-{format(value[1], fmt)}"


def read_dotr_jsonl(path: Path) -> dict[int, dict]:
    """dotr's JSON Lines output by time point."""
    with open(path) as f:
        return {rec["t"]: rec for rec in map(json.loads, f)}


def sample_points(first: int, last: int, count: int, must: tuple[int, ...] = ()) -> list[int]:
    """COUNT time points spread evenly over [FIRST, LAST], plus MUST (those within range)."""
    if count <= 0 or last < first:
        return []
    step = max(1, (last - first) // max(1, count - 1))
    points = set(range(first, last + 1, step)) | {last} | {p for p in must if first <= p <= last}
    return sorted(points)


def check_equal(what: str, peer: set | dict, ours: set | dict, peer_name: str, limit: int = 8) -> None:
    """Stop with the difference when PEER and OURS (sets or multisets) differ."""
    if peer == ours:
        return
    if isinstance(peer, dict):  # Counter-like multisets
        only_peer = sorted(k for k in peer if peer[k] > ours.get(k, 0))
        only_ours = sorted(k for k in ours if ours[k] > peer.get(k, 0))
    else:
        only_peer, only_ours = sorted(peer - ours), sorted(ours - peer)
    raise Mismatch(f"{what}\n  {peer_name} only ({len(only_peer)}): {only_peer[:limit]}\n"
                   f"  dotr only ({len(only_ours)}): {only_ours[:limit]}")


# -- reporting -----------------------------------------------------------------------------------

def print_table(title: str, columns: list[tuple[str, str, str]], rows: list[dict]) -> None:
    """COLUMNS: (key, header, format). A missing value prints as '-'."""
    print(f"\n{title}")
    cells = [[h for _, h, _ in columns]]
    for row in rows:
        cells.append(["-" if row.get(k) is None else format(row[k], f) for k, _, f in columns])
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    for n, r in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def write_json(path: str | None, peer: str, meta: dict, rows: list[dict]) -> None:
    if not path:
        return
    doc = {"peer": peer, "machine": {"python": platform.python_version(), "platform": platform.platform(),
                                     "cpus": os.cpu_count()},
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **meta, "rows": rows}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")
    log(f"results written to {path}")


def common_arguments(parser, peer: str) -> None:
    parser.add_argument("--work", default=str(DEFAULT_WORK),
                        help="where generated streams and outputs go (default: benchmarks/peers/.work)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--pairs", type=int, default=5,
                        help=f"timed pairs per workload ({peer}, then dotr, alternating); medians and ranges are reported")
