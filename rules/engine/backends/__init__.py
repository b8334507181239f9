"""The fact stores and the plan back ends bound to them: the dict store (``dict_store``, its hot
loops compiled in ``dict_loops``), the native store in C arrays (``native_store``) and the join
plans compiled over it (``native_plans``), and set-at-a-time evaluation over numpy columns
(``columnar``)."""
