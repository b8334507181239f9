"""The optional packages some features need, and the one line that says how to get them: the
Spark engine needs ``pip install 'dotr[spark]'`` (pyspark, pyarrow, pandas), DataFrames in and
out ``pip install 'dotr[pandas]'``.

>>> missing("spark", ["a_package_nobody_has"])
"--engine spark needs a_package_nobody_has: pip install 'dotr[spark]'"
>>> missing("spark", ["json"]) is None
True
"""

from __future__ import annotations

from importlib.util import find_spec

#: extra -> the modules it brings
EXTRAS = {"spark": ["pyspark", "pyarrow", "pandas"], "pandas": ["pandas"]}
_FEATURES = {"spark": "--engine spark", "pandas": "a DataFrame"}


def missing(extra: str, modules: list[str] | None = None) -> str | None:
    """What to install when a module of ``extra`` is not importable (None: all are)."""
    absent = [m for m in (modules if modules is not None else EXTRAS[extra]) if find_spec(m) is None]
    if not absent:
        return None
    return f"{_FEATURES[extra]} needs {', '.join(absent)}: pip install 'dotr[{extra}]'"
