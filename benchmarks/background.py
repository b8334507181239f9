"""Loading a background through ``dotr run``, as a user starts it: the LUBM-like background
(``dotr.examples.workloads.lubm_like``) as N-Triples, with ``@profile rdfs``, one stream
record; whole-process CPU and peak memory; the CPU less that of the same command on an empty
background (start-up: interpreter, imports, rules), in alternating pairs with the peer in the
same run: pyoxigraph loading the same file into its in-memory store, in a process of its own
(parsing and storing, no reasoning: the floor for reading the file), less its own start-up
likewise. Medians and
ranges of the pairs. With ``--citybench DIR``, CityBench's sensor repository
(``SensorRepository.n3``, N3) as well, with no profile.

    python benchmarks/background.py [--sizes 100000 1000000] [--pairs 3] [--citybench DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dotr.examples.workloads.lubm_like import triples  # noqa: E402
from benchmarks.peers.common import dotr_command  # noqa: E402

#: the peer: pyoxigraph reads the file into a store (the format from the extension)
PEER = """import sys, pyoxigraph
fmt = {"nt": pyoxigraph.RdfFormat.N_TRIPLES, "n3": pyoxigraph.RdfFormat.N3}[sys.argv[1].rsplit(".", 1)[1]]
store = pyoxigraph.Store()
store.bulk_load(path=sys.argv[1], format=fmt)
print(len(store), file=sys.stderr)
"""


def measured(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak resident MB) of a whole process run to its end."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def dotr(rules: Path, background: Path, stream: Path, out: Path) -> list[str]:
    return [*dotr_command(), "run", "-q", "--rules", str(rules), "--ontology", str(background),
            "--input", str(stream), "--output", str(out)]


def row(name: str, rules: Path, background: Path, empty: Path, stream: Path, work: Path, pairs: int) -> dict:
    """The figures of one background: dotr's and the peer's, pair by pair."""
    dotr_s, dotr_mb, peer_s, peer_mb, start_s, start_mb, peer_start = [], [], [], [], [], [], []
    for _ in range(pairs):
        cpu, mb = measured([sys.executable, "-c", PEER, str(background)])
        peer_s.append(cpu)
        peer_mb.append(mb)
        peer_start.append(measured([sys.executable, "-c", PEER, str(empty)])[0])
        cpu, mb = measured(dotr(rules, background, stream, work / "out.jsonl"))
        dotr_s.append(cpu)
        dotr_mb.append(mb)
        cpu, mb = measured(dotr(rules, empty, stream, work / "out.jsonl"))
        start_s.append(cpu)
        start_mb.append(mb)
    loads = [d - s for d, s in zip(dotr_s, start_s)]
    peer_s = [p - s for p, s in zip(peer_s, peer_start)]
    return {"background": name, "dotr_s": statistics.median(loads), "dotr_range": (min(loads), max(loads)),
            "startup_s": statistics.median(start_s), "dotr_mb": statistics.median(dotr_mb),
            "startup_mb": statistics.median(start_mb), "peer_s": statistics.median(peer_s),
            "peer_range": (min(peer_s), max(peer_s)), "peer_mb": statistics.median(peer_mb)}


def write(path: str, n: int) -> None:
    """The LUBM-like background of ``n`` triples as N-Triples at ``path``."""
    with open(path, "w") as f:
        f.writelines(f"<{s}> <{p}> <{o}> .\n" for s, p, o in triples(n))


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--write"]:
        return write(argv[1], int(argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--citybench", type=Path, help="the folder holding CityBench's SensorRepository.n3")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "rdfs.dotr").write_text("@profile rdfs .\n")
        (work / "plain.dotr").write_text("")
        (work / "one.jsonl").write_text('{"t": 0, "facts": []}\n')
        (work / "empty.nt").write_text("")
        (work / "empty.n3").write_text("")
        rows = []
        for n in args.sizes:
            path = work / f"lubm-{n}.nt"
            # (written by a process of its own: this one stays small, and so do the peak
            # memories measured of the processes it starts)
            subprocess.run([sys.executable, __file__, "--write", str(path), str(n)], check=True)
            rows.append(row(f"LUBM-like, RDFS, {n:,} triples", work / "rdfs.dotr", path, work / "empty.nt",
                            work / "one.jsonl", work, args.pairs))
        if args.citybench is not None:
            rows.append(row("CityBench sensor repository (N3), no profile", work / "plain.dotr",
                            args.citybench / "SensorRepository.n3", work / "empty.n3", work / "one.jsonl", work,
                            args.pairs))
    print("| background | dotr: loading (CPU) | dotr: peak memory | start-up (CPU, memory) | "
          "pyoxigraph: load (CPU) | pyoxigraph: peak memory |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['background']} | {r['dotr_s']:.2f} s ({r['dotr_range'][0]:.2f}-{r['dotr_range'][1]:.2f}) "
              f"| {r['dotr_mb']:,.0f} MB | {r['startup_s']:.2f} s, {r['startup_mb']:,.0f} MB "
              f"| {r['peer_s']:.2f} s ({r['peer_range'][0]:.2f}-{r['peer_range'][1]:.2f}) | {r['peer_mb']:,.0f} MB |")


if __name__ == "__main__":
    main()
