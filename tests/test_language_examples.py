"""The examples of docs/language.md that are marked as runnable run through ``dotr run`` and print
what the document says, in the documented JSON shape (docs/output.schema.json). A fenced block
```` ```dotr example=NAME ```` is the rule file; ```` ```turtle example=NAME file=F ```` a file
beside it, ```` ```turtle example=NAME ontology ```` the ``--ontology`` file;
```` ```jsonl example=NAME input ```` the stream and ```` ```jsonl example=NAME output ```` what is
printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from dotr.pipeline.cli import main

LANGUAGE = Path(__file__).parents[1] / "docs" / "language.md"
SCHEMA = json.loads((LANGUAGE.parent / "output.schema.json").read_text(encoding="utf-8"))
_BLOCK = re.compile(r"^```(\w+) example=(\S+)((?: \S+)*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _examples() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for kind, name, options, body in _BLOCK.findall(LANGUAGE.read_text(encoding="utf-8")):
        options = options.split()
        role = "rules.dotr" if kind == "dotr" else next(
            (o[5:] for o in options if o.startswith("file=")),
            "ontology.ttl" if "ontology" in options else "stream.jsonl" if "input" in options else "output")
        found.setdefault(name, {})[role] = body
    return found


EXAMPLES = _examples()


def test_the_document_has_runnable_examples():
    assert {"csparql", "rspql"} <= set(EXAMPLES)
    assert all({"rules.dotr", "stream.jsonl", "output"} <= set(files) for files in EXAMPLES.values())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_language_example_prints_what_the_document_says(name, tmp_path, monkeypatch):
    files = EXAMPLES[name]
    for role, text in files.items():
        if role != "output":
            (tmp_path / role).write_text(text, encoding="utf-8")
    args = ["run", "-q", "--rules", "rules.dotr", "--input", "stream.jsonl", "--output", "out.jsonl"]
    if "ontology.ttl" in files:
        args += ["--ontology", "ontology.ttl"]
    monkeypatch.chdir(tmp_path)
    assert main(args) == 0
    printed = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert printed == files["output"]
    for line in printed.splitlines():
        jsonschema.validate(json.loads(line), SCHEMA)
