"""Run many ``dotr run`` command lines in one process: ``python -m tests.pipeline.run_cases
CASES.json``, where the file holds a list of argument lists. Prints a JSON list with, for each,
its exit code, what it wrote on standard error and the bytes of its ``--output`` file, and the
compiled modules that ran as Python. (One
process for all of them: ``tests/pipeline/test_compiled.py`` runs the cases once on the compiled
modules, once on their Python source.)"""

import contextlib
import io
import json
import sys
from pathlib import Path

import dotr
from dotr.pipeline.cli import main


def run(args: list[str]) -> dict:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args)
    output = Path(args[args.index("--output") + 1])
    return {"code": code, "stderr": err.getvalue(),
            "output": output.read_text(encoding="utf-8") if output.is_file() else None}


if __name__ == "__main__":
    cases = json.loads(Path(sys.argv[1]).read_text())
    json.dump({"as python": dotr.compiled.as_python(), "runs": [run(args) for args in cases]}, sys.stdout)
