"""``python -m dotr.examples NAME [FOLDER]``: copy example NAME into FOLDER/NAME (default
examples/NAME); without NAME, list the examples."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dotr.examples import names, path


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m dotr.examples NAME [FOLDER]   (copies the example into FOLDER/NAME, default "
              "examples/NAME)\nexamples: " + ", ".join(names()))
        return 0 if argv else 2
    name, folder = argv[0], Path(argv[1] if len(argv) > 1 else "examples")
    if name not in names():
        print(f"dotr: no example {name!r} (the examples: {', '.join(names())})", file=sys.stderr)
        return 2
    target = folder / name
    if target.exists():
        print(f"dotr: {target} exists already", file=sys.stderr)
        return 2
    shutil.copytree(path(name), target, ignore=shutil.ignore_patterns("__pycache__"))
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
