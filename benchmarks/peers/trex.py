"""dotr against T-Rex (deib-polimi/TRex: TRex2-lib, the C++ CEP engine for TESLA).

One TESLA rule, as T-Rex's own test rule R1 (TRex-Server/src/Test/RuleR1.cpp) builds it,
without its value constraint:

    define Match(key, id)
    from   B(key => $k) and each A(key = $k) within W from B

dotr's equivalent pattern, with events declared over stream facts (as examples/trex does):

    event A(?key, ?id) := a(?key, ?id) .
    event B(?key, ?id) := b(?key, ?id) .
    pattern Match from B and each A(key = B.key) within W ms from B
      construct { _:m :key ?k ; :id ?i } with ?k = B.key, ?i = A.id .

The workload: N events (default 50,000) 0-19 ms apart, a share of them B (default 10%), the
others A, keys drawn from 10 or 100 values, every event with a unique id. (The id matters for B
too: T-Rex takes two identical B events at the same time as two terminators, dotr as one, since
the facts of a time point are a set and an event is a solution of a query over them.) T-Rex
runs in a small driver (drivers/trex.cpp, built by the user against TRex2-lib as T-Rex's own
instructions build it: one processing thread, events read from a file into memory first, each
composite event written to a file), given as ``--trex PATH``; dotr reads the same events as JSON
Lines through ``dotr run`` and writes its output file. Before timing, the composite events of both
are compared (every one: time, key and id of the A event). Reported: CPU seconds of each whole
process, timed in alternating pairs (median and range), and dotr's start-up (``dotr run`` on one
record) apart.

    python benchmarks/peers/trex.py --trex PATH [--events 50000] [--keys 10 100] [--window-ms 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


DOTR_RULES = """@prefix : <http://example.org/bench#> .
@timeunit ms .
event A(?key, ?id) := a(?key, ?id) .
event B(?key, ?id) := b(?key, ?id) .
pattern Match
  from B
   and each A(key = B.key) within {window} ms from B
  construct {{ _:m :key ?k ; :id ?i }}
  with ?k = B.key, ?i = A.id .
"""


def generate(events: int, keys: int, terminators: float, work: Path, seed: int = 7) -> tuple[Path, Path, Path]:
    """The events for T-Rex (text) and dotr (JSON Lines, one record per event)."""
    rnd = random.Random(seed)
    trex, jsonl, one = work / f"events_{keys}.txt", work / f"events_{keys}.jsonl", work / f"events_{keys}.one.jsonl"
    t = 0
    with open(trex, "w") as ft, open(jsonl, "w") as fj:
        for i in range(events):
            t += rnd.randint(0, 19)
            key = rnd.randrange(keys)
            if rnd.random() < terminators:
                ft.write(f"{t} B {key} {i}\n")
                fj.write(json.dumps({"t": t, "facts": [f"b({key},{i})"]}) + "\n")
            else:
                ft.write(f"{t} A {key} {i}\n")
                fj.write(json.dumps({"t": t, "facts": [f"a({key},{i})"]}) + "\n")
    one.write_text(jsonl.open().readline())
    return trex, jsonl, one


def run_trex(exe: Path, events: Path, window_ms: int, output: Path) -> tuple[float, dict]:
    """T-Rex's CPU seconds and statistics."""
    cpu, _, err = common.run_peer(
        [str(exe), str(events), str(window_ms), str(output)],
        why="TRexEngine::finalize sleeps 1 ms for its processing thread to wait on its condition "
            "variable; an event signalled before that is lost and both threads wait for ever")
    return cpu, json.loads(err.strip().splitlines()[-1])


def trex_matches(path: Path) -> Counter:
    with open(path) as f:
        return Counter(tuple(map(int, line.split())) for line in f)


KEY = re.compile(r'#key> "(-?\d+)"')
ID = re.compile(r'#id> "(-?\d+)"')


def dotr_matches(path: Path) -> Counter:
    out = Counter()
    for t, rec in common.read_dotr_jsonl(path).items():
        for graph in rec.get("graphs", []):
            out[(t, int(KEY.search(graph).group(1)), int(ID.search(graph).group(1)))] += 1
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trex", help="the driver drivers/trex.cpp built against TRex2-lib (README.md)")
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--keys", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--window-ms", type=int, default=1000)
    ap.add_argument("--terminators", type=float, default=0.1, help="share of B events")
    common.common_arguments(ap, "T-Rex")
    args = ap.parse_args(argv)

    exe = common.peer_path(args.trex, "--trex", "the T-Rex driver, drivers/trex.cpp built against TRex2-lib")
    work = Path(args.work).resolve() / "trex"
    work.mkdir(parents=True, exist_ok=True)
    rules = work / "match.dotr"
    rules.write_text(DOTR_RULES.format(window=args.window_ms))
    rows = []
    for keys in args.keys:
        name = f"each within {args.window_ms} ms, {keys} keys"
        trex_in, jsonl, one = generate(args.events, keys, args.terminators, work)
        trex_out, dotr_out = work / f"trex_{keys}.out", work / f"dotr_{keys}.out.jsonl"
        common.log(f"{name}: comparing the composite events of T-Rex and dotr")
        run_trex(exe, trex_in, args.window_ms, trex_out)
        common.dotr_run(rules, jsonl, dotr_out)
        peer, ours = trex_matches(trex_out), dotr_matches(dotr_out)
        common.check_equal(f"{name}: composite events (time, key, id) differ "
                           f"(T-Rex {sum(peer.values())}, dotr {sum(ours.values())})", peer, ours, "T-Rex")
        common.log(f"{name}: timing ({args.events} events, {args.pairs} pairs)")
        timed = common.alternate(lambda: run_trex(exe, trex_in, args.window_ms, trex_out)[0],
                                 lambda: common.dotr_run(rules, jsonl, dotr_out), args.pairs)
        startup = common.dotr_startup(rules, one, work)
        row = {"workload": name, "events": args.events, "keys": keys, "matches": sum(peer.values()), **timed,
               "dotr_startup_s": startup}
        row["trex_us_per_event"] = timed["peer_s"] / args.events * 1e6
        row["dotr_us_per_event"] = timed["dotr_s"] / args.events * 1e6
        rows.append(row)
        common.log(f"{name}: T-Rex {timed['peer_s']:.3f} s, dotr {timed['dotr_s']:.2f} s (medians)")
    for row in rows:
        row["peer_cell"] = f"{row['peer_s']:.3f} ({common.span(row['peer_range'], '.3f')})"
        row["dotr_cell"] = f"{row['dotr_s']:.2f} ({common.span(row['dotr_range'], '.2f')})"
        row["ratio_cell"] = f"{row['ratio']:.2f} ({common.span(row['ratio_range'], '.2f')})"
    common.print_table(
        f"T-Rex vs dotr run: CPU seconds of the whole process (user + system), {args.events} events, "
        f"{args.terminators:.0%} of them terminators; median (range) of {args.pairs} alternating pairs",
        [("workload", "workload", ""), ("matches", "matches", "d"), ("peer_cell", "T-Rex CPU s", ""),
         ("dotr_cell", "dotr run CPU s", ""), ("dotr_startup_s", "of which dotr start-up", ".2f"),
         ("ratio_cell", "T-Rex / dotr", ""), ("trex_us_per_event", "T-Rex µs/event", ".2f"),
         ("dotr_us_per_event", "dotr µs/event", ".1f")], rows)
    print("T-Rex / dotr > 1: dotr faster. Both: the whole process (events read from a file, each composite event "
          "written); T-Rex reads its whole file before processing, dotr streams it.")
    common.write_json(args.json, "T-Rex", {"trex": str(exe), "window_ms": args.window_ms,
                                           "terminators": args.terminators, "dotr": common.dotr_command()}, rows)


if __name__ == "__main__":
    main()
