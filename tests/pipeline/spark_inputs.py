"""The examples as the Spark tests feed them: their files and streams, the embedded pipeline's
output for a stream (``example_output``), and files published into a watched folder."""

import json
import os
import time
from pathlib import Path

from dotr.pipeline.spark.job import result_of
from dotr.rules import check
from tests.pipeline.runs import embedded as embedded_records


ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "rules.dotr").exists())


def files(example: str) -> tuple[str, list[str]]:
    ex = ROOT / "examples" / example
    return str(ex / "rules.dotr"), [str(ex / "ontology.ttl")]


def example_output(example: str, lines: list[str], keep_empty: bool = False) -> list[str]:
    """The embedded pipeline's JSON Lines output for the stream ``lines``."""
    from dotr.ontology.background import load_triples

    rules, ontologies = files(example)
    out, _ = embedded_records(check(rules), [t for path in ontologies for t in load_triples(path)], lines)
    return [line for line in out if keep_empty or not result_of(json.loads(line)).is_empty()]


def publish(folder: Path, name: str, lines: list[str]) -> None:
    """Write a file into a watched directory atomically (write, then rename), with a later
    modification time than the files before it (Spark's file source orders files by it)."""
    folder.mkdir(parents=True, exist_ok=True)
    part = folder.parent / f".{name}.part"
    part.write_text("".join(line + "\n" for line in lines))
    latest = max((f.stat().st_mtime for f in folder.iterdir()), default=time.time() - 3600)
    os.utime(part, (latest + 1,) * 2)  # in the past: the file source does not take files from the future
    os.replace(part, folder / name)


def stream(example: str) -> list[str]:
    return (ROOT / "examples" / example / "stream.jsonl").read_text().splitlines()
