"""Pausing Python's cyclic garbage collector while many long-lived, acyclic objects are made.

A full collection traverses every object alive; while a program of thousands of rules is parsed
(or millions of facts are derived), collections come ever more often over ever more objects,
and find nothing to free: the time grows as the square of what is made.

>>> import gc
>>> with paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused() -> Iterator[None]:
    """No collection inside the block (as before it after; nesting is fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
