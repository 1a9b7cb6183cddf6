"""A fair queue of hand-ins waiting to be graded: one queue per student, taken round-robin, bounded.

A student who hands in 50 times delays nobody: the service keeps only the latest waiting hand-in
of each student and assignment (the others are superseded before they reach this queue), and a
free worker takes the next student's hand-in in turn, whatever each student has waiting. What does
not fit (``capacity``) stays on disk, in the journal, and is offered again by a later scan.
"""

from __future__ import annotations

from collections import OrderedDict, deque


class FairQueue:
    """Hand-in numbers by student, taken one student after another (round-robin)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._by_student: OrderedDict[str, deque[int]] = OrderedDict()
        self._queued: set[int] = set()

    def __len__(self) -> int:
        return len(self._queued)

    def __contains__(self, number: int) -> bool:
        return number in self._queued

    def offer(self, student: str, number: int) -> bool:
        """Queue hand-in ``number`` of ``student``; ``False`` when it is queued already or the queue is full."""
        if number in self._queued or len(self._queued) >= self.capacity:
            return False
        self._by_student.setdefault(student, deque()).append(number)
        self._queued.add(number)
        return True

    def take(self) -> tuple[str, int] | None:
        """The next student's oldest hand-in, that student then going last; ``None`` when empty."""
        while self._by_student:
            student, waiting = next(iter(self._by_student.items()))
            self._by_student.move_to_end(student)
            if waiting:
                number = waiting.popleft()
                self._queued.discard(number)
                if not waiting:
                    del self._by_student[student]
                return student, number
            del self._by_student[student]
        return None

    def discard(self, number: int) -> None:
        """Forget hand-in ``number`` (superseded while it waited)."""
        if number not in self._queued:
            return
        self._queued.discard(number)
        for student, waiting in list(self._by_student.items()):
            if number in waiting:
                waiting.remove(number)
                if not waiting:
                    del self._by_student[student]
                return

    def waiting(self) -> dict[str, list[int]]:
        """The queued hand-ins by student, in order."""
        return {student: list(numbers) for student, numbers in self._by_student.items()}
