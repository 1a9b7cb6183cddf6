"""A notebook's time budget as one deadline: computed once, every wait bounded by the time left, enforced from outside.

``ResilientExecute`` grades a notebook within ``time_budget`` seconds, restarts and replays
included. A budget checked only between steps is overrun by each step that starts just before
it ends: a cell's time limit, the wait for its last outputs after an interrupt, a kernel's
restart, the replay of the cells before. So the moment the budget ends is computed once
(``Deadline``), every wait is bounded by what is left of it before it starts (``Deadline.bound``),
and at that moment the kernel is killed from this process (``enforced``): a kernel that ignores
every signal and catches ``BaseException`` still stops there.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from time import monotonic
from typing import Callable, Iterator


class Deadline:
    """The end of a time budget of ``seconds``, fixed when it is made; ``clock`` is ``time.monotonic`` (a test's own clock)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = monotonic) -> None:
        self.seconds = float(seconds)
        self._clock = clock
        self.started = clock()
        self.at = self.started + self.seconds

    def left(self) -> float:
        """Seconds left (0 once it has passed)."""
        return max(0.0, self.at - self._clock())

    def passed(self) -> bool:
        return self._clock() >= self.at

    def elapsed(self) -> float:
        """Seconds since it was made."""
        return self._clock() - self.started

    def bound(self, seconds: float) -> float:
        """``seconds``, or what is left if that is less: how long a wait that starts now may last."""
        return max(0.0, min(float(seconds), self.left()))

    def whole_seconds(self, seconds: float, at_least: int = 1) -> int:
        """``bound(seconds)`` in whole seconds, rounded up, and ``at_least`` (nbclient's timeouts are integers, and 0
        turns a time limit off): the kill at the deadline (``enforced``) stops what the rounding lets run on."""
        return max(at_least, math.ceil(self.bound(seconds)))


@contextmanager
def enforced(deadline: Deadline, stop: Callable[[], None]) -> Iterator[None]:
    """Call ``stop`` once, from a thread of its own, when ``deadline`` passes while the block runs (never after it)."""
    timer = threading.Timer(deadline.left(), stop)
    timer.daemon = True
    timer.name = "time-budget"
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
