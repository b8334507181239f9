"""The temporal stage: the LARS engine (``lars``), the pattern engine (``patterns``) and the
EP-SPARQL engine (``epsparql``). ``Engine`` is what the reasoner (``pipeline.reasoner``) asks of each of
them and of the C-SPARQL engine (``ontology.csparql``) alike: when its output changes next, and its
state; stepping is each engine's own, as their inputs differ."""

from __future__ import annotations

from typing import Protocol


class Engine(Protocol):
    """A stateful engine the pipeline steps along the stream."""

    def next_change(self, last: int) -> int | None:
        """The first time point after ``last`` at which the engine's output can change with no
        input (a window's content leaves, an atom was placed there), or None."""

    def snapshot(self) -> dict:
        """The state as plain data: only None, booleans, integers, floats, strings, bytes,
        tuples, lists, sets, frozensets, dicts and terms of the rule language (what a state file
        holds, docs/cli.md "State files")."""

    def restore(self, state: dict) -> None:
        """Continue from :meth:`snapshot`'s state, on an engine built from the same rules; read
        back from a state file, every list of it is a tuple."""
