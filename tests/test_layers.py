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


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The project's modules ``path`` imports, at run time (not under ``if TYPE_CHECKING``),
    lazily or not: ``from . import x`` counts as importing the module ``x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return (found & modules) - {_module(path)}


def test_no_import_circle():
    """No module imports one that imports it back, however far round and however lazily (a lazy
    import is how a circle hides): each concept has a room the others look into one way."""
    paths = [p for folder in ("rules", "ontology", "temporal", "pipeline") for p in sorted((ROOT / folder).rglob("*.py"))]
    modules = {_module(p) for p in paths}
    graph = {_module(p): _runtime_imports(p, modules) for p in paths}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("an import circle: " + " -> ".join(path[path.index(module):] + [module]))
        if module in done:
            return
        for other in sorted(graph[module]):
            visit(other, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


TESTS = sorted(p for p in (ROOT / "tests").rglob("*.py"))


@pytest.mark.parametrize("path", TESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_import_neither_the_benchmarks_nor_each_other(path):
    """What tests share lives in tests/strategies (generators) or in helper modules, not in a
    test module; what they share with the benchmarks lives in the package (dotr.examples.workloads)."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.ImportFrom):  # (``from tests.temporal import test_lars``)
            names += [f"{node.module}.{a.name}" for a in node.names]
        bad += [n for n in names if n.split(".")[0] == "benchmarks" or any(p.startswith("test_") for p in n.split("."))]
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(set(bad))}"


def test_the_rules_tests_are_split_like_the_code():
    """tests/rules/X/ holds the tests of the package rules/X/, and no test module lies beside them."""
    tests = ROOT / "tests" / "rules"
    assert not sorted(tests.glob("test_*.py"))
    folders = {p.name for p in tests.iterdir() if (p / "__init__.py").exists()}
    assert folders == {p.name for p in (ROOT / "rules").iterdir() if (p / "__init__.py").exists()}
