"""The printed facts of each time point, kept from one time point to the next.

A fact that holds on (in a window, or from the background) is formatted once, and the sorted list
of texts changes by what came and went: the texts gone are filtered out, the new ones sorted and
inserted where a binary search puts them. The cost of a time point is its changes (each a binary
search) plus copying the list's slices between them in C, not a sort and a format of every fact.
"""

from __future__ import annotations

from bisect import bisect_left
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

    def __iter__(self):
        """The items of the last update."""
        return iter(self._texts)

    def absent(self, items: set) -> set:
        """Those of ``items`` not held (a pass over ``items``, not over what is held)."""
        return items.difference(self._texts)

    def present(self, items: set) -> set:
        """Those of ``items`` held (a pass over ``items`` when fewer than what is held)."""
        return self._texts.keys() & items

    def update(self, items: set) -> list[str]:
        """The sorted texts of ``items`` (the facts that hold now), each once."""
        texts = self._texts
        new = items.difference(texts)  # (set and dict operations reuse the hashes the set keeps)
        gone = set(texts).difference(items) if len(texts) != len(items) - len(new) else ()
        return self.change(new, gone)

    def same(self) -> list[str]:
        """The sorted texts when nothing came and nothing went: ``change((), ())``.

        >>> texts = FactTexts(lambda rel, fact: f"{rel}{fact}")
        >>> texts.update({("q", (1,))}), texts.same(), texts.changes
        (['q(1,)'], ['q(1,)'], ([], [], 1))
        """
        self.changes = None if self._fresh else ([], [], len(self._sorted))
        self._fresh = False
        return list(self._sorted)

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
        before = self._sorted
        new_texts.sort()
        if len(gone_texts) + len(new_texts) > len(before) // 8:  # (many changes: one pass over the list)
            drop = set(gone_texts)
            kept = [text for text in before if text not in drop] + new_texts if drop else before + new_texts
            kept.sort()  # (two sorted runs: merged in linear time)
        else:
            kept = _changed(before, gone_texts, new_texts) if gone_texts or new_texts else before
        self.changes = None if self._fresh else (new_texts, gone_texts, len(before))
        self._fresh = False
        self._sorted = kept
        return list(kept)


def _changed(texts: list[str], gone: list[str], new: list[str]) -> list[str]:
    """The sorted ``texts`` without ``gone`` (each in it) and with ``new`` (sorted, none in it).

    >>> _changed(["a", "c", "e", "g"], ["e", "a"], ["b", "f", "h"])
    ['b', 'c', 'f', 'g', 'h']
    """
    return edit(texts, edits(texts, gone, new))


def edits(texts: list[str], gone: list[str], new: list[str]) -> list[tuple[int, bool, str]]:
    """Where the sorted ``texts`` lose ``gone`` and gain ``new``: ``(position, removed, text)``
    in order, for :func:`edit`."""
    return sorted([(bisect_left(texts, text), True, text) for text in gone] +
                  [(bisect_left(texts, text), False, text) for text in new])  # (an insertion before a removal there)


def edit(items: list, changes: list[tuple[int, bool, str]], value: Callable[[str], object] = str) -> list:
    """``items`` (the sorted texts of :func:`edits`, or a list kept beside them) with the
    ``changes`` made: an inserted text as ``value(text)``.

    >>> edit([1, 3], edits(["a", "c"], ["a"], ["b", "d"]), str.upper)
    ['B', 3, 'D']
    """
    out: list = []
    start = 0
    for position, removal, text in changes:
        out += items[start:position]
        if removal:
            start = position + 1
        else:
            out.append(value(text))
            start = position
    out += items[start:]
    return out
