"""Parsing and validation speed of the rule language.

Generates N rules (a mix of the shapes of the Laser and DOTR workloads: windowed diamonds, boxes
and @, Datalog joins, negation, comparisons and arithmetic, @ heads, IRIs) and times, in one run:
parse with dotr's driver, parse with lark's own LALR parser (the peer: same grammar, same
tables), and validation (safety, strata, stage split). Prints a table, writes JSON.

    python benchmarks/parse.py [--rules 10000] [--repeat 3] [--json benchmarks/results/parse.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dotr.rules.lang.parser import _Builder, _lark, parse  # noqa: E402
from dotr.rules.lang.validate import validate  # noqa: E402

SHAPES = [
    "h{i}(X, Y) :- [{w}] <> p{a}(X, Y) .",
    "h{i}(X) :- [{w}] [] p{a}(X) .",
    "h{i}(X, Y, Z) :- [{w}] <> p{a}(X, Y), [{w}] <> q{b}(Y, Z) .",
    "@T h{i}(V) :- [{w}] @T temp{a}(V), V >= {n} .",
    "h{i}(X, Z) :- p{a}(X, Y), q{b}(Y, Z), not r{a}(X), X != Z .",
    ":c{i}(?s, ?o) :- :p{a}(?s, ?x), :q{b}(?x, ?o) .",
    "h{i}(X, W) :- p{a}(X, V), W = V * 2 + {n}, W < 1000 .",
    "h{i}(X) :- [{w} #] <> s{a}(X), :Sensor(X) .",
]


def program(n: int, seed: int = 7) -> str:
    rnd = random.Random(seed)
    lines = ["@prefix : <http://example.org/> ."]
    for i in range(n):
        shape = SHAPES[i % len(SHAPES)]
        lines.append(shape.format(i=i, a=rnd.randrange(50), b=rnd.randrange(50), w=rnd.choice([1, 20, 40, 80]),
                                  n=rnd.randrange(200)))
    return "\n".join(lines) + "\n"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="benchmarks/results/parse.json")
    args = ap.parse_args(argv)

    text = program(args.rules)
    parse("p.")  # build the parser once, outside the timings
    prog = parse(text)
    t_parse = best(lambda: parse(text), args.repeat)
    t_lark = best(lambda: _Builder("<string>").transform(_lark().parse(text)), args.repeat)
    t_validate = best(lambda: validate(prog), args.repeat)
    result = {
        "rules": args.rules,
        "bytes": len(text),
        "parse_s": t_parse,
        "lark_parse_s": t_lark,
        "validate_s": t_validate,
        "parse_and_validate_s": t_parse + t_validate,
        "speedup_vs_lark": t_lark / t_parse,
        "us_per_rule": (t_parse + t_validate) / args.rules * 1e6,
    }
    print(f"{'rules':>8} {'dotr parse':>11} {'lark parse':>11} {'ratio':>6} {'validate':>9} {'total':>8} {'us/rule':>8}")
    print(f"{args.rules:>8} {t_parse:>10.3f}s {t_lark:>10.3f}s {t_lark / t_parse:>5.1f}x {t_validate:>8.3f}s "
          f"{t_parse + t_validate:>7.3f}s {result['us_per_rule']:>8.1f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
