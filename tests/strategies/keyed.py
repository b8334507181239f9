"""Sensor programs that split by key: LARS rules over sensors (windows, negation, @, background
joins, recursion, predicates that are not split) with patterns keyed by sensor or by room beside
them (event types declared alike among them, keyed alike or not), and their streams. The
fragments have placeholders: ``{w}`` a window, ``{c}`` a threshold."""

from hypothesis import strategies as st


# ------------------------------------------------------------------ LARS rules split by key
BACKGROUND = """located(s1, r1) . located(s2, r1) . located(s3, r2) . located(s4, r3) .
risky(r1) . risky(r3) . sensor(s1) . sensor(s2) . sensor(s3) . sensor(s4) . sensor(s5) .
"""


#: rules over sensors (S), keyed by S, with windows, negation, @, background joins, recursion,
#: and predicates that are not split (level, the propositional any_hot)
RULES = [
    "hot(S) :- [{w}] <> temp(S, V), V > {c} .",
    "steady(S) :- [{w}] [] smoke(S) .",
    "alarm(S) :- hot(S), not ok(S) .",
    "alarm(S) :- [{w}] <> smoke(S), located(S, R), risky(R) .",
    "@T seen(S) :- [{w}] @T smoke(S) .",
    "quiet(S) :- sensor(S), not [{w}] <> smoke(S) .",
    "warm(S) :- hot(S), [{w}] <> level(V), V > 2 .",
    "chain(S) :- hot(S) .\nchain(S) :- chain(S), [{w}] <> smoke(S) .",
    "any_hot :- hot(S) .",
    "@U later(S) :- [{w}] @T smoke(S), U = T + 2 .",
    "room_alarm(S, R) :- alarm(S), located(S, R), not [{w}] <> ok(S) .",
]


@st.composite
def lars_programs(draw):
    chosen = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=5, unique=True))
    text = BACKGROUND + "\n".join(r.format(w=draw(st.integers(0, 4)), c=draw(st.integers(10, 40))) for r in chosen)
    sensors = ["s1", "s2", "s3", "s5"]
    fact = st.one_of(st.builds(lambda s, v: f"temp({s},{v})", st.sampled_from(sensors), st.integers(0, 60)),
                     st.builds(lambda s: f"smoke({s})", st.sampled_from(sensors)),
                     st.builds(lambda s: f"ok({s})", st.sampled_from(sensors)),
                     st.builds(lambda v: f"level({v})", st.integers(0, 5)))
    times = sorted(draw(st.sets(st.integers(0, 14), min_size=1, max_size=8)))
    return text + "\n", [(t, draw(st.lists(fact, max_size=4))) for t in times]


# ------------------------------------------------------------ LARS rules and patterns together
#: patterns over the same readings, keyed by sensor or by room (the LARS rules key sensors):
#: events, graphs (of a predicate the rules do not read, or of one they read: not split) and an
#: emitted event that a second pattern uses
PATTERNS = [
    "event Smoke(?s) := smoke(?s) .\nevent Temp(?s, ?v) := temp(?s, ?v) .\n"
    "pattern Fire from Smoke and last Temp(s = Smoke.s) within {w} from Smoke emit Fire(s = Smoke.s, v = Temp.v) .",
    "event RoomSmoke(?r, ?s) := smoke(?s), located(?s, ?r) .\nevent RoomHeat(?r, ?v) := temp(?s, ?v), located(?s, ?r) .\n"
    "pattern Spread from RoomSmoke and each RoomHeat(r = RoomSmoke.r) within {w} from RoomSmoke\n"
    "  construct {{ ?r <http://ex.org/spread> ?v }} with ?r = RoomSmoke.r, ?v = RoomHeat.v .",
    "event Ok(?s) := ok(?s) .\npattern Cleared from Ok and not Ok(s = Ok.s) within {w} from Ok\n"
    "  construct {{ ?s a <http://ex.org/Cleared> }} with ?s = Ok.s .",
    "event Smoky(?r, ?s) := smoke(?s), located(?s, ?r) .\n"
    "pattern Warned from Smoky and last Smoky(r = Smoky.r) as Before within {w} from Smoky\n"
    "  construct {{ ?s a <http://ex.org/Warned> }} with ?s = Smoky.s .",
    # (declared as RoomSmoke and Smoky are, keyed by sensor: each type's rows split by its own key)
    "event SensorSmoke(?r, ?s) := smoke(?s), located(?s, ?r) .\n"
    "pattern Again from SensorSmoke and last SensorSmoke(s = SensorSmoke.s) as Before within {w} from SensorSmoke\n"
    "  construct {{ ?s <http://ex.org/again> ?r }} with ?s = SensorSmoke.s, ?r = Before.r .",
]
#: a type declared as RoomSmoke, Smoky and SensorSmoke are that no pattern reads (so no key splits its
#: rows), declared first; sensors in two rooms (so that a sensor's and a room's groups differ)
UNREAD = "event SmokeAt(?r, ?s) := smoke(?s), located(?s, ?r) .\n"
ROOMS = "located(s1, r2) . located(s2, r3) .\n"


#: a rule reading what a pattern keyed by sensor (Cleared) or by room (Warned) constructs
READS_GRAPHS = "watch(S) :- [{w}] <> <http://ex.org/{c}>(S), sensor(S) ."


@st.composite
def mixed_programs(draw):
    text, elements = draw(lars_programs())
    chosen = draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True))
    text += ROOMS * draw(st.booleans()) + UNREAD * draw(st.booleans())
    text += "\n".join(p.format(w=draw(st.integers(0, 4))) for p in chosen) + "\n"
    if draw(st.integers(0, 3)) == 0:
        text += READS_GRAPHS.format(w=draw(st.integers(0, 3)), c=draw(st.sampled_from(["Cleared", "Warned"]))) + "\n"
    smoke = st.sampled_from(["s1", "s2", "s3", "s4"]).map(lambda s: f"smoke({s})")  # (more matches)
    return text, [(t, facts + draw(st.lists(smoke, max_size=3))) for t, facts in elements]
