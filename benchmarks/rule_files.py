"""Large rule files: writes a generated program of N rules and a short stream
(``dotr.examples.workloads.rule_files``), to time ``dotr check`` and ``dotr run`` on them from
the command line (docs/performance.md, "Large rule files").

    python benchmarks/rule_files.py --rules 10000 --out /tmp/rules   # writes r10000.dotr, s.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dotr.examples.workloads.rule_files import program, stream  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"r{args.rules}.dotr").write_text(program(args.rules))
    (args.out / "s.jsonl").write_text(stream(args.points))


if __name__ == "__main__":
    main()
