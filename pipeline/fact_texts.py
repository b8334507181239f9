"""The printed facts of each time point, kept from one time point to the next.

A fact that holds on (in a window, or from the background) is formatted once, and the sorted list
of texts changes by what came and went: the texts gone are filtered out, the new ones sorted and
merged in (two sorted runs, which Python's sort merges in linear time). The cost of a time point
is its changes plus a few passes over the list in C, not a sort and a format of every fact.
"""

from __future__ import annotations

from itertools import filterfalse
from typing import Callable


class FactTexts:
    """The sorted texts of the facts given to :meth:`update`, each text once.

    >>> texts = FactTexts(lambda rel, fact: f"{rel}{fact}")
    >>> texts.update({("q", (2,)), ("q", (1,)), ("_h", (1,))}.difference([("_h", (1,))]))
    ['q(1,)', 'q(2,)']
    >>> texts.update({("q", (2,)), ("q", (0,))})
    ['q(0,)', 'q(2,)']
    """

    __slots__ = ("_text", "_texts", "_count", "_sorted")

    def __init__(self, text: Callable[[tuple, tuple], str]):
        self._text = text  # (rel, fact) -> printed form ("": not printed)
        self._texts: dict[tuple, str] = {}  # the items of the last update -> their texts
        self._count: dict[str, int] = {}  # text -> how many of those items print it
        self._sorted: list[str] = []  # the texts, sorted (never changed in place: returned copies)

    def __iter__(self):
        """The items of the last update."""
        return iter(self._texts)

    def update(self, items: set) -> list[str]:
        """The sorted texts of ``items`` (the facts that hold now), each once."""
        texts, count = self._texts, self._count
        new = items.difference(texts)  # (set and dict operations reuse the hashes the set keeps)
        gone_texts = []
        if len(texts) != len(items) - len(new):  # some items of the last update are gone
            for item in set(texts).difference(items):
                text = texts.pop(item)
                if text:
                    n = count[text] - 1
                    if n:
                        count[text] = n
                    else:
                        del count[text]
                        gone_texts.append(text)
        added = []
        text_of = self._text
        for item in new:
            text = texts[item] = text_of(*item)
            if text:
                n = count.get(text, 0)
                count[text] = n + 1
                if not n:
                    added.append(text)
        kept = self._sorted
        if gone_texts:
            kept = list(filterfalse(set(gone_texts).__contains__, kept))
        if added:
            added.sort()
            kept = kept + added
            kept.sort()  # two sorted runs: merged, not sorted again
        self._sorted = kept
        return list(kept)
