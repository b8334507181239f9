"""The compiled modules (Cython): the native fact store and join plans, the dict store's loops,
the N-Triples scanner.

Cython names a module, and finds the ``.pxd`` of a module it cimports, by its installed name
(``dotr/rules/engine/backends/native_store.pxd``), which the source tree spells
``rules/engine/backends/native_store.pxd``: the sources are copied into ``build/cython`` under
their installed names and compiled from there.
"""

import shutil
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
#: the folders of rules/engine with compiled modules -> those modules
MODULES = {"backends": ["native_store", "native_plans", "dict_loops"], "": ["nt_scan"]}

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
setup(ext_modules=cythonize(extensions, include_path=[str(shadow)], language_level=3, quiet=True))
