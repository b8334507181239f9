"""EP-SPARQL group trees: graph patterns over :p, :q, :r joined by every operator (seq, equals,
and, union, the optionals), with join conditions."""

from hypothesis import strategies as st


GROUPS = ["{ ?x :p ?v }", "{ ?x :q ?w }", "{ ?y :p ?v }", "{ ?x :p ?v . ?x :q ?w }", "{ ?x :r ?y }",
          "{ ?x :q ?w OPTIONAL { ?x :r ?y } }", "{ ?x :p 1 }"]
OPS = ["seq", "equals", "and", "union", "optional", "optionalseq", "equalsoptional"]
CONDITIONS = ["", "filter(?v < ?w)", "filter(getDURATION() < 3)", "filter(!bound(?y))"]


@st.composite
def trees(draw, depth=2, groups=tuple(GROUPS)):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(groups))
    op = draw(st.sampled_from(OPS))
    left, right = draw(trees(depth - 1, groups)), draw(trees(depth - 1, groups))
    condition = draw(st.sampled_from(CONDITIONS)) if op in ("optional", "optionalseq", "equalsoptional") else ""
    if condition:  # the optional operand's block carries the join condition
        if op == "optionalseq":
            left = f"{{ {left} {condition} }}"
        else:
            right = f"{{ {right} {condition} }}"
    return f"{{ {left} {op} {right} }}"
