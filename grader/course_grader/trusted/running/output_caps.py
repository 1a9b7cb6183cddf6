"""Output caps: no cell, check or notebook keeps more output than the grader allows, cut while it arrives.

``OutputCaps`` (a mixin of ``ResilientExecute``) caps each output as nbclient receives it; ``limit_output`` cuts one
output's text and rich values (``LimitOutputSize`` applies it again after the run).
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..judging.grading_metadata import CUT, REMOVED

MAX_TEXT_CHARS = 20_000
MAX_RICH_CHARS = 1_000_000


class OutputCaps:
    """What ``ResilientExecute`` keeps of what the kernel sends (its ``max_*_chars`` traits set the caps)."""

    def _start_caps(self) -> None:
        self._output_chars: dict[int, int] = {}
        self._kept_chars = 0  # of the notebook's outputs, all cells together
        self._cut_cells: set[int] = set()  # cells whose output was cut (and says so)
        self._probing = False  # while a check's harness runs: its reply lines must not be cut

    def output(self, outs, msg, display_id, cell_index):
        """Keep an output only while the cell's outputs stay under their cap (a harness's replies: uncut, under theirs)."""
        if self._probing and msg["msg_type"] == "stream":
            # A harness's reply lines are read as text and never enter the notebook: no schema check for
            # each of them (nbformat validates every new output, 0.4 ms each, one per case).
            content = msg["content"]
            out = NotebookNode(output_type="stream", name=str(content.get("name")), text=str(content.get("text", "")))
            outs.append(out)
        else:
            out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return None
        cap = self.max_reply_chars if self._probing else self.max_cell_output_chars
        if not self._probing:
            for limit in limit_output(out, MAX_TEXT_CHARS, MAX_RICH_CHARS):
                self._hit(limit)
        size = output_chars(out)
        used = self._output_chars.get(cell_index, 0)
        self._output_chars[cell_index] = used + size
        notebook_full = not self._probing and self._kept_chars + size > self.max_notebook_output_chars
        if used + size > cap or notebook_full:
            outs.remove(out)
            self._hit(CUT)
            if cell_index not in self._cut_cells:  # one note per cell
                self._cut_cells.add(cell_index)
                limit = (f"the notebook's outputs are over {self.max_notebook_output_chars:,} characters" if notebook_full
                         else f"over {cap:,} characters")
                outs.append(new_output("stream", name="stdout", text=f"\n... [further output cut by the grader: {limit}]\n"))
            return None
        if not self._probing:
            self._kept_chars += size
        return out

    def on_cell_executed(self, **kwargs):
        """nbgrader's, which adds the execute reply's error when no output holds it; cut as every output is.

        That error comes from the reply, past ``output``: a 20 MB message and its traceback were kept whole
        until ``LimitOutputSize``, and every step between worked on them.
        """
        super().on_cell_executed(**kwargs)
        for output in kwargs["cell"].get("outputs", [])[-1:]:
            if output.get("output_type") == "error":
                for limit in limit_output(output, MAX_TEXT_CHARS, MAX_RICH_CHARS):
                    self._hit(limit)

    def handle_comm_msg(self, outs, msg, cell_index):
        """Widgets and comms are ignored: their state would flow into the notebook unchecked."""

    def _update_display_id(self, display_id, msg):
        """Display updates are ignored: they would rewrite earlier outputs past the caps."""


def output_chars(output) -> int:
    """Characters an output holds (text, an error's name and message, every MIME value, traceback)."""
    size = sum(len(output[key]) for key in ("text", "ename", "evalue") if isinstance(output.get(key), str))
    size += sum(len(line) for line in output.get("traceback", []))
    return size + sum(len(value) if isinstance(value, str) else len(str(value)) for value in output.get("data", {}).values())


def limit_output(output, max_chars: int, max_rich_chars: int) -> list[str]:
    """Cut the text of ``output`` (a stream's text, an error's name, message and last 100 traceback lines, every
    ``text/*`` value) to ``max_chars``; replace a rich value over ``max_rich_chars`` by a note.

    Returns the limits applied (``CUT``, ``REMOVED``), or an empty list.
    """
    texts = []
    for key in ("text", "ename", "evalue"):  # an error's name and message: as long as its class and str() make them
        if isinstance(output.get(key), str):
            texts.append(output[key])
            output[key] = _cut(output[key], max_chars)
    data = output.get("data", {})
    removed = []
    for mime in list(data):
        value = data[mime] if isinstance(data[mime], str) else str(data[mime])
        if mime.startswith("text/"):
            texts.append(value)
            data[mime] = _cut(value, max_chars)
        elif len(value) > max_rich_chars:
            removed.append(f"a {mime} output of {len(value):,} characters")
    if removed:  # only the note is left, so that no other representation is shown in its place
        output["data"] = {"text/plain": f"[{', '.join(removed)}, removed by the grader: over {max_rich_chars:,}]"}
    cut = any(len(text) > max_chars for text in texts)
    if "traceback" in output:
        lines = output["traceback"]
        cut = cut or len(lines) > 100 or any(len(line) > max_chars for line in lines[-100:])
        output["traceback"] = [_cut(line, max_chars) for line in lines[-100:]]
    return [CUT] * cut + [REMOVED] * bool(removed)


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... [{len(text) - max_chars} more characters cut by the grader]"
