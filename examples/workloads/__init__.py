"""Generated workloads, at any size, deterministic: the inputs of the benchmarks in
docs/performance.md, for trying dotr at scale.

- :mod:`~dotr.examples.workloads.dotr_paper`: DOTR's synthetic evaluation (sensors in rooms,
  pattern rules joined on the room), its rule file and background;
- :mod:`~dotr.examples.workloads.stream_files`: sensor streams as JSON Lines files (DOTR's
  workload, per-sensor LARS rules, C-SPARQL queries) with their rule files and backgrounds;
- :mod:`~dotr.examples.workloads.lubm_like`: a LUBM-like ontology of N triples;
- :mod:`~dotr.examples.workloads.citybench`: CityBench's queries as it writes them, and
  observation streams shaped like Aarhus's;
- :mod:`~dotr.examples.workloads.rule_files`: a rule file of N rules in the shapes users write.
"""
