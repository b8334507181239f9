"""The evaluation core both stages run on: term dictionary, builtins, the dict store and the
native (Cython) store, join plans (Python, native, columnar), SPARQL expressions. It may read the
IR of ``rules.lang``; nothing in ``rules.lang`` imports it."""
