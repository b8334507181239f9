"""Large rule files: a generated program of N rules and a short stream of JSON Lines records, in
the shapes users write: joins, negation, windows, @ heads, assignments, IRI predicates, events,
and body predicates one edit away from derived ones (W301's work).

>>> from dotr.rules import check_text
>>> check_text(program(20)).ok, stream(2).count("\\n")
(True, 2)
"""

from __future__ import annotations

import json


def program(n: int) -> str:
    """``n`` rules and events over the stream predicates obs0..obs19."""
    lines = ["@prefix : <http://example.org/> ."]
    for i in range(n):
        head, a, b = f"der{i}", f"der{i - 7}" if i >= 7 else f"obs{i % 20}", f"obs{(i * 7) % 20}"
        lines.append([
            f"{head}(X, Y) :- {a}(X, Y), {b}(Y, Z).",
            f"{head}(X, Y) :- {a}(X, Y), not {b}(X, Y).",
            f"{head}(X, Y) :- [3] <> {a}(X, Y), X != Y.",
            f"{head}(X, Y) :- [5] [] {b}(X, Y).",
            f"@T {head}(X, Y) :- [4] @T {a}(X, Y), Y > 10.",
            f"{head}(X, W) :- {a}(X, Y), W = Y * 2 + 1.",
            f"{head}(X, Y) :- :p{i % 37}(X, Y), {b}(Y, X).",
            f"{head}(X, Y) :- {a}(X, Z), {b}(Z, Y), ctx{i % 13}(Y, X).",
            f"event E{i}(?x, ?y) := {a}(?x, ?y), ?y > 3 .",  # der{8 mod 10} is read, never derived: W301
            f"{head}(X, Y) :- {a}(X, Y), {b}(X, Y), Y >= {i}.",
        ][i % 10])
    return "\n".join(lines) + "\n"


def stream(points: int) -> str:
    """``points`` time points of a few stream facts each."""
    return "".join(json.dumps({"t": t, "facts": [f"obs{t % 20}(a, {t * 5})", f"obs{(t + 1) % 20}(a, {t})"]}) + "\n"
                   for t in range(1, points + 1))
