"""Tests of sample_bots."""
