"""Composition of the stages: the embedded pipeline, sources and sinks, the Spark job, the CLI."""
