"""The import direction of the layers: rules.lang <- rules.engine <- {ontology, temporal} <- pipeline.
The language front end knows nothing of evaluation; the two stages know nothing of each other
(their contract is plain data: time points and facts) nor of the pipeline that composes them."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: package -> the packages it must not import
FORBIDDEN = {
    "dotr.rules.lang": ("dotr.rules.engine", "dotr.ontology", "dotr.temporal", "dotr.pipeline"),
    "dotr.rules.engine": ("dotr.ontology", "dotr.temporal", "dotr.pipeline"),
    "dotr.ontology": ("dotr.temporal", "dotr.pipeline"),
    "dotr.temporal": ("dotr.ontology", "dotr.pipeline"),
}


def _module(path: Path) -> str:
    """The installed name of a source file (``rules/lang/ir.py``: ``dotr.rules.lang.ir``)."""
    parts = ("dotr", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".pyx":  # Cython: its (c)imports by their lines
        return set(re.findall(r"^\s*(?:from|c?import)\s+([\w.]+)", text, re.MULTILINE))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            found.add(".".join([*base, node.module] if node.module else base))
    return found


SOURCES = [p for folder in ("rules", "ontology", "temporal") for p in sorted((ROOT / folder).rglob("*.py*"))
           if p.suffix in (".py", ".pyx")]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_layers(path):
    module = _module(path)
    for package, forbidden in FORBIDDEN.items():
        if module == package or module.startswith(package + "."):
            bad = sorted(name for name in _imports(path)
                         if any(name == f or name.startswith(f + ".") for f in forbidden))
            assert not bad, f"{module} imports {bad}"
