"""Fixtures of the launch tests."""

from tests.support.submissions import here

__all__ = ["here"]  # a folder for a test's submission and the check's output
