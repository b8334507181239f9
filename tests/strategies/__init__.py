"""The hypothesis strategies that several test files draw from, one module per family: LARS
programs (``lars``), pattern programs (``patterns``), EP-SPARQL group trees (``epsparql``),
Datalog over triples (``triples``), C-SPARQL vocabularies and streams (``csparql``) and whole
programs of every stage (``composition``)."""
