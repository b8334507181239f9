"""The compiled modules (Cython): the native fact store and join plans, the dict store's loops.

Cython names a module, and finds the ``.pxd`` of a module it cimports, by its installed name
(``dotr/rules/engine/native_store.pxd``), which the source tree spells
``rules/engine/native_store.pxd``: the sources are copied into ``build/cython`` under their
installed names and compiled from there.
"""

import shutil
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
MODULES = ["native_store", "native_plans", "dict_loops", "nt_scan"]  # in rules/engine

shadow = ROOT / "build" / "cython"
engine = shadow / "dotr" / "rules" / "engine"
engine.mkdir(parents=True, exist_ok=True)
for folder in (shadow / "dotr", shadow / "dotr" / "rules", engine):
    (folder / "__init__.py").touch()
for source in [*(ROOT / "rules" / "engine").glob("*.pyx"), *(ROOT / "rules" / "engine").glob("*.pxd")]:
    shutil.copy2(source, engine / source.name)

extensions = [Extension(f"dotr.rules.engine.{name}", [str((engine / f"{name}.pyx").relative_to(ROOT))])
              for name in MODULES]
setup(ext_modules=cythonize(extensions, include_path=[str(shadow)], language_level=3, quiet=True))
