"""``python -m indexset.cli``: the command line."""

import sys

from indexset.cli.main import main

sys.exit(main())
