"""The language front end: text in, a checked program out (``loader.check``). Imports nothing
from ``rules.engine``."""
