"""What an engine's snapshot becomes after a trip through a state file (the form a checkpoint,
a ``--snapshot`` or the Spark job's state reads it back in: arrays as tuples)."""

from dotr.pipeline import state_file


def round_trip(state):
    """``state`` written to a state file's bytes and read back."""
    return state_file.decode(state_file.encode("test", state), "test")[1]
