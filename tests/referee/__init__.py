"""Tests of referee."""
