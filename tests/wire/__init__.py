"""Tests of wire."""
