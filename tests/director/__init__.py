"""Tests of director."""
