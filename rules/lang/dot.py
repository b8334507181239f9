"""The predicate dependency graph of a checked program in Graphviz's DOT language
(``dotr check --graph``): a node per predicate, an edge from each predicate a rule's body reads
to its head's predicate; dashed where the body negates it. The ontological stage's predicates
are ellipses, the temporal stage's boxes, those no rule derives (the stream's and the
background's) grey; each derived node names its stratum. (networkx writes DOT through pydot or
pygraphviz, a dependency each for these twenty lines: the document is written here from the
analysis's networkx graph.)

>>> from dotr.rules import check_text
>>> print(to_dot(check_text("@prefix : <http://ex.org/> . hot(X) :- :temp(X, T), T > 100 .\\nalarm(X) :- [3] [] hot(X), not ok(X) .")))
digraph dependencies {
  rankdir=LR;
  node [fontname="Helvetica"];
  "hot/1" [shape=ellipse, label="hot/1\\nstratum 0"];
  "<http://ex.org/temp>/2" [shape=ellipse, color=grey, fontcolor=grey];
  "alarm/1" [shape=box, label="alarm/1\\nstratum 1"];
  "ok/1" [shape=ellipse, color=grey, fontcolor=grey];
  "hot/1" -> "alarm/1";
  "<http://ex.org/temp>/2" -> "hot/1";
  "ok/1" -> "alarm/1" [style=dashed, label="not"];
}
<BLANKLINE>
"""

from __future__ import annotations

from .analysis import pred_key, pred_text
from .loader import CheckResult


def to_dot(checked: CheckResult) -> str:
    """The dependency graph of ``checked``'s rules (a valid program) as a DOT document."""
    analysis = checked.analysis
    graph, temporal = analysis.graph, {pred_key(rule.head) for rule in analysis.temporal}
    lines = ["digraph dependencies {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    for node in graph.nodes:
        shape = "box" if node in temporal else "ellipse"
        if node in analysis.derived:
            lines.append(f'  {_id(node)} [shape={shape}, label="{_escaped(pred_text(node))}\\nstratum {analysis.strata[node]}"];')
        else:
            lines.append(f"  {_id(node)} [shape={shape}, color=grey, fontcolor=grey];")
    for u, v, negative in graph.edges(data="negative"):
        lines.append(f"  {_id(u)} -> {_id(v)}" + (' [style=dashed, label="not"];' if negative else ";"))
    return "\n".join(lines) + "\n}\n"


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _id(node: tuple) -> str:
    return f'"{_escaped(pred_text(node))}"'
