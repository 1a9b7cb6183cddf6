"""The service's fair queue and its ``[serve]`` policy, on their own (no grading): who is next, and what is graded."""

from __future__ import annotations

import datetime as dt
import os
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


def test_a_hand_in_is_decided_as_of_its_arrival_however_long_it_waited_for_a_worker():
    # Attack round 6: a slow first attempt kept the second waiting past the cool-down, and both were graded 9 s apart.
    policy = term("cooldown_minutes = 2")
    slow_first = handin(1, "grading", seen_at=NOON - 60)
    decision = decide(policy, handin(2, seen_at=NOON - 51), [slow_first])
    assert decision.action == LIMIT and "opens 2 minutes after" in decision.reason
    tomorrow_by_then = handin(3, seen_at=NOON - 51)  # the day's attempt used: still today when it arrived
    assert decide(term("attempts_per_day = 1"), tomorrow_by_then, [slow_first]).action == LIMIT


def test_hold_keeps_a_hand_in_after_the_students_own_due_date():
    policy = term('late = "hold"')
    after_due = "2026-12-01 18:00:00.000000 UTC"
    assert decide(policy, handin(1, handed_in=after_due), [], NOON).action == HOLD
    assert decide(policy, handin(2, student="bob", handed_in=after_due), [], NOON).action == GRADE  # his extension
    assert decide(policy, handin(3, handed_in="2026-12-01 11:00:00.000000 UTC"), [], NOON).action == GRADE


def test_issue_40_a_late_hand_in_past_the_attempts_is_limited_not_held(tmp_path):
    # The hold was decided before the attempts were counted: held, then graded by the TA's `grade` (8/8 after the
    # one allowed attempt scored 0/8). The attempts come first, then the day's, the cool-down, lateness last.
    after_due = "2026-12-01 18:00:00.000000 UTC"
    graded = [handin(1, RELEASED, seen_at=NOON - 7200)]
    for serve, says in (("attempts = 1", "all 1 graded attempts"), ("attempts_per_day = 1", "attempts of today"),
                        ("cooldown_minutes = 600", "opens 600 minutes after")):
        decision = decide(term(f'late = "hold"\n{serve}'), handin(2, handed_in=after_due), graded, NOON)
        assert decision.action == LIMIT and says in decision.reason, (serve, decision)
    assert decide(term('late = "hold"\nattempts = 2'), handin(2, handed_in=after_due), graded, NOON).action == HOLD


def test_an_attempt_the_ta_chose_counts_as_one(tmp_path):
    from course_grader.trusted.serving.journal import CHOSEN

    assert decide(term("attempts = 1"), handin(3), [handin(2, CHOSEN)], NOON).action == LIMIT


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


def test_use_handin_puts_a_held_hand_in_in_submitted_within_the_attempts_only(tmp_path):
    from conftest import fixture_course

    from course_grader.trusted.course.course import CourseError
    from course_grader.trusted.course.example_class import copy_course
    from course_grader.trusted.serving import inbox
    from course_grader.trusted.serving.choose import use_handin
    from course_grader.trusted.serving.journal import CHOSEN, HELD

    course = copy_course(fixture_course(), tmp_path / "course")
    (course.root / "term.toml").write_text((course.root / "term.toml").read_text().replace(
        "[bundle]", "[serve]\nattempts = 1\n\n[bundle]", 1))
    journal = Journal.of_course(course.reports)
    graded = journal.add("exchange:g", "ada", "01_geometry", "", RELEASED)
    held = journal.add("exchange:h", "ada", "01_geometry", "", HELD)
    journal.close()
    for number, data in ((graded, b"graded"), (held, b"held")):
        folder = inbox.archived(course, "ada", "01_geometry", number)
        folder.mkdir(parents=True)
        (folder / "geometry.ipynb").write_bytes(data)
    submitted = course.root / "submitted" / "ada" / "01_geometry" / "geometry.ipynb"
    try:
        use_handin(course, "ada", "01_geometry", held)
    except CourseError as error:
        assert "used all 1 graded attempts" in str(error) and "--beyond-limit" in str(error)
    else:
        raise AssertionError("a second attempt was installed past attempts = 1")
    assert not submitted.exists()
    use_handin(course, "ada", "01_geometry", held, beyond_limit=True)
    assert submitted.read_bytes() == b"held"
    journal = Journal.of_course(course.reports, read_only=True)
    assert journal.get(held).state == CHOSEN and "beyond the attempts allowed" in journal.get(held).reason
    journal.close()


def test_issue_40_status_stays_one_screen_summarised_by_student_with_each_wait(tmp_path):
    # A flood of refused folders under made-up names grew status to 24,022 lines, without times or waits.
    from conftest import fixture_course

    from course_grader.trusted.course.example_class import copy_course
    from course_grader.trusted.serving.journal import REFUSED
    from course_grader.trusted.serving.status import ROWS, status_lines

    course = copy_course(fixture_course(), tmp_path / "course")
    clock = [NOON]
    journal = Journal(course.reports / "serve_journal.sqlite", clock=lambda: clock[0])
    journal.db.execute("PRAGMA synchronous=OFF")  # a few hundred rows: no need to reach the disk each time
    for number in range(150):
        journal.add(f"exchange:x{number}", f"made_up_{number:03}", "01_geometry", "", REFUSED, "never got its secret")
    clock[0] = NOON + 50
    waiting = journal.add("exchange:ada", "ada", "01_geometry", "", COLLECTED, arrived_at=NOON + 20)
    journal.close()
    lines = status_lines(course, now=NOON + 80)
    assert len(lines) <= 4 * (ROWS + 2) + 1, len(lines)
    assert f"  ada: 01_geometry (since 2026-11-30 12:00:20 UTC, waiting 60 s; hand-in {waiting})" in lines, lines
    assert "  ... and 142 more students (status --all lists them)" in lines
    full = status_lines(course, now=NOON + 80, full=True)
    assert sum(line.startswith("  made_up_") for line in full) == 2 * 150  # done in the last hour, and failures


def test_the_attempts_a_page_shows_used_left_today_and_when_the_next_opens():
    from course_grader.trusted.serving.policy import attempts_lines

    rows = [handin(1, RELEASED, seen_at=NOON - 600), handin(2, LIMITED, seen_at=NOON - 60)]
    lines = attempts_lines(term("attempts = 3\nattempts_per_day = 2\ncooldown_minutes = 30"), "ada", "a1", rows, NOON)
    assert lines == ["Graded attempts used: 1 of 3 (2 left).", "Today: 1 of 2 graded attempts.",
                     "Your next graded attempt opens at 2026-11-30 12:20 UTC."], lines
    assert attempts_lines(term("attempts = 1"), "ada", "a1", rows, NOON)[-1] == \
        "You have no graded attempt left at this assignment."
    assert attempts_lines(term(), "ada", "a1", rows, NOON) == ["Graded attempts used: 1 (no limit in all).",
                                                              "You can hand in again now for a graded attempt."]


def test_a_stop_says_what_was_being_graded_and_nothing_when_nothing_was():
    from course_grader.trusted.serving.service import stopped_line

    assert stopped_line([]) == "stopped: nothing was being graded"  # it said 'what was being graded is graded...'
    assert stopped_line([("ada", "a1")]) == "stopped: 1 hand-in(s) being graded (ada/a1) are graded by the next run"


def test_status_into_a_closed_pipe_ends_quietly(tmp_path, monkeypatch):
    # `status | head` ended in a BrokenPipeError traceback.
    from conftest import fixture_course

    from course_grader.trusted import cli
    from course_grader.trusted.course.example_class import copy_course

    course = copy_course(fixture_course(), tmp_path / "course")

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    silenced: list[int] = []
    monkeypatch.setattr("builtins.print", closed)
    monkeypatch.setattr(cli.os, "dup2", lambda source, target: silenced.append(target))  # not this process's stdout
    with open(os.devnull, "w") as sink:
        monkeypatch.setattr(cli.sys, "stdout", sink)
        assert cli.main(["status", "--root", str(course.root)]) == 0
        assert silenced == [sink.fileno()]  # later writes (the interpreter's flush at exit) go nowhere


#: Run as a user who is not root (rm as root ignores a folder's permissions): a kernel's runtime folder with a
#: read-only ``sockets`` folder in it, as a grader that is not root was left one in the temporary folder per hand-in.
def test_issue_40_a_kernels_runtime_folder_with_a_read_only_sockets_folder_is_removed():
    # As a grader that is not root: the kernel (its own user) left its sockets folder read-only; one was left in the
    # temporary folder per graded hand-in. The removal runs as nobody (no Python of the checkout needed as nobody).
    import pwd
    import subprocess

    from course_grader.trusted.running.kernel_pool import remove_runtime_folder

    if os.geteuid() != 0:
        raise AssertionError("this test runs as root, as CI does: it runs the clean-up as another user")
    nobody = pwd.getpwnam("nobody")
    as_nobody = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    made = subprocess.run([*as_nobody, "sh", "-c", 'runtime=$(mktemp -d /tmp/course-grader-runtime-XXXXXX) && '
                           'mkdir "$runtime/sockets" && : > "$runtime/sockets/kernel-1" && chmod 500 "$runtime/sockets" '
                           '&& echo "$runtime"'], capture_output=True, text=True, timeout=60, cwd="/")
    assert made.returncode == 0, made.stderr
    runtime = Path(made.stdout.strip())
    try:
        assert runtime.is_dir() and runtime.stat().st_uid == nobody.pw_uid
        remove_runtime_folder(runtime, as_user=as_nobody)
        assert not runtime.exists()
    finally:
        subprocess.run(["rm", "-rf", "--", str(runtime)], check=False)


def test_the_late_line_of_a_feedback_page_says_1_point_not_1_points():
    from course_grader.trusted.course.lateness import late_sentence

    assert late_sentence(3600, 1.0).endswith("; late penalty: 1 point.")  # it said '1 points'
    assert late_sentence(3600, 2.5).endswith("; late penalty: 2.5 points.")
    assert late_sentence(0, 1.0) == ""
