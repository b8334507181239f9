"""SPARQL over a store of interned facts: ``algebra`` compiles a parsed SELECT (its algebra, from
``rules.lang.queries.sparql``) onto the store's join plans, ``expr`` compiles its expressions
(FILTER, BIND, aggregates) over interned solutions."""


def answer_order(row: dict[str, str]) -> list[tuple[str, str]]:
    """The sort key of a query's answer rows (variable -> printed term, in the order of the
    selected variables, unbound ones left out): their pairs in that order. One engine's rows
    and the key groups' rows merged (``pipeline.records.merge_records``) come out alike.

    >>> sorted([{"s": "b", "r": "x"}, {"s": "a", "r": "y"}, {"r": "z"}], key=answer_order)
    [{'r': 'z'}, {'s': 'a', 'r': 'y'}, {'s': 'b', 'r': 'x'}]
    """
    return list(row.items())
