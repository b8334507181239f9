"""The compiled modules (Cython): the native fact store and join plans, the dict store's loops,
the N-Triples scanner; and the Python modules of a time point's path (``dotr.compiled``),
compiled from their unchanged source.

Cython names a module, and finds the ``.pxd`` of a module it cimports, by its installed name
(``dotr/rules/engine/backends/native_store.pxd``), which the source tree spells
``rules/engine/backends/native_store.pxd``: the sources are copied into ``build/cython`` under
their installed names and compiled from there.

A Python module is compiled with Python's semantics (no C type taken from an annotation) from a
copy without the annotations of its functions' local variables: Cython reads ``x: dict = ...``
in a function as "exactly a dict", which a ``defaultdict`` is not, even with
``annotation_typing`` off. Python does not evaluate those annotations; the copy keeps every line
where it was, so that a traceback names the line of the ``.py``.
"""

import ast
import importlib.util
import shutil
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
#: the folders of rules/engine with compiled modules -> those modules
MODULES = {"backends": ["native_store", "native_plans", "dict_loops"], "": ["nt_scan"]}
#: installed package -> source folder (pyproject.toml's package-dir)
FOLDERS = {"rules": "rules", "ontology": "ontology", "temporal": "temporal", "pipeline": "pipeline"}


def _compiled_python() -> frozenset:
    spec = importlib.util.spec_from_file_location("_dotr_compiled", ROOT / "dotr" / "compiled.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODULES


def without_local_annotations(text: str, name: str) -> str:
    """``text`` with each annotation of a variable in a function taken out, line by line:
    ``x: T = v`` becomes ``x = v``, a bare ``x: T`` becomes ``pass``."""
    edits = []  # (line, start column, end column, replacement)
    for function in ast.walk(ast.parse(text, name)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.AnnAssign):
                continue
            ann = node.annotation
            if node.value is None:
                start, line = node.col_offset, node.lineno
                replacement = "pass"
            else:
                start, line = node.target.end_col_offset, node.target.end_lineno
                replacement = ""
            if ann.end_lineno != line:
                raise SystemExit(f"{name}:{node.lineno}: an annotation over several lines: write it on one")
            edits.append((line, start, ann.end_col_offset, replacement))
    lines = text.splitlines(keepends=True)
    for line, start, end, replacement in sorted(set(edits), reverse=True):
        # (columns are UTF-8 byte offsets)
        raw = lines[line - 1].encode("utf-8")
        lines[line - 1] = (raw[:start] + replacement.encode() + raw[end:]).decode("utf-8")
    return "".join(lines)


shadow = ROOT / "build" / "cython"
extensions = []
for folder, names in MODULES.items():
    parts = ["rules", "engine", *filter(None, [folder])]
    target = shadow.joinpath("dotr", *parts)
    target.mkdir(parents=True, exist_ok=True)
    for package in [shadow / "dotr", *(shadow.joinpath("dotr", *parts[:i]) for i in range(1, len(parts) + 1))]:
        (package / "__init__.py").touch()
    for source in [*ROOT.joinpath(*parts).glob("*.pyx"), *ROOT.joinpath(*parts).glob("*.pxd")]:
        shutil.copy2(source, target / source.name)
    extensions += [Extension(".".join(["dotr", *parts, name]), [str((target / f"{name}.pyx").relative_to(ROOT))])
                   for name in names]
native = cythonize(extensions, include_path=[str(shadow)], language_level=3, quiet=True)

python = []
for module in sorted(_compiled_python()):
    parts = module.split(".")[1:]
    source = ROOT.joinpath(FOLDERS[parts[0]], *parts[1:]).with_suffix(".py")
    copy = shadow.joinpath("dotr", *parts).with_suffix(".py")
    for package in [shadow / "dotr", *(shadow.joinpath("dotr", *parts[:i]) for i in range(1, len(parts)))]:
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").touch()
    text = without_local_annotations(source.read_text(encoding="utf-8"), str(source.relative_to(ROOT)))
    if not copy.is_file() or copy.read_text(encoding="utf-8") != text:  # (unchanged: not compiled again)
        copy.write_text(text, encoding="utf-8")
    python.append(Extension(module, [str(copy.relative_to(ROOT))]))
python = cythonize(python, language_level=3, quiet=True,
                   compiler_directives={"binding": True, "annotation_typing": False})
setup(ext_modules=[*native, *python], options={"build_ext": {"parallel": True}})  # (one compiler per core)
