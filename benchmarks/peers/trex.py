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
runs in a small driver (this script writes and builds it with CMake against TRex2-lib's
sources: one processing thread, events read from a file into memory first, each composite event
written to a file); dotr reads
the same events as JSON Lines through ``dotr run`` and writes its output file. Before timing, the
composite events of both are compared (every one: time, key and id of the A event). Reported:
CPU seconds of each process, and dotr's start-up (``dotr run`` on one record) apart.

    python benchmarks/peers/trex.py [--events 50000] [--keys 10 100] [--window-ms 1000] [--json PATH]
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

DRIVER = r"""// Runs one TESLA rule on T-Rex's engine (TRex2-lib, CPU engine, one processing thread):
//   define Match(key, id) from B(key => $k) and each A(key = $k) within W from B
// Events come from a file, one per line: "TIME A KEY ID" or "TIME B KEY ID" (TIME in ms, not
// decreasing); they are read into memory first. Each composite event is written to OUTPUT as
// "TIME KEY ID"; statistics go to standard error as JSON.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "Common/CompositeEventTemplate.h"
#include "Common/OpTree.h"
#include "Engine/TRexEngine.h"
#include "Packets/PubPkt.h"
#include "Packets/RulePkt.h"
#include "Packets/RulePktValueReference.h"

static const int EVENT_A = 1, EVENT_B = 2, EVENT_MATCH = 3;
static char ATTR_KEY[] = "key";
static char ATTR_ID[] = "id";

struct Event { uint64_t time; int type; int key; int id; };

class Writer : public ResultListener {
public:
  explicit Writer(FILE* out) : out(out) {}
  void handleResult(std::set<PubPkt*>& pkts, double) override {
    for (PubPkt* p : pkts) {
      if (p->getEventType() != EVENT_MATCH) continue;
      int ki, ii;
      ValType kt, it;
      p->getAttributeIndexAndType(ATTR_KEY, ki, kt);
      p->getAttributeIndexAndType(ATTR_ID, ii, it);
      fprintf(out, "%llu %d %d\n", (unsigned long long)p->getTimeStamp().getTimeVal(),
              p->getIntAttributeVal(ki), p->getIntAttributeVal(ii));
      matches++;
    }
  }
  FILE* out;
  long matches = 0;
};

static double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: trex_bench EVENTS WINDOW_MS OUTPUT" << std::endl;
    return 2;
  }
  double cpu0 = cpu_seconds();
  std::vector<Event> events;
  {
    std::ifstream in(argv[1]);
    std::string kind;
    Event e;
    while (in >> e.time >> kind >> e.key >> e.id) {
      e.type = kind == "A" ? EVENT_A : EVENT_B;
      events.push_back(e);
    }
  }
  RulePkt* rule = new RulePkt(false);
  rule->addRootPredicate(EVENT_B, NULL, 0);
  rule->addPredicate(EVENT_A, NULL, 0, 0, TimeMs(std::stoull(argv[2])), EACH_WITHIN);
  rule->addParameterBetweenStates(0, ATTR_KEY, 1, ATTR_KEY);
  CompositeEventTemplate* tmpl = new CompositeEventTemplate(EVENT_MATCH);
  tmpl->addAttribute(ATTR_KEY, new OpTree(new RulePktValueReference(0, ATTR_KEY, STATE), INT));
  tmpl->addAttribute(ATTR_ID, new OpTree(new RulePktValueReference(1, ATTR_ID, STATE), INT));
  rule->setCompositeEventTemplate(tmpl);

  FILE* out = fopen(argv[3], "w");
  TRexEngine engine(1);
  engine.processRulePkt(rule);
  engine.finalize();  // starts the processing thread, then sleeps 1 ms for it to wait for work
  usleep(200000);     // more time: an event handed over before the thread waits is lost (a hang)
  Writer writer(out);
  engine.addResultListener(&writer);
  double cpu1 = cpu_seconds();
  for (const Event& e : events) {
    Attribute attrs[2];
    strcpy(attrs[0].name, ATTR_KEY);
    attrs[0].type = INT;
    attrs[0].intVal = e.key;
    strcpy(attrs[1].name, ATTR_ID);
    attrs[1].type = INT;
    attrs[1].intVal = e.id;
    PubPkt* pkt = new PubPkt(e.type, attrs, 2);
    pkt->setTime(TimeMs(e.time));
    engine.processPubPkt(pkt);  // the engine frees the packet
  }
  fclose(out);
  double cpu2 = cpu_seconds();
  std::cerr << "{\"events\": " << events.size() << ", \"matches\": " << writer.matches
            << ", \"read_cpu_s\": " << cpu1 - cpu0 << ", \"process_cpu_s\": " << cpu2 - cpu1 << "}"
            << std::endl;
  return 0;
}
"""

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


def build_trex(cache: Path, source: str | None) -> tuple[Path, str]:
    src = cache / "trex" / "src"
    commit = common.fetch_source("deib-polimi", "TRex", src, source)
    lib = src / "TRex2-lib" / "src"
    # TRex2-lib builds with autotools; the sources of its library are those of its Makefile.am
    # (without the CUDA engine), compiled here with CMake and the flags of its configure.ac
    makefile = (lib / "Makefile.am").read_text().replace("\\\n", " ")
    sources = [f for f in re.search(r"libTRex2_la_SOURCES\s*=(.*)", makefile).group(1).split() if f.endswith(".cc")]
    project = cache / "trex" / "cmake"
    project.mkdir(parents=True, exist_ok=True)
    common.write_if_changed(project / "trex_bench.cpp", DRIVER)
    cmakelists = "\n".join([
        "cmake_minimum_required(VERSION 3.7)",
        "project(trex_bench LANGUAGES CXX)",
        "set(CMAKE_CXX_STANDARD 11)",
        'set(CMAKE_CXX_FLAGS_RELEASE "-O3")',  # configure.ac: CXXFLAGS="-O3"
        f'set(TREX "{lib}")',
        "include_directories(${TREX})",
        "add_executable(trex_bench trex_bench.cpp " + " ".join(f"${{TREX}}/{f}" for f in sources) + ")",
        # Makefile.am compiles the unmarshaller without optimisation
        "set_source_files_properties(${TREX}/Marshalling/Unmarshaller.cc PROPERTIES COMPILE_OPTIONS -O0)",
        "find_package(Threads REQUIRED)",
        "target_link_libraries(trex_bench Threads::Threads)",
        ""])
    common.write_if_changed(project / "CMakeLists.txt", cmakelists)
    return common.cmake_build(project, cache / "trex" / "build", "trex_bench"), commit


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
    ap.add_argument("--source", help="T-Rex's source: a git directory, a checkout or a copy "
                                     "(default: the local mirror, else github.com/deib-polimi/TRex)")
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--keys", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--window-ms", type=int, default=1000)
    ap.add_argument("--terminators", type=float, default=0.1, help="share of B events")
    common.common_arguments(ap, "T-Rex")
    args = ap.parse_args(argv)

    cache = Path(args.cache).resolve()
    exe, commit = build_trex(cache, args.source)
    work = cache / "work" / "trex"
    work.mkdir(parents=True, exist_ok=True)
    rules = work / "match.dotr"
    rules.write_text(DOTR_RULES.format(window=args.window_ms))
    rows = []
    for keys in args.keys:
        name = f"each within {args.window_ms} ms, {keys} keys"
        trex_in, jsonl, one = generate(args.events, keys, args.terminators, work)
        trex_out, dotr_out = work / f"trex_{keys}.out", work / f"dotr_{keys}.out.jsonl"
        matches = None
        if not args.skip_check:
            common.log(f"{name}: comparing the composite events of T-Rex and dotr")
            run_trex(exe, trex_in, args.window_ms, trex_out)
            common.dotr_run(rules, jsonl, dotr_out)
            peer, ours = trex_matches(trex_out), dotr_matches(dotr_out)
            common.check_equal(f"{name}: composite events (time, key, id) differ "
                               f"(T-Rex {sum(peer.values())}, dotr {sum(ours.values())})", peer, ours, "T-Rex")
            matches = sum(peer.values())
        common.log(f"{name}: timing ({args.events} events)")
        trex_cpu, stats = min((run_trex(exe, trex_in, args.window_ms, trex_out) for _ in range(args.repeat)),
                              key=lambda run: run[0])
        dotr_cpu = min(common.dotr_run(rules, jsonl, dotr_out) for _ in range(args.repeat))
        startup = common.dotr_startup(rules, one, work)
        row = {"workload": name, "events": args.events, "keys": keys, "matches": matches if matches is not None
               else stats["matches"], "trex_s": trex_cpu, "trex_process_s": stats["process_cpu_s"],
               "dotr_s": dotr_cpu, "dotr_startup_s": startup, "dotr_net_s": max(dotr_cpu - startup, 0.0),
               "checked": not args.skip_check}
        row["ratio"] = trex_cpu / dotr_cpu
        row["ratio_net"] = trex_cpu / row["dotr_net_s"] if row["dotr_net_s"] > 0 else None
        row["trex_us_per_event"] = trex_cpu / args.events * 1e6
        row["dotr_net_us_per_event"] = row["dotr_net_s"] / args.events * 1e6
        rows.append(row)
        common.log(f"{name}: T-Rex {trex_cpu:.3f} s, dotr {dotr_cpu:.2f} s ({row['matches']} matches)")

    common.print_table(
        f"T-Rex ({common.short(commit)}) vs dotr run: CPU seconds, {args.events} events, "
        f"{args.terminators:.0%} of them terminators",
        [("workload", "workload", ""), ("matches", "matches", "d"), ("trex_s", "T-Rex (s)", ".3f"),
         ("dotr_s", "dotr end to end (s)", ".2f"), ("dotr_startup_s", "dotr start-up (s)", ".2f"),
         ("dotr_net_s", "dotr minus start-up (s)", ".2f"), ("ratio", "ratio", ".4f"),
         ("ratio_net", "ratio minus start-up", ".4f"),
         ("trex_us_per_event", "T-Rex us/event", ".2f"), ("dotr_net_us_per_event", "dotr us/event minus start-up", ".1f")], rows)
    print("ratio = T-Rex / dotr (> 1: dotr faster). Both: the whole process (events read from a file, "
          "each composite event written); T-Rex reads its whole file before processing, dotr streams it.")
    common.write_json(args.json, "T-Rex", {"commit": commit, "window_ms": args.window_ms,
                                           "terminators": args.terminators, "dotr": common.dotr_command()}, rows)


if __name__ == "__main__":
    main()
