"""The grading executor on small notebooks, in a plain kernel: budgets, restarts, output caps, verdicts."""

import json
import sys
import time

import pytest
from conftest import FIXTURE_COURSE
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course_grader.trusted.course.commands import grader_command
from course_grader.trusted.judging.grading_metadata import CUT, GRADING_METADATA, LIMIT_LABELS, limits_hit
from course_grader.trusted.running.executor import ResilientExecute
from course_grader.trusted.running.output_caps import MAX_RICH_CHARS, MAX_TEXT_CHARS, limit_output, output_chars

SECRET = "00" * 16


def execute(sources, *, test_cells=(), notebook_metadata=None, **traits):
    """Run code cells (those at ``test_cells`` as graded test cells) through ResilientExecute; the notebook."""
    cells = [new_code_cell(source) for source in sources]
    for index in test_cells:
        cells[index].metadata["nbgrader"] = {"grade": True, "grade_id": f"test_{index}", "points": 1,
                                             "solution": False, "locked": True, "schema_version": 3}
    notebook = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                  "language": "python"}, **(notebook_metadata or {})})
    options = {"grading_secret": SECRET, "require_grading_kernel": False, "kernel_name": "python3", "timeout": 10,
               "course_root": str(FIXTURE_COURSE)}  # the checks of the grader's own course (source/*/hidden_checks.py)
    executor = ResilientExecute(**{**options, **traits})
    executor.preprocess(notebook, {"nbgrader": {"student": "someone"}})
    return notebook


def errors(cell) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]


def test_an_error_s_huge_name_message_and_traceback_are_cut_as_they_arrive():
    # A 20 MB message (and a class name as long) was kept whole in the notebook: every step after execution read,
    # validated and wrote it again (budget_class/message_20mb).
    output = new_output("error", ename="E" * 1_000_000, evalue="x" * 20_000_000, traceback=["y" * 20_000_000] * 3)
    assert limit_output(output, MAX_TEXT_CHARS, MAX_RICH_CHARS) == [CUT]
    assert max(len(output.ename), len(output.evalue), *map(len, output.traceback)) < MAX_TEXT_CHARS + 100
    assert output_chars(output) < 5 * (MAX_TEXT_CHARS + 100)
    assert output.evalue.startswith("x" * MAX_TEXT_CHARS) and "cut by the grader" in output.evalue


@pytest.mark.slow
def test_the_time_budget_bounds_the_whole_notebook():
    notebook = execute(["import time; time.sleep(1.5)"] * 8 + ["x = 1"], time_budget=4)  # 12 s of work, 4 s allowed
    not_run = [cell for cell in notebook.cells if any("time budget" in error for error in errors(cell))]
    assert len(not_run) >= 5 and notebook.cells[-1] in not_run


class NeverReady:
    """A kernel client whose kernel never replies (``jupyter_client``'s error when a start takes too long)."""

    def start_channels(self) -> None:
        pass

    def wait_for_ready(self, timeout=None) -> None:
        raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    def stop_channels(self) -> None:
        pass


class RestartNeverReady(ResilientExecute):
    """Its first kernel starts; the one a restart starts never gets ready (a loaded machine), and with
    ``deadline_comes`` the notebook's deadline comes while it waits (whatever the machine's speed)."""

    deadline_comes = False

    def start_new_kernel_client(self):
        self.clients = getattr(self, "clients", 0) + 1
        if self.clients > 1:
            if self.deadline_comes:
                self._deadline.at = time.monotonic()
            self.km.client = lambda **_: NeverReady()
        return super().start_new_kernel_client()


def execute_with_a_restart_never_ready(*, deadline_comes: bool):
    """A kernel that dies in the first cell, and the restart's kernel never ready; the notebook and the executor."""
    notebook = new_notebook(cells=[new_code_cell("import os; os._exit(1)"), new_code_cell("x = 1")],
                            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    executor = RestartNeverReady(grading_secret=SECRET, require_grading_kernel=False, kernel_name="python3", timeout=60,
                                 course_root=str(FIXTURE_COURSE), time_budget=600)
    executor.deadline_comes = deadline_comes
    try:
        executor.preprocess(notebook, {"nbgrader": {"student": "someone"}})
    finally:
        assert executor.clients == 2, "the restart asked for no client"
    return notebook


@pytest.mark.slow
def test_a_restart_that_never_gets_ready_by_the_deadline_ends_the_notebook_not_the_grading():
    notebook = execute_with_a_restart_never_ready(deadline_comes=True)
    assert "KernelDied" in errors(notebook.cells[0])[0]
    assert any("time budget" in error for error in errors(notebook.cells[1])), notebook.cells[1].outputs


@pytest.mark.slow
def test_a_restart_that_never_gets_ready_within_the_budget_raises_the_kernels_error():
    with pytest.raises(RuntimeError, match="didn't respond"):  # not nbclient's AssertionError at its clean-up
        execute_with_a_restart_never_ready(deadline_comes=False)


@pytest.mark.slow
def test_a_kernel_that_keeps_dying_is_given_up_after_max_restarts():
    notebook = execute(["import os; os._exit(1)"] * 3 + ["x = 1"], max_restarts=1)
    assert "KernelDied" in errors(notebook.cells[0])[0]
    assert "KernelDied" in errors(notebook.cells[1])[0]
    for cell in notebook.cells[2:]:
        assert "gives up after 1 restarts" in errors(cell)[0]


@pytest.mark.slow
def test_output_is_capped_while_it_arrives():
    notebook = execute(["import sys\nfor _ in range(50):\n    sys.stdout.write('x' * 100_000); sys.stdout.flush()"],
                       max_cell_output_chars=300_000)
    text = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert len(text) < 400_000
    assert "further output cut by the grader" in text


@pytest.mark.slow
def test_the_whole_notebook_s_output_is_capped_too():
    notebook = execute(["print('x' * 100_000)"] * 5, max_notebook_output_chars=50_000)  # 20,000 kept per output
    texts = ["".join(output.get("text", "") for output in cell.outputs) for cell in notebook.cells]
    assert all(text.startswith("x" * 20_000) for text in texts[:2]), [len(text) for text in texts]
    assert all("outputs are over 50,000 characters" in text and "x" not in text for text in texts[2:]), texts[2:]


@pytest.mark.slow
def test_display_updates_and_widgets_cannot_rewrite_outputs():
    notebook = execute(["from IPython.display import display\n"
                        "handle = display({'text/plain': 'first'}, raw=True, display_id=True)\n"
                        "handle.update({'text/plain': 'x' * 3_000_000}, raw=True)\n"
                        "from ipykernel.comm import Comm\n"
                        "Comm(target_name='jupyter.widget', data={'state': {'_model_name': 'x'}})"])
    shown = [output.data["text/plain"] for output in notebook.cells[0].outputs if output.output_type == "display_data"]
    assert shown == ["first"]
    assert "widgets" not in notebook.metadata


@pytest.mark.slow
def test_a_declared_check_is_judged_outside_the_kernel():
    define = ("import numpy as np\n"
              "def augment(X):\n    X = np.asarray(X, dtype=float)\n    return np.hstack([np.ones((len(X), 1)), X])\n")
    test = ("assert augment(np.zeros((1, 1))).shape == (1, 2)\n"
            "### BEGIN HIDDEN TESTS\n"
            "from course_grader.trusted.judging.checks import check_augment\n"
            "check_augment(augment)\n"
            "### END HIDDEN TESTS\n")
    forge = "import numpy as np\nnp.allclose = np.array_equal = lambda *a, **k: True\ndef augment(X):\n    return X\n"
    passed = execute([define, test], test_cells=[1])
    assert errors(passed.cells[1]) == [] and "hidden tests pass" in passed.cells[1].outputs[-1].text
    assert "BEGIN HIDDEN TESTS" in passed.cells[1].source  # the graded notebook keeps its source
    forged = execute([forge, test], test_cells=[1])
    assert "HiddenTestsFailed: augment returned" in errors(forged.cells[1])[0]
    hint = forged.cells[1].outputs[0].text
    assert "A visible test failed" in hint and "assert augment(np.zeros((1, 1))).shape == (1, 2)" in hint


def test_nbgraders_own_autograde_cannot_run_student_code():
    with pytest.raises(RuntimeError, match=f"{grader_command()} grade"):
        execute(["x = 1"], require_grading_kernel=True)


@pytest.mark.slow
def test_a_check_reads_long_answers_uncut_and_says_when_a_function_prints_too_much():
    trace = ("import numpy as np\n"
             "def perceptron_trace(X, y, rule, max_epochs):\n"
             "    w, steps = np.zeros(np.shape(X)[1]), [np.zeros(np.shape(X)[1])]\n"
             "    for _ in range(max_epochs):\n"
             "        mistakes = 0\n"
             "        for x, label in zip(np.asarray(X, float), y):\n"
             "            score = w @ x\n"
             "            wrong = label * score <= 0 if rule == 'margin' else (1 if score >= 0 else -1) != label\n"
             "            if wrong:\n"
             "                w = w + label * x; steps.append(w.copy()); mistakes += 1\n"
             "        if mistakes == 0:\n"
             "            break\n"
             "    print('x' * 200_000)  # long debugging output on every call\n"
             "    return steps\n")
    test = ("### BEGIN HIDDEN TESTS\ncheck_perceptron_trace(perceptron_trace)\n### END HIDDEN TESTS\n")
    chatty = execute([trace, test], test_cells=[1], max_reply_chars=1_000_000)
    assert "printed too much while being tested" in errors(chatty.cells[1])[0]
    roomy = execute([trace, test], test_cells=[1])
    assert errors(roomy.cells[1]) == [], errors(roomy.cells[1])


@pytest.mark.slow
def test_a_visible_result_or_stderr_cannot_grant_or_take_points():
    from nbgrader.utils import determine_grade

    wrong = "import numpy as np\ndef augment(X):\n    return X\nget_ipython().events.register('pre_run_cell', lambda info: get_ipython().displayhook(2.0))\n"
    test = "### BEGIN HIDDEN TESTS\ncheck_augment(augment)\n### END HIDDEN TESTS\n"
    forged = execute([wrong, test], test_cells=[1])
    assert determine_grade(forged.cells[1])[0] == 0
    right = ("import numpy as np, sys\ndef augment(X):\n    X = np.asarray(X, dtype=float)\n"
             "    return np.hstack([np.ones((len(X), 1)), X])\n")
    noisy = execute([right, "import sys; sys.stderr.write('a warning')\n" + test], test_cells=[1])
    assert determine_grade(noisy.cells[1])[0] == 1


@pytest.mark.slow
def test_limits_are_what_the_grader_saw_not_what_a_cell_prints_or_the_notebook_claims():
    claims = "KernelDied CellTimeoutError MemoryError time budget gives up after cut by the grader removed by the grader"
    forged = {GRADING_METADATA: {"limits_hit": list(LIMIT_LABELS)}}
    notebook = execute([f"print({claims!r})", "import time; time.sleep(30)"], notebook_metadata=forged, timeout=2)
    assert limits_hit(notebook) == ["a cell hit the time limit"]
    assert limits_hit(execute([f"print({claims!r})"], notebook_metadata=forged)) == []


@pytest.mark.slow
def test_a_kernel_dying_on_one_call_is_blamed_on_that_call():
    """Replies of the last calls die with the kernel (unflushed, or flushed but still queued in its ZeroMQ socket:
    a flush per call blamed the call before the deadly one here). The calls from the first unanswered one are made
    again, one per execution: the verdict names the call it died on, and the restarts this costs are not counted."""

    import numpy as np

    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks.cases import call_text
    from course_grader.trusted.judging.checks.draws import case_generator

    dies = ("import numpy as np, os\n"
            "def augment(X):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    if X.ndim == 2 and X.shape[0] > 3:\n"
            "        os._exit(1)\n"
            "    return np.hstack([np.ones((len(X), 1)), X])\n")
    test = "### BEGIN HIDDEN TESTS\ncheck_augment(augment)\n### END HIDDEN TESTS\n"
    check = course_checks(FIXTURE_COURSE)["augment"]
    cases = check.cases(case_generator(bytes.fromhex(SECRET), "augment", "someone", "a hand-in's digest"))
    deadly = next(k for k, case in enumerate(cases) if np.ndim(case.args[0]) == 2 and np.shape(case.args[0])[0] > 3)
    assert deadly >= 3, "the test needs calls that return before the deadly one"
    notebook = execute([dies, test], test_cells=[1], submission_digest="a hand-in's digest")
    message = errors(notebook.cells[1])[0]
    assert f"made the kernel die (os._exit, a crash, or too much memory) on this call:\n    {call_text(check, cases[deadly])}" in message
    assert "gives up" not in message and limits_hit(notebook) == ["the kernel died (restarted)"]


@pytest.mark.slow
def test_a_kernel_that_does_not_start_within_the_budget_leaves_every_cell_not_run(tmp_path, monkeypatch):
    # A loaded machine can spend the whole budget starting the kernel: the notebook is then graded as not run, with
    # the budget's reason on every cell, never an error out of the grading of the batch.
    spec = tmp_path / "kernels" / "never-replies"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-c", "import time; time.sleep(60)"],
                                                  "display_name": "never replies", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    notebook = execute(["x = 1", "y = 2"], test_cells=(1,), time_budget=2, kernel_name="never-replies")
    said = [errors(cell) for cell in notebook.cells]
    assert all(len(cell) == 1 and cell[0].startswith("NotRun: ") and "time budget for the notebook (2 s" in cell[0]
               for cell in said), said


#: A correct map of XOR (which quadrant a point is in, as one of four fixed random codes) at a scale that sends the
#: fixture check's max-margin solver to its iteration cap in 1000 dimensions: minutes of the grader's own CPU.
STALLING_XOR_FEATURES = '''import numpy as np
def xor_features(X):
    X = np.asarray(X, dtype=float)
    table = np.random.default_rng(1).choice([-1.0, 1.0], size=(4, 999))
    quadrant = (X[:, 0] >= 0).astype(int) * 2 + (X[:, 1] >= 0).astype(int)
    return np.hstack([np.ones((len(X), 1)), 1.6e-9 * table[quadrant]])
'''


@pytest.mark.slow
def test_a_check_s_judge_is_bounded_in_cpu_time_whatever_the_replies_make_it_do(monkeypatch):
    from course_grader.trusted.judging.checks import judge

    monkeypatch.setattr(judge, "JUDGE_CPU_SECONDS", 2.0)
    test = ("### BEGIN HIDDEN TESTS\n"
            "from course_grader.trusted.judging.checks import check_xor_features\n"
            "check_xor_features(xor_features)\n"
            "### END HIDDEN TESTS\n")
    before = time.process_time()
    graded = execute([STALLING_XOR_FEATURES, test], test_cells=[1])
    said = errors(graded.cells[1])
    assert len(said) == 1 and "could not judge within 2 s of its own work" in said[0], said
    assert time.process_time() - before < 60  # (a bound on a hang, far above the 2 s: the grader's CPU, not the clock)
