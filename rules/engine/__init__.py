"""The evaluation core both stages run on: term dictionary, builtins, the fact stores' contract
(``store``) and the stores themselves (``backends``: the dict store and the native Cython store),
join plans (Python; native and columnar in ``backends``), SPARQL expressions. It may read the
IR of ``rules.lang``; nothing in ``rules.lang`` imports it."""
