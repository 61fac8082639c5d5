"""Search engines for 0/1 systems ``M z = t``; every engine returns a Result.

``brute`` is the slow, obviously-correct reference used by the tests.
"""
