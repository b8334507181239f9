"""The pipeline as an Apache Spark Structured Streaming job: the session with dotr's settings
(``session``), the job (``job``), its source (``source``), ``dotr run --engine spark`` (``run``), the
file for ``spark-submit`` (``submit``) and a standalone cluster on this machine (``cluster``)."""
