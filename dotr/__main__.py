"""``python -m dotr`` and the ``dotr`` command. SIGINT and SIGTERM are caught before the command's
modules are imported (a loaded machine can take a second over that), so that a signal at any
moment of the start-up ends the command with its exit code and one line, never Python's default.

The cyclic garbage collector is off while the modules are imported and their objects are frozen
after (``gc.freeze``): the imports make some 50,000 objects that live as long as the process,
and each collection of the older generations scanned them again (40 ms of a 0.3 s start-up).
Then the youngest generation is collected after 50,000 new containers, not Python's 700: a time
point makes and drops its tuples, lists and sets by the ten thousand, hardly ever in a cycle,
and collecting them every 700 traversed each time point's containers again and again (6-11% of
the instructions of a LARS join or of the many-constants program: docs/performance.md)."""

from __future__ import annotations

import gc
import sys


def main() -> int:
    try:
        from dotr.pipeline.process import Interrupted, interruptible

        interruptible()
    except KeyboardInterrupt:  # (Python's own SIGINT handler, before dotr's)
        print("dotr: interrupted", file=sys.stderr)
        return 130
    try:
        gc.disable()
        try:
            from dotr.pipeline.cli import main as command
        finally:
            gc.freeze()
            gc.set_threshold(50_000, 10, 10)
            gc.enable()
        return command()
    except Interrupted as stop:  # (while the command's modules are imported: its own handling not yet)
        print("dotr: interrupted", file=sys.stderr)
        return stop.code


if __name__ == "__main__":
    sys.exit(main())
