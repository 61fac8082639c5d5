"""``python -m indexset.cli``: the command line."""

from indexset.cli.main import entry

entry()
