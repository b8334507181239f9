"""The per-time-point stage: background loading, materialisation with expiry tags, events.

>>> from dotr.rules import check_text
>>> stage = OntologicalStage(check_text("hot(X) :- temp(X, V), V > 30 ."))
>>> from dotr.rules import parse
>>> _ = stage.process(1, parse("temp(r1, 35). temp(r2, 20).").facts)
>>> [stage.format_fact(*f) for f in stage.conclusions(1)]
['hot(r1)']
"""

from .stage import OntologicalStage, TimePoint, profile_rules

__all__ = ["OntologicalStage", "TimePoint", "profile_rules"]
