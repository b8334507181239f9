"""The temporal stage: the LARS engine, the pattern engine and the output builder."""
