"""Soak run: N stream elements (one temperature reading per tick) through the embedded pipeline,
printing the peak resident memory as it goes.

    python benchmarks/soak.py [N] [RULES]    (default: 1,000,000 through examples/cooling)
"""

import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dotr.pipeline.reasoner import Reasoner# noqa: E402
from dotr.rules import ir  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rules = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "examples/cooling/rules.dotr")
    reasoner = Reasoner.from_files(rules, [ROOT / "examples/cooling/ontology.ttl"])
    rnd = random.Random(1)
    start = time.time()
    marks = {1_000, 10_000, 100_000, n // 4, n // 2, 3 * n // 4, n - 1}
    for t in range(n):
        reasoner.step(t, [ir.Atom(ir.Name("temp"), (ir.Num(rnd.randrange(0, 200)),))])
        if t in marks:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            print(f"{t:>9} elements: peak RSS {rss} MB, {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
