"""Shared helpers of the peer comparisons: getting a peer's source, running a command and
measuring its CPU time, running ``dotr run``, printing the table and writing the JSON.

Each peer script (laser.py, trex.py, laserpp.py) imports this module; see README.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_CACHE = HERE / ".cache"
MIRRORS = Path("/work/.mirror")  # where this project's sandbox keeps copies of GitHub repositories


class Mismatch(SystemExit):
    """The peer and dotr disagree: the script stops with this message (exit status 1)."""

    def __init__(self, message: str):
        super().__init__(f"\nOUTPUTS DIFFER: {message}")


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# -- sources -------------------------------------------------------------------------------------

def _git_dir_candidates(owner: str, name: str) -> list[Path]:
    base = MIRRORS / f"{owner}+{name}"
    return [base / "repo" / ".git", base / "repo", base]


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def fetch_source(owner: str, name: str, dest: Path, source: str | None = None) -> str:
    """Put a checkout of github.com/OWNER/NAME in DEST (once) and return its commit.

    SOURCE may be a git directory (bare or ``.git``), a checkout, or a plain directory of files.
    Without it: the sandbox mirror ``/work/.mirror/OWNER+NAME`` when present, else ``git clone``
    from GitHub.
    """
    if (dest / ".git").is_dir() or (dest / ".copied").exists():
        commit = _commit(dest)
        log(f"{owner}/{name}: using {dest} ({commit[:10]}; delete it to fetch again)")
        return commit
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source:
        src = Path(source).resolve()
        if not src.exists():
            raise SystemExit(f"--source {source}: no such directory")
        if _is_git_dir(src) or (src / ".git").exists():
            _git("clone", "--quiet", str(src), str(dest))
        else:
            shutil.copytree(src, dest)
            (dest / ".copied").write_text(str(src) + "\n")
        return _commit(dest)
    for candidate in _git_dir_candidates(owner, name):
        if candidate.is_dir() and _is_git_dir(candidate):
            log(f"{owner}/{name}: cloning the local mirror {candidate}")
            _git("clone", "--quiet", str(candidate), str(dest))
            return _commit(dest)
    url = f"https://github.com/{owner}/{name}"
    log(f"{owner}/{name}: cloning {url}")
    try:
        _git("clone", "--quiet", url, str(dest))
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"could not clone {url}: {err.stderr.strip()}\npass --source PATH (a clone of it)") from err
    return _commit(dest)


def _git(*args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # fail rather than ask for credentials
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def short(commit: str) -> str:
    """A commit for a title: its first 10 digits, or "local copy"."""
    return commit[:10] if not commit.startswith("copied from") else "local copy"


def _commit(path: Path) -> str:
    if (path / ".git").exists():
        return _git("-C", str(path), "rev-parse", "HEAD")
    return "copied from " + (path / ".copied").read_text().strip()


def write_if_changed(path: Path, text: str) -> None:
    """Write TEXT to PATH unless it holds it already (so that make does not rebuild)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def cmake_build(source_dir: Path, build_dir: Path, target: str) -> Path:
    """Configure (once) and build TARGET with CMake in Release mode, one compile job at a time;
    make rebuilds only what changed."""
    for tool in ("cmake", "make", "c++"):
        if shutil.which(tool) is None:
            raise SystemExit(f"building {target} needs `{tool}` on the PATH")
    commands = [["cmake", "--build", str(build_dir), "--target", target, "-j1"]]
    if not (build_dir / "CMakeCache.txt").exists():
        log(f"building {target} in {build_dir} (a minute or so)")
        commands.insert(0, ["cmake", "-S", str(source_dir), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"])
    for cmd in commands:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"build failed: {' '.join(cmd)}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return build_dir / target


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
    ``python -m dotr`` (the same program)."""
    script = Path(sys.executable).with_name("dotr")
    if script.exists():
        return [str(script)]
    if shutil.which("dotr"):
        return [shutil.which("dotr")]
    return [sys.executable, "-m", "dotr"]


def dotr_run(rules: Path, stream: Path, output: Path, *extra: str) -> float:
    """``dotr run`` on STREAM, writing OUTPUT; returns its CPU seconds."""
    cmd = dotr_command() + ["run", "--rules", str(rules), "--input", str(stream), "--output", str(output), "-q",
                            "--full-iris", *extra]  # (the canonical form, which the comparisons read)
    cpu, _, _ = run_cpu(cmd, cwd=REPO)
    return cpu


def dotr_startup(rules: Path, one_record: Path, workdir: Path, *extra: str, repeat: int = 3) -> float:
    """CPU seconds of ``dotr run`` with RULES on a one-record stream (interpreter start, imports,
    parsing the rules, building the engines, writing the output): the best of REPEAT runs."""
    out = workdir / "startup.out"
    return min(dotr_run(rules, one_record, out, *extra) for _ in range(repeat))


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
    parser.add_argument("--cache", default=str(DEFAULT_CACHE),
                        help="where sources, builds and generated streams go (default: benchmarks/peers/.cache)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--repeat", type=int, default=1,
                        help="timed runs per side and workload; the best (least CPU) is reported")
    parser.add_argument("--skip-check", action="store_true",
                        help=f"time without first comparing {peer}'s and dotr's outputs (not recommended)")
