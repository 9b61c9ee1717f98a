"""Tests of ladder."""
