"""The file to give ``spark-submit``: ``spark-submit --master URL pipeline/spark/submit.py --rules
R --input DIR --sink DIR --checkpoint DIR`` (options: ``--help``; docs/cli.md)."""

import sys

from dotr.pipeline.spark.job import main

if __name__ == "__main__":
    sys.exit(main())
