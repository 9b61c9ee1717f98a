"""Test bots: programs run as bot processes (raw_bot's loop also runs in-process: tests/support/inproc.py)."""
