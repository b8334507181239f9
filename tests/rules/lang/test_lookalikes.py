"""W301's look-alike names: the index agrees with comparing every pair of names."""

from hypothesis import given, settings, strategies as st

from dotr.rules.lang.validate import _Lookalikes


def one_edit(a: str, b: str) -> bool:
    """The reference: insertion, deletion, substitution or swap of neighbours, by comparison."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long_[i]), len(short))
    return short[i:] == long_[i + 1:]


def reference(name: str, names: set[str]) -> str | None:
    if len(name) < 3:
        return None
    return min((other for other in names if len(other) >= 3 and one_edit(name, other)), default=None)


names = st.text(alphabet="abé_1", min_size=0, max_size=6)


@settings(max_examples=400, deadline=None)
@given(st.sets(names, max_size=12), names)
def test_lookalikes_agree_with_comparing_every_pair(known, name):
    assert _Lookalikes(known).find(name) == reference(name, known)
