"""What the grader changes in how nbgrader runs gives the same results, and touches scratch gradebooks only."""

import copy

import jsonschema
import pytest
import sqlalchemy
from nbformat.v4 import new_code_cell
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

from conftest import fixture_course

from course_grader.trusted.course.nbgrader_patches import is_scratch_gradebook, tune_nbgrader

VALID = {"grade": True, "grade_id": "test_predict", "locked": True, "points": 2, "schema_version": 3,
         "solution": False, "task": False}


def _synchronous(path) -> int:
    """SQLite's ``synchronous`` on a connection opened the way nbgrader opens its gradebook (an SQLAlchemy engine)."""
    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            return connection.execute(sqlalchemy.text("PRAGMA synchronous")).scalar()
    finally:
        engine.dispose()


def test_only_a_jobs_copy_in_a_batch_scratch_folder_is_scratch(tmp_path):
    assert is_scratch_gradebook(str(tmp_path / ".grading-abc" / "job-3" / "gradebook.db"))
    assert not is_scratch_gradebook(str(tmp_path / "course" / "gradebook.db"))
    assert not is_scratch_gradebook(str(tmp_path / ".grading-abc" / "template.db"))
    assert not is_scratch_gradebook(str(tmp_path / "x" / ".grading-abc" / "gradebook.db"))


def test_scratch_gradebooks_skip_fsync_and_the_course_gradebook_keeps_it(tmp_path):
    tune_nbgrader()
    job = tmp_path / ".grading-xyz" / "job-0"
    job.mkdir(parents=True)
    course = tmp_path / "course"
    course.mkdir()
    assert _synchronous(job / "gradebook.db") == 0  # OFF
    assert _synchronous(course / "gradebook.db") == 2  # FULL, SQLite's default, as nbgrader has it


def test_scratch_gradebooks_share_compiled_sql_and_each_keeps_its_own_rows(tmp_path, monkeypatch):
    import nbgrader.api
    from nbgrader.api import Gradebook

    from course_grader.trusted.course.nbgrader_patches import head_revision

    tune_nbgrader()
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", head_revision)  # no `alembic` program needed
    urls = {}
    for k, student in enumerate(["ada", "ben"]):
        folder = tmp_path / ".grading-abc" / f"job-{k}"
        folder.mkdir(parents=True)
        urls[student] = f"sqlite:///{folder / 'gradebook.db'}"
        with Gradebook(urls[student]) as gradebook:
            gradebook.add_student(student)
    (tmp_path / "course").mkdir()
    with Gradebook(urls["ada"]) as ada, Gradebook(urls["ben"]) as ben, \
            Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as course:
        assert [student.id for student in ada.students] == ["ada"]
        assert [student.id for student in ben.students] == ["ben"]
        assert course.students == []
        assert ada.engine._compiled_cache is ben.engine._compiled_cache
        assert ada.engine.dialect is ben.engine.dialect
        assert course.engine._compiled_cache is not ada.engine._compiled_cache
        assert course.engine.dialect is not ada.engine.dialect
        assert len(ada.engine._compiled_cache) > 0  # nbgrader's statements, compiled once for both


@pytest.mark.parametrize("change", [
    {},
    {"points": "two"},
    {"grade_id": 7},
    {"extra": True},
    {"locked": None},
])
def test_cell_metadata_is_judged_exactly_as_jsonschema_validate_judges_it(change):
    metadata = {**copy.deepcopy(VALID), **change}
    validator = MetadataValidatorV3()
    try:
        jsonschema.validate(metadata, validator.schema)
        expected = None
    except jsonschema.ValidationError as error:
        expected = (error.message, list(error.path))
    tune_nbgrader()
    cell = new_code_cell("x = 1", metadata={"nbgrader": metadata})
    try:
        validator.validate_cell(cell)
        found = None
    except jsonschema.ValidationError as error:
        found = (error.message, list(error.path))
    assert found == expected
    if change:
        assert found is not None, "each change breaks the schema"


def test_a_scratch_copy_of_a_gradebook_opens_without_creating_tables_and_a_new_file_still_gets_them(tmp_path, monkeypatch):
    import shutil

    import nbgrader.api
    from nbgrader.api import Base, Gradebook

    from course_grader.trusted.course.nbgrader_patches import head_revision

    tune_nbgrader()
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", head_revision)
    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_student("ada")
    created = []
    create_all = Base.metadata.create_all
    monkeypatch.setattr(Base.metadata, "create_all", lambda *args, **kwargs: (created.append(1), create_all(*args, **kwargs)))
    job = tmp_path / ".grading-abc" / "job-0"
    job.mkdir(parents=True)
    shutil.copy(course / "gradebook.db", job / "gradebook.db")
    with Gradebook(f"sqlite:///{job / 'gradebook.db'}") as gradebook:
        assert [student.id for student in gradebook.students] == ["ada"]
        gradebook.add_student("ben")
    assert created == []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:  # the course's own: as nbgrader opens it
        assert [student.id for student in gradebook.students] == ["ada"]
    assert created == [1]
    empty = tmp_path / ".grading-abc" / "job-1"
    empty.mkdir()
    with Gradebook(f"sqlite:///{empty / 'gradebook.db'}") as gradebook:
        assert gradebook.students == []
    assert created == [1, 1]


def test_a_scratch_gradebook_keeps_one_engine_until_its_job_is_released(tmp_path, monkeypatch):
    """nbgrader opens a job's gradebook about 18 times; each opening made, connected and disposed of an engine."""
    import nbgrader.api
    from nbgrader.api import Gradebook

    from course_grader.trusted.course.nbgrader_patches import head_revision
    from course_grader.trusted.course.nbgrader_patches import release_scratch_gradebooks

    tune_nbgrader()
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", head_revision)
    area = tmp_path / ".grading-abc" / "job-0"
    area.mkdir(parents=True)
    url = f"sqlite:///{area / 'gradebook.db'}"
    with Gradebook(url) as new:  # a file without tables yet: nbgrader's own opening makes them
        new.add_student("ada")
    with Gradebook(url) as first:
        pass
    with Gradebook(url) as second, Gradebook(url) as third:  # two open at once: a session each, one engine
        assert second.engine is first.engine is third.engine and new.engine is not first.engine
        assert second.db is not third.db and second.db() is not third.db()  # one session factory, a session each
        assert [student.id for student in third.students] == ["ada"]
        second.add_student("ben")
    with Gradebook(url) as fourth, Gradebook(url, course_id="other") as other:
        assert [student.id for student in fourth.students] == ["ada", "ben"]
        assert {course.id for course in other.db.query(nbgrader.api.Course)} == {"default_course", "other"}
    (tmp_path / "course").mkdir()
    with Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as course, \
            Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as again:
        assert course.engine is not again.engine  # the course's gradebook: nbgrader's own way
    release_scratch_gradebooks(tmp_path / ".grading-abc" / "job-1")  # another job's: this one is kept
    with Gradebook(url) as kept:
        assert kept.engine is first.engine
    release_scratch_gradebooks(area)
    with Gradebook(url) as reopened:
        assert reopened.engine is not first.engine
        assert [student.id for student in reopened.students] == ["ada", "ben"]
    release_scratch_gradebooks(area)


def test_the_course_validates_an_export_once_and_an_invalid_notebook_still_fails(monkeypatch):
    """nbconvert checks the whole notebook after each preprocessor unless ``optimistic_validation`` (the course's
    configuration): then once, after the last, and a preprocessor that breaks the notebook still fails the export."""

    import nbformat
    from nbconvert.exporters import NotebookExporter
    from nbconvert.preprocessors import Preprocessor
    from nbformat.v4 import new_notebook

    from course_grader.trusted.course.course import Course, load_config

    config = load_config(Course.open(fixture_course()))
    checks = []
    original = nbformat.validate
    monkeypatch.setattr(nbformat, "validate", lambda *args, **kwargs: checks.append(1) or original(*args, **kwargs))

    class Keeps(Preprocessor):
        def preprocess(self, nb, resources):
            return nb, resources

    class Breaks(Preprocessor):
        def preprocess(self, nb, resources):
            nb.cells[0].outputs = [{"output_type": "no such output"}]
            return nb, resources

    def checks_of_an_export(exporter) -> int:
        for _ in range(3):
            exporter.register_preprocessor(Keeps(), enabled=True)
        checks.clear()
        exporter.from_notebook_node(new_notebook(cells=[new_code_cell("x = 1")]))
        return len(checks)

    exporter, nbconverts_own = NotebookExporter(config=config), NotebookExporter()
    assert checks_of_an_export(exporter) == checks_of_an_export(exporter)  # three preprocessors more: no check more
    assert checks_of_an_export(nbconverts_own) == checks_of_an_export(nbconverts_own) - 3  # nbconvert's own: three
    exporter.register_preprocessor(Breaks(), enabled=True)
    with pytest.raises(nbformat.ValidationError):
        exporter.from_notebook_node(new_notebook(cells=[new_code_cell("x = 1")]))
