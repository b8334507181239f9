"""Datalog programs over triples (IRI and variable predicates, unary and ternary relations,
comparisons, assignments, schema-like recursion) and graphs for them, as the set-at-a-time and
native paths are compared with the per-fact engine; ``interned`` gives their facts in a
dictionary, ``store_state`` a materialiser's facts to compare."""

from hypothesis import strategies as st

from dotr.rules import ir


EX = "http://ex.org/"
PREDS = [":p", ":q", ":r", ":sp"]
NODES = [":a", ":b", ":c", ":p", ":q", "7", "1000000000000"]  # 10**12: term ids too large to pack
VARS = ["X", "Y", "Z"]


@st.composite
def atoms(draw):
    kind = draw(st.sampled_from(["iri", "iri", "var", "unary", "ternary"]))
    term = st.one_of(st.sampled_from(VARS + ["P"]), st.sampled_from(NODES).filter(lambda _: draw(st.integers(0, 3)) == 0))
    if kind == "iri":
        return f"{draw(st.sampled_from(PREDS))}({draw(term)}, {draw(term)})"
    if kind == "var":
        return f"P({draw(term)}, {draw(term)})"
    if kind == "unary":
        return f"u({draw(term)})"
    return f"t({draw(term)}, {draw(term)}, {draw(term)})"


@st.composite
def rules_(draw):
    body = draw(st.lists(atoms(), min_size=1, max_size=3))
    text = " ".join(body)
    bound = [v for v in VARS + ["P"] if f"{v}(" in text or f"{v}," in text or f"{v})" in text]
    if not bound:
        body.append("P(X, Y)")
        bound = ["P", "X", "Y"]
    extras = []
    if draw(st.integers(0, 3)) == 0:
        extras.append(f"{draw(st.sampled_from(bound))} {draw(st.sampled_from(['=', '!=']))} "
                      f"{draw(st.sampled_from(bound + [':a']))}")
    if draw(st.integers(0, 4)) == 0:  # an assignment binds a fresh variable
        extras.append(f"W = {draw(st.sampled_from(bound + [':b']))}")
        bound = bound + ["W"]
    arg = st.sampled_from(bound + [":c"])
    head = draw(st.sampled_from(["iri", "var", "unary", "ternary"] if "P" in bound else ["iri", "unary", "ternary"]))
    if head == "iri":
        text = f"{draw(st.sampled_from(PREDS))}({draw(arg)}, {draw(arg)})"
    elif head == "var":
        text = f"P({draw(arg)}, {draw(arg)})"
    elif head == "unary":
        text = f"u({draw(arg)})"
    else:
        text = f"t({draw(arg)}, {draw(arg)}, {draw(arg)})"
    return f"{text} :- {', '.join(body + extras)} ."


recursion = st.sampled_from([
    "", ":sp(X, Z) :- :sp(X, Y), :sp(Y, Z) .\nQ(X, Y) :- :sp(P, Q), P(X, Y) .",
    ":r(X, Z) :- :r(X, Y), :r(Y, Z) .", "P(Y, X) :- :q(P, :p), P(X, Y) .",
    "P(X, Y) :- t(P, X, Y) ."])  # P may be a number: not a triple


triple = st.tuples(st.sampled_from(NODES[:5]), st.sampled_from(PREDS), st.sampled_from(NODES))


other = st.one_of(st.tuples(st.just("u"), st.sampled_from(NODES)),
                  st.tuples(st.just("t"), st.sampled_from(NODES), st.sampled_from(NODES), st.sampled_from(NODES)))


def _term(text):
    if text.startswith(":"):
        return ir.Iri(EX + text[1:])
    return ir.Num(int(text))


def interned(d, graph, others):
    out = [((d.intern(_term(p)), 2), (d.intern(_term(s)), d.intern(_term(o)))) for s, p, o in graph]
    out += [((d.intern(ir.Name(f[0])), len(f) - 1), tuple(d.intern(_term(x)) for x in f[1:])) for f in others]
    return out


def store_state(m):
    return {(rel, fact, e) for rel, fact, e in m.store}
