"""One Spark session for every Spark test of the run (starting one costs seconds)."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from dotr.pipeline.spark.session import spark_session

    session = spark_session("local[2]", app="dotr-tests")
    yield session
    session.stop()
