"""The student bundle: what students receive, nothing they must not see, and it installs."""

import json
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from perceptron_course.grading.trusted.bundle import build_bundle
from perceptron_course.grading.trusted.cli import main
from perceptron_course.grading.trusted.course import Course, CourseError

ROOT = Path(__file__).resolve().parents[1]
SECRET_PATHS = ("source/", "tests/", "example_class/", "perceptron_course/grading/", "gradebook")
SECRET_TEXT = (b"BEGIN SOLUTION", b"BEGIN HIDDEN TESTS")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    assert main(["bundle", "--root", str(ROOT), "--out", str(out)]) == 0
    return out / "perceptron-course-student", out / "perceptron-course-student.zip"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bundle_holds_the_release_the_lectures_and_the_student_package(bundle):
    folder, _ = bundle
    files = files_under(folder)

    release = {f"assignments/{p.relative_to(ROOT / 'release')}": p.read_bytes() for p in (ROOT / "release").glob("*/*.ipynb")}
    lectures = {f"notebooks/{p.name}": p.read_bytes() for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert len(release) == 6 and len(lectures) == 6
    assert {name: files[name] for name in release} == release
    assert {name: files[name] for name in lectures} == lectures
    assert "package/pyproject.toml" in files and "package/perceptron_course/selfcheck.py" in files
    assert "package/perceptron_course/geometry.py" in files
    assert files["README.md"].startswith(b"## For students")
    others = set(files) - set(release) - set(lectures) - {"README.md", "package/pyproject.toml"}
    assert all(name.startswith("package/perceptron_course/") and name.endswith(".py") for name in others), others


def test_no_file_of_the_folder_or_the_zip_holds_solutions_tests_or_grading_code(bundle):
    folder, archive = bundle
    with zipfile.ZipFile(archive) as bundle_zip:
        zipped = {info.filename: bundle_zip.read(info) for info in bundle_zip.infolist() if not info.is_dir()}
    on_disk = {f"perceptron-course-student/{name}": content for name, content in files_under(folder).items()}

    assert zipped == on_disk
    for name, content in zipped.items():
        assert not any(secret in f"/{name}" for secret in SECRET_PATHS), name
        assert not any(secret in content for secret in SECRET_TEXT), name
    assert not any(p.is_symlink() for p in folder.rglob("*"))


def test_student_package_depends_on_the_student_libraries_only(bundle):
    folder, _ = bundle
    pyproject = (folder / "package" / "pyproject.toml").read_text(encoding="utf-8")

    for needed in ("numpy", "scipy", "scikit-learn", "matplotlib", "jupyterlab", "ipykernel"):
        assert f'"{needed}>=' in pyproject, needed
    assert "nbgrader" not in pyproject and "grading" not in pyproject
    assert 'perceptron-selfcheck = "perceptron_course.selfcheck:main"' in pyproject


def copy_course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    for name in ("release", "notebooks", "perceptron_course", "source"):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("nbgrader_config.py", "pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, course / name)
    return course


def test_a_solution_left_in_release_stops_the_build_and_leaves_no_bundle(tmp_path):
    course = copy_course(tmp_path)
    notebook = course / "release" / "01_geometry" / "geometry.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    cells["cells"][3]["source"] = ["### BEGIN SOLUTION\n", "def augment(X): ...\n", "### END SOLUTION\n"]
    notebook.write_text(json.dumps(cells), encoding="utf-8")

    with pytest.raises(CourseError, match="geometry.ipynb: contains 'BEGIN SOLUTION'"):
        build_bundle(Course.open(course), tmp_path / "dist")
    assert not (tmp_path / "dist" / "perceptron-course-student").exists()
    assert not (tmp_path / "dist" / "perceptron-course-student.zip").exists()


def test_editor_leftovers_are_not_copied(tmp_path):
    course = copy_course(tmp_path)
    checkpoints = course / "release" / "01_geometry" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "geometry-checkpoint.ipynb").write_text("{}", encoding="utf-8")

    folder, _ = build_bundle(Course.open(course), tmp_path / "dist")

    assert sorted(p.name for p in (folder / "assignments" / "01_geometry").iterdir()) == ["geometry.ipynb"]


def test_bundle_never_deletes_a_folder_it_did_not_make(tmp_path, capsys):
    precious = tmp_path / "perceptron-course-student"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work", encoding="utf-8")

    assert main(["bundle", "--root", str(ROOT), "--out", str(tmp_path)]) == 2
    assert "is not a student bundle" in capsys.readouterr().err
    assert (precious / "thesis.tex").read_text(encoding="utf-8") == "years of work"


@pytest.mark.slow
def test_package_installs_in_a_fresh_venv_and_a_lecture_imports_it(bundle, tmp_path):
    folder, _ = bundle
    wheels, fresh = tmp_path / "wheels", tmp_path / "fresh"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(folder / "package")],
        check=True,
    )
    venv.EnvBuilder(with_pip=True).create(fresh)
    python = fresh / "bin" / "python"
    (wheel,) = wheels.glob("*.whl")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True)
    # The dependencies are already installed here: let the fresh venv see them, after its own packages.
    fresh_site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (fresh_site / "zz_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")

    lecture = tmp_path / "01_geometry.ipynb"
    shutil.copyfile(folder / "notebooks" / "01_geometry.ipynb", lecture)
    script = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(lecture)!r}, as_version=4)\n"
        "nb.cells.append(nbformat.v4.new_code_cell('import perceptron_course; print(perceptron_course.__file__)'))\n"
        "NotebookClient(nb, timeout=60, kernel_name='python3').execute()\n"
        "print(nb.cells[-1].outputs[0]['text'].strip())\n"
    )
    imported_from = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert Path(imported_from.stdout.strip().splitlines()[-1]).is_relative_to(fresh_site / "perceptron_course")

    no_grading = subprocess.run([str(python), "-c", "import perceptron_course.grading"], capture_output=True, text=True, cwd=tmp_path)
    assert "ModuleNotFoundError" in no_grading.stderr

    selfcheck = subprocess.run(
        [str(fresh / "bin" / "perceptron-selfcheck"), str(folder / "assignments" / "01_geometry" / "geometry.ipynb")],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert selfcheck.returncode == 1, selfcheck.stderr
    assert "0 of 4 visible tests pass; 0 fail; 4 not implemented yet." in selfcheck.stdout


def test_building_twice_gives_the_same_zip_byte_for_byte(tmp_path):
    _, first = build_bundle(Course.open(ROOT), tmp_path / "first")
    _, second = build_bundle(Course.open(ROOT), tmp_path / "second")

    assert first.read_bytes() == second.read_bytes()
