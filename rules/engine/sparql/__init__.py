"""SPARQL over a store of interned facts: ``algebra`` compiles a parsed SELECT (its algebra, from
``rules.lang.queries.sparql``) onto the store's join plans, ``expr`` compiles its expressions
(FILTER, BIND, aggregates) over interned solutions."""
