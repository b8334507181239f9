"""Whole programs of every stage (background facts in the rule file and in Turtle, Datalog rules,
the RDFS profile, LARS rules with every operator, events, patterns feeding patterns) and their
streams of records, which may change the background."""

from collections import Counter

from hypothesis import strategies as st


EX = "http://ex.org/"
PEOPLE = ["a", "b", "c"]
PREFIXES = "@prefix : <http://ex.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"

#: Datalog rules: (text, feature); the stage split decides where each runs
DATALOG = [
    ("warm(X) :- hot(X), sensor(X) .", "datalog over background"),
    (":close(?x, ?y) :- :near(?y, ?x) .", "datalog over triples"),
    (":Watched(?x) :- :Reading(?x), :Device(?x) .", "datalog over turtle background"),
    ("calm(X) :- sensor(X), not hot(X) .", "datalog negation"),
    (":Suspect(?x) :- :flag(?x, :on) .", "datalog over pattern graphs"),
    ("reach(X, Y) :- link(X, Y) .\nreach(X, Z) :- reach(X, Y), link(Y, Z) .", "datalog recursion"),
    (":Thing(?x) :- :part(?x, ?y) .", "datalog over turtle background"),
]
TEMPORAL_DATALOG = ("alarm(X) :- h0(X), sensor(X) .", "datalog over temporal conclusions")
EVENTS = """event Rd(?x) := select ?x where { ?x a :Reading } .
event Hot(?x) := hot(?x), sensor(?x) .
event Flag(?x) := select ?x where { ?x :flag :on } .
event Sus(?x) := select ?x where { ?x a :Suspect } .
event Dev(?x) := select ?x where { ?x a :Device } .
event Close(?x) := select ?x where { ?x :close ?y } .
event Near(?x) := select distinct ?x where { { select ?x where { ?x :close ?y } } ?x :near ?y } .
"""


PATTERNS = {
    "P1": "pattern P1 from Rd and {sel} Hot(x = Rd.x) within {w} from Rd construct {{ ?x :flag :on }} with ?x = Rd.x .",
    "P2": "pattern P2 from Flag and each Rd(x = Flag.x) within {w} from Flag construct {{ ?x :mark :yes }} with ?x = Flag.x .",
    "P3": "pattern P3 from Sus construct {{ ?x :alert :on }} with ?x = Sus.x .",
    "P4": "pattern P4 from Hot and last Dev(x = Hot.x) within {w} from Hot construct {{ ?x :seen :on }} with ?x = Hot.x .",
    "P5": "pattern P5 from Close and each Hot within {w} from Close construct {{ ?x :pair ?y }} "
          "with ?x = Close.x, ?y = Hot.x consuming Hot .",
    # (DISTINCT over the selected ?x only; the subquery's ?y is not the outer ?y)
    "P6": "pattern P6 from Near and {sel} Rd(x = Near.x) within {w} from Near construct {{ ?x :near_seen :yes }} "
          "with ?x = Near.x .",
}
WINDOWS = ["", "[2] <> ", "[2] [] ", "[1] @T ", "<> ", "[] ", "@T ", "[3] <> ", "[1] [] "]
TUPLE_WINDOWS = ["[2 #] <> ", "[2 #] [] ", "[3 #] @T "]
STREAM_BASES = ["hot(X)", "cold(X)", ":Reading(X)"]
OTHER_BASES = ["sensor(X)", ":Device(X)", "warm(X)", "calm(X)", ":flag(X, :on)", ":Watched(X)"]


@st.composite
def programs(draw, lars: bool = True):
    """(rule text, ontology Turtle, features used); ``lars=False``: no temporal rules"""
    features = Counter()
    lines = [PREFIXES]
    if draw(st.booleans()):
        lines.append("@profile rdfs .")
        features["rdfs profile"] += 1
    for person in draw(st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=3, unique=True)):
        lines.append(f"sensor(:{person}) .")
        features["facts in the rule file"] += 1
    if draw(st.booleans()):
        lines.append(f":Device(:{draw(st.sampled_from(PEOPLE))}) .")
        features["facts in the rule file"] += 1
    for text, feature in draw(st.lists(st.sampled_from(DATALOG), max_size=4, unique=True)):
        lines.append(text)
        features[feature] += 1
    heads = draw(st.integers(0, 3)) if lars else 0
    for i in range(heads):
        for _ in range(draw(st.integers(1, 2))):
            lines.append(draw(lars_rule(i, features)))
    if heads and draw(st.booleans()):
        lines.append(TEMPORAL_DATALOG[0])
        features[TEMPORAL_DATALOG[1]] += 1
    chosen = draw(st.lists(st.sampled_from(sorted(PATTERNS)), max_size=4, unique=True))
    if chosen:
        lines.append(EVENTS)
        features["events"] += 1
        for name in chosen:
            sel = draw(st.sampled_from(["each", "last", "first", "not"]))
            lines.append(PATTERNS[name].format(sel=sel, w=draw(st.integers(1, 3))))
            features["patterns"] += 1
            if name in ("P2", "P3"):
                features["patterns over fed-back graphs"] += 1
        if "P1" in chosen and ("P2" in chosen or "P3" in chosen):
            features["pattern feeding a pattern"] += 1
    if heads and draw(st.booleans()):
        derived = [f"h{i}" for i in range(heads)] + ["warm"] * any(line.startswith("warm") for line in lines) \
            + [":Suspect"] * any(line.startswith(":Suspect") for line in lines) \
            + [":close"] * any(line.startswith(":close") for line in lines)
        lines.append(f"@output {', '.join(draw(st.lists(st.sampled_from(derived), min_size=1, unique=True)))} .")
        features["@output"] += 1
    turtle = [PREFIXES]
    for person in draw(st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True)):
        turtle.append(f":{person} a :Device .")
        features["facts in turtle"] += 1
    if draw(st.booleans()):
        turtle.append(f":{draw(st.sampled_from(PEOPLE))} :part :{draw(st.sampled_from(PEOPLE))} .")
    if draw(st.booleans()):
        turtle.append(":Device rdfs:subClassOf :Thing . :near rdfs:subPropertyOf :close . :part rdfs:domain :Device .")
    return "\n".join(lines), "\n".join(turtle), features


@st.composite
def lars_rule(draw, i: int, features: Counter) -> str:
    """A rule for h<i>: a first atom that binds X (a window over a stream, background, derived
    or lower head's predicate, or h<i> itself: recursion), then maybe more atoms and a negation."""
    window = draw(st.sampled_from(WINDOWS + TUPLE_WINDOWS))
    if window in TUPLE_WINDOWS:
        base = draw(st.sampled_from(STREAM_BASES))
        features["tuple windows"] += 1
    else:
        base = draw(st.sampled_from(STREAM_BASES + OTHER_BASES + [f"h{j}(X)" for j in range(i + 1)]))
    recursive = base == f"h{i}(X)"
    if recursive and not window:
        window = "[1] <> "  # plain self-recursion derives nothing new: go through a window
    if recursive:
        features[f"recursion through {window.strip() or 'atom'}"] += 1
    features["whole-stream operators" if window in ("<> ", "[] ", "@T ") else "windows"] += bool(window)
    body = [f"{window}{base}"]
    if recursive or draw(st.booleans()):  # recursion needs a way in: a second rule or atom
        other = draw(st.sampled_from(["sensor(X)", "cold(X)", ":Device(X)", "hot(X)", "[2] <> cold(X)"]))
        body.append(other)
    if draw(st.booleans()):
        negated = draw(st.sampled_from(["hot(X)", "cold(X)", "sensor(X)", "warm(X)"] + [f"h{j}(X)" for j in range(i)]))
        body.append(f"not {draw(st.sampled_from(['', '[1] <> ', '[2] [] ']))}{negated}")
        features["negation"] += 1
    head = f"h{i}(X)"
    if "@T" in window and draw(st.booleans()):
        head = f"@T {head}"
        if draw(st.booleans()):
            head = f"@U h{i}(X)"
            body.append(f"U = T + {draw(st.integers(-1, 1))}")
        features["@ heads"] += 1
    return f"{head} :- {', '.join(body)} ."


@st.composite
def streams(draw):
    """Records: (t, facts as text, Turtle payload or None)."""
    t = draw(st.integers(0, 3))
    out = []
    for _ in range(draw(st.integers(1, 6))):
        t += draw(st.sampled_from([0, 1, 1, 2]))
        facts = []
        for _ in range(draw(st.integers(0, 3))):
            pred = draw(st.sampled_from(["hot", "cold", "link"]))
            args = [f"<{EX}{draw(st.sampled_from(PEOPLE))}>" for _ in range(2 if pred == "link" else 1)]
            facts.append(f"{pred}({','.join(args)})")
        turtle = None
        triples = draw(st.lists(st.sampled_from(  # readings as often as the nine :near pairs
            [f":{p} a :Reading ." for p in PEOPLE * 3] + [f":{p} :near :{q} ." for p in PEOPLE for q in PEOPLE]),
            max_size=2))
        if triples:
            turtle = "@prefix : <http://ex.org/> .\n" + "\n".join(triples)
        out.append((t, facts, turtle))
    return out


#: background facts a stream may add or remove (in the rule file, in Turtle, or new)
CHANGEABLE = [f"sensor(:{p})" for p in PEOPLE] + [f":Device(:{p})" for p in PEOPLE] + \
    [f":part(:{p}, :{q})" for p in PEOPLE for q in PEOPLE[:2]] + [":subClassOf(:Device, :Thing)".replace(
        ":subClassOf", "rdfs:subClassOf")]


@st.composite
def streams_with_changes(draw):
    """Records that may also change the background: (t, facts, Turtle or None, change or None)."""
    records = draw(streams())
    out = []
    for t, facts, payload in records:
        change = None
        if draw(st.integers(0, 2)) == 0:
            change = {key: draw(st.lists(st.sampled_from(CHANGEABLE), min_size=1, max_size=2, unique=True))
                      for key in draw(st.sampled_from([["add"], ["remove"], ["add", "remove"]]))}
        out.append((t, facts, payload, change))
    return out
