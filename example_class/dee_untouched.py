"""Dee hands in the release notebooks untouched."""

BASE = "release"
