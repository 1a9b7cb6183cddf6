"""Ada hands in the reference solutions of source/."""

BASE = "solutions"
