"""LARS programs over stream predicates a/1, b/1, c/2 (windows of every kind, negation, @ heads,
recursion through a diamond) and streams of their facts, one list per time point."""

from hypothesis import strategies as st


STREAM_PREDS = {"a": 1, "b": 1, "c": 2}
CONSTS = ["x", "y", "z"]


@st.composite
def literal(draw, derived: list[str], allow_negation: bool):
    """A body literal over stream predicates and earlier derived predicates (all unary/binary)."""
    preds = list(STREAM_PREDS) + derived
    pred = draw(st.sampled_from(preds))
    arity = STREAM_PREDS.get(pred, 1)
    args = ", ".join(draw(st.sampled_from(["X", "Y"] if arity == 2 else ["X"])) for _ in range(arity))
    if arity == 2:
        args = "X, Y"
    atom = f"{pred}({args})"
    kind = draw(st.sampled_from(["plain", "time", "time", "whole", "tuple"]))
    if kind == "tuple" and pred not in STREAM_PREDS:
        kind = "time"
    op = draw(st.sampled_from(["<>", "[]", "@T"]))
    if kind == "plain":
        text = atom
    elif kind == "whole":
        text = f"{op} {atom}"
    elif kind == "time":
        text = f"[{draw(st.integers(0, 3))}] {op} {atom}"
    else:
        text = f"[{draw(st.integers(1, 4))} #] {op} {atom}"
    return text


@st.composite
def programs(draw):
    rules = []
    derived = []
    for i in range(draw(st.integers(1, 4))):
        head = f"h{i}"
        body = [draw(literal(derived, True))]
        if draw(st.booleans()):
            body.append(draw(literal(derived, True)))
        text_body = ", ".join(body)
        if draw(st.integers(0, 3)) == 0:  # negation of a stream predicate or an earlier head
            neg_pred = draw(st.sampled_from(["a", "b"] + derived))
            window = draw(st.sampled_from(["", "[1] <> ", "[2] [] ", "[2 #] <> "]))
            if neg_pred not in STREAM_PREDS and "#" in window:
                window = "[1] <> "
            text_body += f", not {window}{neg_pred}(X)"
        at_head = "@T" in text_body and draw(st.booleans())
        head_text = f"@T {head}(X)" if at_head else f"{head}(X)"
        if at_head and draw(st.booleans()):
            head_text = f"@U {head}(X)"
            text_body += f", U = T + {draw(st.integers(-2, 2))}"
        rules.append(f"{head_text} :- {text_body} .")
        derived.append(head)
    if draw(st.booleans()):  # positive recursion through a diamond
        rules.append("h0(X) :- [1] <> h0(X), b(X) .")
    background = draw(st.lists(st.sampled_from(["a(z) .", "c(z, x) ."]), max_size=1))
    return "\n".join(rules + background)


@st.composite
def streams(draw):
    out = []
    for _ in range(draw(st.integers(1, 7))):
        facts = []
        for _ in range(draw(st.integers(0, 3))):
            pred = draw(st.sampled_from(list(STREAM_PREDS)))
            args = ", ".join(draw(st.sampled_from(CONSTS)) for _ in range(STREAM_PREDS[pred]))
            facts.append(f"{pred}({args})")
        out.append(facts)
    return out
