"""The printed facts of each time point, kept from one time point to the next.

A fact that holds on (in a window, or from the background) is formatted once, and the sorted list
of texts changes by what came and went: the texts gone are filtered out, the new ones sorted and
merged in (two sorted runs, which Python's sort merges in linear time). The cost of a time point
is its changes plus a few passes over the list in C, not a sort and a format of every fact.
"""

from __future__ import annotations

from itertools import filterfalse
from typing import Callable, Iterable


class FactTexts:
    """The sorted texts of a set of facts, each text once: the set given whole (:meth:`update`)
    or by its changes (:meth:`change`). :attr:`changes` says how the texts changed at the last
    call: ``(added, removed, how many texts there were before)``, None at the first.

    >>> texts = FactTexts(lambda rel, fact: f"{rel}{fact}")
    >>> texts.update({("q", (2,)), ("q", (1,)), ("_h", (1,))}.difference([("_h", (1,))]))
    ['q(1,)', 'q(2,)']
    >>> texts.update({("q", (2,)), ("q", (0,))}), texts.changes
    (['q(0,)', 'q(2,)'], (['q(0,)'], ['q(1,)'], 2))
    >>> texts.change([("q", (3,))], [("q", (0,))]), texts.changes
    (['q(2,)', 'q(3,)'], (['q(3,)'], ['q(0,)'], 2))
    """

    __slots__ = ("_text", "_texts", "_count", "_sorted", "changes", "_fresh")

    def __init__(self, text: Callable[[tuple, tuple], str]):
        self._text = text  # (rel, fact) -> printed form ("": not printed)
        self._texts: dict[tuple, str] = {}  # the items held -> their texts
        self._count: dict[str, int] = {}  # text -> how many of those items print it
        self._sorted: list[str] = []  # the texts, sorted (never changed in place: returned copies)
        self.changes: tuple[list[str], list[str], int] | None = None
        self._fresh = True

    def __contains__(self, item: tuple) -> bool:
        return item in self._texts

    def update(self, items: set) -> list[str]:
        """The sorted texts of ``items`` (the facts that hold now), each once."""
        texts = self._texts
        new = items.difference(texts)  # (set and dict operations reuse the hashes the set keeps)
        gone = set(texts).difference(items) if len(texts) != len(items) - len(new) else ()
        return self.change(new, gone)

    def change(self, added: Iterable[tuple], removed: Iterable[tuple]) -> list[str]:
        """The sorted texts after the facts ``added`` came (none of them held) and ``removed``
        went (all of them held)."""
        texts, count = self._texts, self._count
        gone_texts = []
        for item in removed:
            text = texts.pop(item)
            if text:
                n = count[text] - 1
                if n:
                    count[text] = n
                else:
                    del count[text]
                    gone_texts.append(text)
        new_texts = []
        text_of = self._text
        for item in added:
            text = texts[item] = text_of(*item)
            if text:
                n = count.get(text, 0)
                count[text] = n + 1
                if not n:
                    new_texts.append(text)
        if gone_texts and new_texts:  # (a text that went with one item and came with another stays)
            both = set(gone_texts).intersection(new_texts)
            if both:
                gone_texts = [text for text in gone_texts if text not in both]
                new_texts = [text for text in new_texts if text not in both]
        kept = before = self._sorted
        if gone_texts:
            kept = list(filterfalse(set(gone_texts).__contains__, kept))
        new_texts.sort()
        if new_texts:
            kept = kept + new_texts
            kept.sort()  # two sorted runs: merged, not sorted again
        self.changes = None if self._fresh else (new_texts, gone_texts, len(before))
        self._fresh = False
        self._sorted = kept
        return list(kept)
