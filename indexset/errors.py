"""The one exception type for bad input.

Every problem with a user's file or option is an :class:`InputError`. Its
string is a single line naming the file (or option) and the problem; the CLI
prints it and exits with status 2.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input: a file, an array in it, or an option.

    Parameters
    ----------
    source : str
        The file or option the problem is in (``"<memory>"`` for arrays
        built in Python).
    problem : str
        What is wrong, in one line.
    """

    def __init__(self, source: str, problem: str) -> None:
        self.source = str(source)
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.source}: {self.problem}")
