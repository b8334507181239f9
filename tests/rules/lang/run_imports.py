"""What a ``dotr run`` imports: the modules of a package loaded by a whole run, in a fresh
interpreter (a test that a program's start-up leaves a package out)."""

import json
import subprocess
import sys
from pathlib import Path


def imported_by_run(rules: Path, stream: Path, output: Path, package: str = "rdflib") -> list[str]:
    """The modules of ``package`` loaded by ``dotr run`` on ``rules`` and ``stream``."""
    code = ("import json, sys\nfrom dotr.pipeline.cli import main\n"
            f"try:\n    main(['run', '-q', '--rules', {str(rules)!r}, '--input', {str(stream)!r},"
            f" '--output', {str(output)!r}])\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m == {package!r} or m.startswith({package + '.'!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)
