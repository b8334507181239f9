"""The query languages embedded in rule files: SPARQL (events, construct templates), EP-SPARQL
and C-SPARQL."""
