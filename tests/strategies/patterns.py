"""Pattern programs over the events A, B, C (k, v) (every selection, negation, scopes, aggregates,
a pattern over another's composite events) and streams of events, one list per time point."""

from hypothesis import strategies as st


TYPES = ["A", "B", "C"]
DECLS = "\n".join(f"event {t}(?k, ?v) := {t.lower()}(?k, ?v) ." for t in TYPES)


@st.composite
def pattern(draw, name: str, terminator_types=TYPES, keyed: bool = False):
    """A pattern; ``keyed`` ties most items and aggregates to the terminator by ``k`` (so that
    the program can often be partitioned by it)."""
    term = draw(st.sampled_from(terminator_types))
    labels = [term]
    bound = [term]  # labels that constraints and scopes may use
    text = f"pattern {name}\n  from {term}"
    if draw(st.integers(0, 3)) == 0:
        text += f"(v > {draw(st.integers(0, 4))})"
    for i in range(draw(st.integers(1, 3))):
        selection = draw(st.sampled_from(["each", "last", "first", "not"]))
        etype = draw(st.sampled_from(TYPES))
        cons = []
        if draw(st.booleans()) or (keyed and draw(st.integers(0, 5))):
            cons.append(f"k = {draw(st.sampled_from(bound))}.k")
        if draw(st.integers(0, 2)) == 0:
            cons.append(f"v {draw(st.sampled_from(['>', '<=', '!=']))} {draw(st.integers(0, 5))}")
        if len(bound) >= 2 and draw(st.integers(0, 2)) == 0:
            a, b = sorted(draw(st.lists(st.sampled_from(bound), min_size=2, max_size=2, unique=True)),
                          key=bound.index)
            scope = f"between {a} and {b}" if draw(st.booleans()) else f"between {b} and {a}"
        else:
            scope = f"within {draw(st.integers(1, 4))} from {draw(st.sampled_from(bound))}"
        label = f"L{i}"
        args = f"({', '.join(cons)})" if cons else ""
        if selection == "not":
            text += f"\n   and not {etype}{args} {scope}"
        else:
            text += f"\n   and {selection} {etype}{args} as {label} {scope}"
            bound.append(label)
            labels.append(label)
    if draw(st.integers(0, 2)) == 0:
        agg = draw(st.sampled_from(["count", "sum", "avg", "max"]))
        target = draw(st.sampled_from(TYPES)) + (f"(k = {term}.k)" if keyed and draw(st.integers(0, 3)) else "")
        target += "" if agg == "count" else ".v"
        text += f"\n  where {agg}({target} within {draw(st.integers(1, 4))} from {term}) >= {draw(st.integers(0, 4))}"
    emit_from = bound[-1]
    text += f"\n  emit E{name}(k = {term}.k, v = {emit_from}.v)"
    if len(bound) > 1 and draw(st.integers(0, 3)) == 0:
        text += f"\n  consuming {draw(st.sampled_from(bound[1:]))}"
    return text + " ."


@st.composite
def programs(draw, keyed: bool = False):
    first = draw(pattern("P", keyed=keyed))
    text = DECLS + "\n" + first
    if draw(st.booleans()):
        text += "\n" + draw(pattern("Q", terminator_types=["EP"], keyed=keyed))
    return text


@st.composite
def streams(draw):
    return [[(draw(st.sampled_from(TYPES)), draw(st.sampled_from(["x", "y"])), draw(st.integers(0, 5)))
             for _ in range(draw(st.integers(0, 3)))] for _ in range(draw(st.integers(1, 9)))]
