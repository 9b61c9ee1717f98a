"""Tests of host: the child processes seen from the event loop."""
