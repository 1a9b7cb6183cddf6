"""Choosing the similarity check: candidates measured on the course's own code, in one run.

The example class (honest: the reference ``ada`` and the alternative ``ben``, written
differently; copies: ``cy`` and ``eve`` kept the reference in some parts) plus three made-up
copies (the library's kernel loop pasted, the lecture's perceptron with every name changed, two
students sharing a solution), compared by

1. copydetect's tokens and fingerprints at several k-gram lengths (window 1, as ``similarity.py``);
2. copydetect with its default winnowing window (6): are the scores the same in two processes?
3. a baseline without a library: the standard ``tokenize`` (names -> ``V``), then difflib's ratio.

For each: the highest score of an honest pair and the lowest score of a copy, over the parts long
enough to compare. A usable threshold lies between them.

Run:  .venv/bin/python benchmarks/bench_similarity.py
Prints tables; records nothing by itself (copy the figures into BENCHMARKS.md).
"""

from __future__ import annotations

import difflib
import io
import itertools
import os
import subprocess
import sys
import tempfile
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_similarity import LECTURE_CELL, RENAMED_LECTURE, SAM_AVERAGED, SUE_AVERAGED, library_loop_copy  # noqa: E402

from course_grader.trusted.outputs import similarity  # noqa: E402
from course_grader.trusted.course.course import Course  # noqa: E402
from course_grader.trusted.course.example_class import build_example_class, copy_course  # noqa: E402

HONEST = {frozenset({"ada_reference", "ben_alternative"})}


def documents(course: Course) -> dict[tuple[str, str], dict[str, similarity.Document]]:
    """The student-written code of every part long enough to compare, by (assignment, part) and student."""
    found = {}
    for assignment in course.assignments():
        parts = similarity.solution_parts(course, assignment)
        by_part = similarity.submission_documents(course, assignment, parts, [])
        for part, (stub, solution) in parts.items():
            reference = similarity.Document(similarity.LIBRARY, "", part, similarity.written_lines(stub, solution))
            if similarity.tokenised_length(reference.text) >= similarity.MIN_FILTERED:
                found[(assignment, part)] = {d.owner: d for d in by_part[part]}
    return found


def copydetect_score(a: similarity.Document, b: similarity.Document, k: int, window: int = 1) -> float:
    from copydetect import CodeFingerprint, compare_files

    prints = [CodeFingerprint("x.py", k, window, fp=io.StringIO(d.text)) for d in (a, b)]
    return float(compare_files(*prints)[1][0])


def tokenize_score(a: similarity.Document, b: similarity.Document) -> float:
    def tokens(text: str) -> list[str]:
        out = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.NAME and token.string not in KEYWORDS:
                    out.append("V")
                elif token.type in (tokenize.OP, tokenize.NUMBER, tokenize.NAME):
                    out.append(token.string)
                elif token.type == tokenize.STRING:
                    out.append("S")
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
        return out

    return difflib.SequenceMatcher(None, tokens(a.text), tokens(b.text), autojunk=False).ratio()


KEYWORDS = set(__import__("keyword").kwlist)


def pairs_of(course: Course, references: list[similarity.Document]):
    """(kind, left, right) for every pair of interest: honest or copy."""
    docs = documents(course)
    library = {d.owner + " " + d.part: d for d in references}
    for (assignment, part), by_student in docs.items():
        for a, b in itertools.combinations(sorted(by_student), 2):
            if frozenset({a, b}) in HONEST:
                yield "honest", by_student[a], by_student[b]
            elif a != "dee_untouched" and b != "dee_untouched" and {a, b} <= {"ada_reference", "cy_buggy", "eve_broken"} \
                    and by_student[a].text == by_student[b].text:
                yield "copy", by_student[a], by_student[b]
        for student in ("ada_reference", "ben_alternative"):
            if student in by_student:
                for reference in references:
                    yield "honest", by_student[student], reference
    made_up = similarity.Document(similarity.SUBMISSION, "lib", "kernel_perceptron",
                                  tuple(enumerate(library_loop_copy().splitlines()[1:], start=2)))
    yield "copy", made_up, library["perceptron_course/variants.py train_kernel"]
    lecture = similarity.Document(similarity.LECTURE, "lecture", "cell", tuple(enumerate(LECTURE_CELL.splitlines(), start=1)))
    renamed = similarity.Document(similarity.SUBMISSION, "ren", "train_perceptron", tuple(enumerate(RENAMED_LECTURE.splitlines()[1:], start=2)))
    yield "copy", renamed, lecture
    sam, sue = (similarity.Document(similarity.SUBMISSION, who, "averaged_perceptron", tuple(enumerate(text.splitlines()[1:], start=2)))
                for who, text in (("sam", SAM_AVERAGED), ("sue", SUE_AVERAGED)))
    yield "copy", sam, sue


def separation(pairs, score) -> tuple[float, float]:
    honest = max(score(a, b) for kind, a, b in pairs if kind == "honest")
    copies = min(score(a, b) for kind, a, b in pairs if kind == "copy")
    return honest, copies


def same_in_two_processes(window: int) -> bool:
    """Whether copydetect gives the same scores in two interpreters with different string-hash seeds."""
    script = ("import io\nfrom copydetect import CodeFingerprint, compare_files\n"
              f"a, b = {SAM_AVERAGED!r}, {SAM_AVERAGED.replace('<= 0', '< 0').replace('summed_offset', 'z')!r}\n"
              f"p = [CodeFingerprint('x.py', 25, {window}, fp=io.StringIO(t)) for t in (a, b)]\n"
              "print(compare_files(*p)[1])\n")
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        outputs.add(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                   env={**os.environ, "PYTHONHASHSEED": seed}).stdout)
    return len(outputs) == 1


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        course = copy_course(ROOT, Path(scratch) / "course")
        build_example_class(course, ROOT / "example_class")
        references = [d for d in similarity.library_documents(ROOT / "perceptron_course")
                      + similarity.lecture_documents(ROOT / "notebooks") if d.lines]
        pairs = list(pairs_of(course, references))
        print(f"{sum(k == 'honest' for k, _, _ in pairs)} honest pairs, {sum(k == 'copy' for k, _, _ in pairs)} copies\n")
        print("| candidate | highest honest score | lowest copy score | seconds |")
        print("|---|---|---|---|")
        for k in (15, 20, 25, 30, 40):
            start = time.perf_counter()
            honest, copies = separation(pairs, lambda a, b, k=k: copydetect_score(a, b, k))
            print(f"| copydetect, k = {k}, window 1 | {honest:.2f} | {copies:.2f} | {time.perf_counter() - start:.1f} |")
        start = time.perf_counter()
        honest, copies = separation(pairs, tokenize_score)
        print(f"| tokenize + difflib ratio | {honest:.2f} | {copies:.2f} | {time.perf_counter() - start:.1f} |")
        print()
        for window in (1, 6):
            print(f"copydetect window {window}: same scores under four hash seeds: {same_in_two_processes(window)}")


if __name__ == "__main__":
    main()
