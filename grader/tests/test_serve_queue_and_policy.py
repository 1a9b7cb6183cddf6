"""The service's fair queue and its ``[serve]`` policy, on their own (no grading): who is next, and what is graded."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from course_grader.trusted.course.term import parse_term
from course_grader.trusted.serving.journal import COLLECTED, LIMITED, RELEASED, SUPERSEDED, Handin, Journal
from course_grader.trusted.serving.policy import GRADE, HOLD, LIMIT, decide
from course_grader.trusted.serving.queue import FairQueue

TERM = """
[course]
id = "c"
timezone = "UTC"
[limits]
cell_seconds = 1
notebook_seconds = 1
max_restarts = 0
memory_mib = 100
[bundle]
name = "b"
[[assignments]]
name = "a1"
due = "2026-12-01 12:00"
[[extensions]]
student = "bob"
assignment = "a1"
hours = 24
"""
NOON = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc).timestamp()


def term(serve: str = ""):
    return parse_term(TERM + (f"\n[serve]\n{serve}\n" if serve else ""), Path("term.toml"))


def handin(seq: int, state: str = COLLECTED, *, student: str = "ada", seen_at: float = NOON, handed_in: str = "") -> Handin:
    return Handin(seq, f"o{seq}", student, "a1", handed_in, seen_at, state, "", "", None, None, None, None)


def test_the_queue_takes_students_in_turn_whatever_each_has_waiting():
    queue = FairQueue(capacity=10)
    for number in range(1, 6):
        queue.offer("flood", number)
    queue.offer("bob", 6)
    queue.offer("cy", 7)
    taken = [queue.take() for _ in range(7)]
    assert taken[:3] == [("flood", 1), ("bob", 6), ("cy", 7)]  # bob and cy each wait for one of flood's, not five
    assert taken[3:] == [("flood", n) for n in (2, 3, 4, 5)] and queue.take() is None


def test_the_queue_is_bounded_and_forgets_a_superseded_hand_in():
    queue = FairQueue(capacity=2)
    assert queue.offer("ada", 1) and queue.offer("bob", 2)
    assert not queue.offer("cy", 3) and not queue.offer("ada", 1)  # full (cy waits on disk); no duplicate
    queue.discard(1)
    assert len(queue) == 1 and queue.take() == ("bob", 2) and queue.take() is None


def test_without_a_serve_table_everything_is_graded_as_grade_would():
    earlier = [handin(n, RELEASED) for n in range(1, 30)]
    late = handin(30, handed_in="2027-01-01 00:00:00.000000 UTC")
    assert decide(term(), late, earlier, NOON).action == GRADE


def test_attempts_in_all_count_graded_hand_ins_only():
    policy = term("attempts = 2")
    assert decide(policy, handin(4), [handin(1, RELEASED), handin(2, SUPERSEDED), handin(3, LIMITED)], NOON).action == GRADE
    decision = decide(policy, handin(5), [handin(1, RELEASED), handin(4, RELEASED)], NOON)
    assert decision.action == LIMIT and "all 2 graded attempts" in decision.reason and decision.opens_at is None


def test_attempts_per_day_open_again_at_midnight_in_the_course_zone():
    policy = term("attempts_per_day = 1")
    yesterday = handin(1, RELEASED, seen_at=NOON - 86400)
    assert decide(policy, handin(2), [yesterday], NOON).action == GRADE
    decision = decide(policy, handin(3), [yesterday, handin(2, RELEASED, seen_at=NOON - 60)], NOON)
    assert decision.action == LIMIT and decision.opens_at == dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)


def test_a_cool_down_opens_its_minutes_after_the_last_graded_attempt():
    policy = term("cooldown_minutes = 30")
    last = handin(1, RELEASED, seen_at=NOON - 10 * 60)
    decision = decide(policy, handin(2), [last], NOON)
    assert decision.action == LIMIT and decision.opens_at.timestamp() == NOON + 20 * 60
    assert decide(policy, handin(2), [last], NOON + 20 * 60).action == GRADE


def test_hold_keeps_a_hand_in_after_the_students_own_due_date():
    policy = term('late = "hold"')
    after_due = "2026-12-01 18:00:00.000000 UTC"
    assert decide(policy, handin(1, handed_in=after_due), [], NOON).action == HOLD
    assert decide(policy, handin(2, student="bob", handed_in=after_due), [], NOON).action == GRADE  # his extension
    assert decide(policy, handin(3, handed_in="2026-12-01 11:00:00.000000 UTC"), [], NOON).action == GRADE


def test_the_journal_keeps_every_state_and_event_across_a_reopening(tmp_path):
    journal = Journal.of_course(tmp_path)
    number = journal.add("exchange:x", "ada", "a1", "", "seen")
    journal.move(number, COLLECTED)
    journal.close()
    again = Journal.of_course(tmp_path, read_only=True)
    assert again.get(number).state == COLLECTED and [kind for *_, kind, _ in again.events()] == ["seen", COLLECTED]
    again.close()


def test_the_exchange_root_is_nbgraders_own_setting_the_courses_over_the_systems(tmp_path, monkeypatch):
    from conftest import fixture_course

    from course_grader.trusted.course.course import Course
    from course_grader.trusted.course.example_class import copy_course
    from course_grader.trusted.serving.inbox import check_owner, exchange_root

    course = copy_course(fixture_course(), tmp_path / "course")
    shared = tmp_path / "jupyter"
    shared.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(shared))
    (shared / "nbgrader_config.py").write_text("c = get_config()\nc.Exchange.root = '/srv/shared-exchange'\n")
    assert exchange_root(course) == Path("/srv/shared-exchange") and check_owner(course)  # nbgrader's default: checked
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.Exchange.root = '/srv/course-exchange'\n")
    assert exchange_root(Course.open(course.root)) == Path("/srv/course-exchange")
