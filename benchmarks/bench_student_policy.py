"""What stripping the graded answers from the student package would cost the lectures.

For each lecture notebook: how many code cells call a library function that is (or computes)
the answer of a graded function, read with ``ast`` from the cells' imports and calls.
Run: .venv/bin/python benchmarks/bench_student_policy.py
"""

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Library functions whose body answers a graded part (assignment/part in the comment).
GRADED_ANSWERS = {
    "geometry": {"augment", "signed_distance", "set_margin"},  # 01 augment, signed_distance, set_margin
    "perceptron": {"predict", "train", "is_mistake"},  # 01 predict; 02 step, train; 03 is_mistake, trace
    "theory": {"radius", "mistake_bound", "proof_quantities"},  # 04 radius, mistake_bound, proof_terms
    "multiclass": {"train_one_vs_rest", "predict_multiclass", "decision_function", "train_multiclass"},  # 05
    "variants": {"train_kernel", "train_voted", "averaged_weights"},  # 06 kernel, averaged perceptron
}


def graded_names_used(cells: list[str]) -> list[set[str]]:
    """For each cell, the graded answers it calls (names imported in earlier cells count)."""
    from IPython.core.inputtransformer2 import TransformerManager

    aliases: dict[str, str] = {}  # local name -> "module.function" or "module"
    used = []
    for source in cells:
        try:
            tree = ast.parse(TransformerManager().transform_cell(source))  # magics as the kernel runs them
        except SyntaxError:
            used.append(set())
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perceptron_course"):
                module = (node.module or "").split(".")[-1]
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{module}.{alias.name}" if module != "perceptron_course" else alias.name
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in aliases:
                found.add(aliases[node.id])
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and aliases.get(node.value.id) in GRADED_ANSWERS:
                found.add(f"{aliases[node.value.id]}.{node.attr}")
        used.append({name for name in found if name.count(".") == 1 and name.split(".")[1] in GRADED_ANSWERS.get(name.split(".")[0], ())})
    return used


def main() -> None:
    total_cells = total_using = 0
    print("| lecture | code cells | cells calling a graded answer | graded answers called |")
    print("|---|---|---|---|")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        used = graded_names_used(cells)
        names = sorted(set().union(*used))
        using = sum(bool(u) for u in used)
        total_cells, total_using = total_cells + len(cells), total_using + using
        print(f"| {path.stem} | {len(cells)} | {using} | {', '.join(names)} |")
    print(f"| all | {total_cells} | {total_using} | |")


if __name__ == "__main__":
    main()
