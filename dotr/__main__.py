"""``python -m dotr``: the ``dotr`` command."""

import sys

from dotr.pipeline.cli import main

sys.exit(main())
