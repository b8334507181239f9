"""One Spark session for every Spark test of the run (starting one costs seconds); a mosquitto
broker of a test's own (tests/pipeline/broker.py)."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from dotr.pipeline.spark.session import spark_session

    session = spark_session("local[2]", app="dotr-tests")
    yield session
    session.stop()


@pytest.fixture
def broker(tmp_path):
    from .broker import MOSQUITTO, Broker

    if MOSQUITTO is None:
        pytest.skip("the mosquitto binary is not installed (Debian: apt-get install mosquitto)")
    b = Broker(tmp_path)
    yield b
    b.stop()
