"""Tests of tournament."""
