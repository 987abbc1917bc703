"""The explorer's widgets. Each does one thing and draws what :mod:`planner.tui.view` computed.

The app binds each widget's ``view`` (or ``result``) reactive to its own with ``data_bind``; a
widget never computes a memory number.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.visual import visualize
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Select, Static, Switch
from textual.widgets._select import SelectCurrent, SelectOverlay

from planner.engines.sglang.search import Candidate, SearchResult
from planner.tui.view import (COLUMNS, NUMERIC, BarView, PlanView, candidate_cells, filter_placeholder,
                              filter_rank)

SEGMENT_STYLES = {
    "reserved": "#5f5f5f",
    "weights": "#3b6fb6",
    "mamba": "#a05ec4",
    "spec": "#d9822b",
    "kv": "#2e9e5b",
    "draft_kv": "#1f6b3f",
    "index": "#2aa1b3",
    "needs": "#c9a227",
    "outside": "#8a6d3b",
    "free": "#303030",
    "over": "#d0312d",
}
FLAGS_MIN_WIDTH = 28  # the table's flags column never gets less (it wraps, the table scrolls sideways)
SHORT = {"reserved": "ctx", "weights": "weights", "mamba": "mamba", "spec": "spec", "kv": "KV",
         "draft_kv": "dKV", "index": "idx", "needs": "needs", "outside": "outside", "free": "free", "over": "OVER"}


def _height(widget: Widget, content: Text | str, width: int) -> int:
    """Lines ``content`` takes in ``widget`` at ``width`` cells (wrapped as the widget wraps it)."""
    return visualize(widget, content).get_height(widget.styles, width)


# --------------------------------------------------------------------------- input fields


class Field(Widget):
    """One input: a label, a control, and its inline error (from the last re-plan).

    ``value`` follows the control's value as it changes (a watcher, not a message), so whoever watches it
    (the app re-plans) runs in the same step as the keystroke or ``set_value``: the control's repaint and
    the re-plan's land in one screen update instead of two."""

    DEFAULT_CLASSES = "field"
    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed
    value: var[Any] = var(None, init=False)  # the control's value; set by the control, never by hand
    error: reactive[str] = reactive("")
    control: Any  # the Input, Select or Switch (control_widget's)

    def __init__(self, key: str, label: str, value: Any, *, tooltip: str | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.key = key
        self.label = label
        self._initial = value
        self.set_reactive(Field.value, value)
        if tooltip:
            self.tooltip = tooltip

    def control_widget(self) -> Widget:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        self.control = self.control_widget()
        yield Label(self.label, classes="name")  # a grid (app.tcss): name | control, the error below both
        yield self.control
        yield Static("", classes="error")

    def on_mount(self) -> None:
        self.watch(self.control, "value", self._control_changed, init=False)

    def _control_changed(self, value: Any) -> None:
        self.value = value

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def watch_view(self, view: PlanView | None) -> None:
        if view is not None:
            self.error = view.field_errors.get(self.key, "")
            label = view.labels.get(self.key)
            if label and label != self.label:  # the selected release spells this flag differently
                self.label = label
                for name in self.query(".name"):
                    name.update(label)

    def watch_error(self, error: str) -> None:
        self.set_class(bool(error), "-invalid")
        self.query_one(".error", Static).update(error)


class FieldInput(Input):
    """An Input of a fixed size (its CSS width and height): a new value sets its virtual size (the scroll range)
    and repaints it, without the relayout of the whole screen that Input's own watcher asks for through the
    virtual size (a layout pass repaints every widget; a field's size never depends on its value). The body is
    Input._watch_value of textual 8.2.8 (pinned in pyproject.toml) with that one assignment made quiet."""

    def _watch_value(self, value: str) -> None:
        if self.styles.auto_dimensions:  # sized by its value after all: Input's own behaviour
            super()._watch_value(value)
            return
        self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        self.refresh()
        self._suggestion = ""
        if self.suggester and value:
            self.run_worker(self.suggester._get_suggestion(self, value))
        validation_result = self.validate(value) if "changed" in self.validate_on else None
        self.post_message(self.Changed(self, value, validation_result))
        if self._initial_value:
            self.cursor_position = len(self.value)
            self._initial_value = False
        else:
            self.selection = self.selection


class TextField(Field):
    """A text or number flag: an Input whose placeholder shows what SGLang would use."""

    def __init__(self, key: str, label: str, value: str = "", *, placeholder: str = "",
                 tooltip: str | None = None, id: str | None = None) -> None:
        super().__init__(key, label, value, tooltip=tooltip, id=id)
        self._placeholder = placeholder

    def control_widget(self) -> Widget:
        return FieldInput(self._initial, placeholder=self._placeholder, compact=True, select_on_focus=False)

    @property
    def input(self) -> Input:
        return self.control

    def set_value(self, value: Any) -> None:
        self.input.value = str(value)

    def watch_view(self, view: PlanView | None) -> None:
        super().watch_view(view)
        if view is None or not self.key.startswith("--"):
            return
        if self.key in view.hints:
            self.input.placeholder = view.hints[self.key]
        elif view.plan is not None:
            self.input.placeholder = "default"

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()  # ``value`` already followed it

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()


class FieldSelect(Select):
    """A Select whose new value repaints its label without the relayout of the whole screen that Select's
    own watcher asks for (it updates the label with Static.update, which always requests a layout pass),
    unless the new label wraps to a different height. The body is Select._watch_value and
    SelectCurrent.update of textual 8.2.8 (pinned in pyproject.toml) with that one update made quiet."""

    def _watch_value(self, value: Any) -> None:
        try:
            current = self.query_one(SelectCurrent)
            label = current.query_one("#label", Static)
        except NoMatches:
            super()._watch_value(value)
            return
        index, prompt = next(((i, p) for i, (p, v) in enumerate(self._options) if v == value), (None, None))
        width = label.content_size.width
        if (index is None or width <= 0 or not isinstance(prompt, (str, Text))
                or _height(label, prompt, width) != label.content_size.height):
            super()._watch_value(value)
            return
        self._value = value
        self.query_one(SelectOverlay).highlighted = index
        current.label = prompt
        current.has_value = True
        label.update(prompt, layout=False)
        self.post_message(self.Changed(self, value))


class ChoiceField(Field):
    """A flag with a fixed set of values (or the GPU, the model, the engine version)."""

    def __init__(self, key: str, label: str, options: list[tuple[str, str]], value: str, *,
                 tooltip: str | None = None, id: str | None = None) -> None:
        super().__init__(key, label, value, tooltip=tooltip, id=id)
        self._options = options

    def control_widget(self) -> Widget:
        return FieldSelect(self._options, value=self._initial, allow_blank=False, compact=True)

    def set_value(self, value: Any) -> None:
        self.control.value = value

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()  # ``value`` already followed it


class SwitchField(Field):
    """An on/off flag."""

    def __init__(self, key: str, label: str, value: bool = False, *, tooltip: str | None = None,
                 id: str | None = None) -> None:
        super().__init__(key, label, value, tooltip=tooltip, id=id)

    def control_widget(self) -> Widget:
        return Switch(self._initial, animate=False)

    def set_value(self, value: Any) -> None:
        self.control.value = bool(value)

    @on(Switch.Changed)
    def _switch_changed(self, event: Switch.Changed) -> None:
        event.stop()  # ``value`` already followed it


# --------------------------------------------------------------------------- the plan


class SizedByLayout(Widget):
    """A widget whose new size, found by a layout pass, does not ask for another layout pass.

    Textual's layout pass hands every widget its new size and virtual size; setting the virtual size (a
    reactive declared with layout=True) asks for a second pass in the next frame, which finds nothing to move
    but lays out and repaints again. When only the height changed (new text, same width), the size came from
    the layout itself and that request is redundant: store it quietly, as Textual's own scrolling fast path
    does (``_size_updated(..., layout=False)``, textual 8.2.8, pinned in pyproject.toml). A new width keeps the
    second pass (the text re-wraps to a new height). Scrollbars follow either way (``_scroll_update``)."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        same_width = size.width == self._size.width and container_size.width == self._container_size.width
        return super()._size_updated(size, virtual_size, container_size, layout=layout and not same_width)


class PlanScroll(SizedByLayout, VerticalScroll, can_focus=True):
    """The centre column (verdict, explanation, bar, capacity): scrolls; its panels' heights change with the plan.
    Focusable (SizedByLayout, first in the bases, would make it not): the arrow keys scroll it, and it holds the
    focus when no field does, so the single-letter keys reach the app."""


class Panel(SizedByLayout, Static):
    """A Static that re-lays out the screen only when its new text wraps to a different height
    (a layout pass repaints every widget; most edits change numbers, not line counts)."""

    _shown: Text | None = None
    _shown_lines: tuple[int, int] = (0, -1)  # (width, lines) of _shown, measured when it was shown

    def show(self, content: Text) -> None:
        if self._shown is not None and content == self._shown:
            return
        width = self.content_size.width
        lines = _height(self, content, width) if width > 0 else -1
        old_width, old_lines = self._shown_lines
        if self._shown is None:
            old_lines = -1
        elif width > 0 and old_width != width:
            old_lines = _height(self, self._shown, width)
        self._shown, self._shown_lines = content, (width, lines)
        self.update(content, layout=lines < 0 or lines != old_lines)


def _segment_widths(bar: BarView, width: int) -> list[int]:
    """Cells per drawn segment, proportional to bytes (largest remainder), summing to ``width``."""
    total = sum(s.bytes for s in bar.drawn) or 1
    exact = [s.bytes * width / total for s in bar.drawn]
    cells = [int(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: width - sum(cells)]:
        cells[i] += 1
    return cells


class MemoryBar(SizedByLayout):
    """The GPU's memory as one stacked bar, each segment labelled in GiB."""

    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed
    _lines: int = -1

    def watch_view(self) -> None:
        width = self.content_size.width
        lines = _height(self, self._build(width), width) if width > 0 else -1
        self.refresh(layout=lines != self._lines or lines < 0)
        self._lines = lines

    def render(self) -> Text:
        return self._build(self.content_size.width)

    _built: tuple[Any, int, Text] | None = None

    def _build(self, width: int) -> Text:
        """The bar for the current view at this width (built once: the watcher measures it, render draws it)."""
        if self._built is not None and self._built[0] is self.view and self._built[1] == width:
            return self._built[2].copy()
        text = self._draw(width)
        self._built = (self.view, width, text)
        return text.copy()

    def _draw(self, width: int) -> Text:
        bar = self.view.bar if self.view is not None else None
        if bar is None:
            return Text("no plan: fix the inputs", style="dim italic")
        width = max(10, width)
        out = Text()
        out.append(bar.title + "\n", style="bold")
        cells = _segment_widths(bar, width)
        total = sum(s.bytes for s in bar.drawn)
        # the cells past the GPU's capacity (the plan asks for more): the second row is red there, labelled
        end = width if total <= bar.capacity_bytes else round(width * bar.capacity_bytes / total)
        over = next((s for s in bar.segments if s.key == "over"), None)
        over_style = f"#ffffff on {SEGMENT_STYLES['over']}"
        for row in range(2):
            x = 0
            for seg, n in zip(bar.drawn, cells):
                if n <= 0:
                    continue
                style = f"#ffffff on {SEGMENT_STYLES[seg.key]}"
                if row == 0:
                    label = ""
                    for cand in (f"{SHORT[seg.key]} {seg.gib}", f"{SHORT[seg.key]} {seg.gib_short}",
                                 SHORT[seg.key]):
                        if len(cand) + 2 <= n:
                            label = cand
                            break
                    out.append(label.center(n) if label else " " * n, style=style + (" bold" if label else ""))
                else:
                    inside = max(0, min(n, end - x))
                    out.append(" " * inside, style=style)
                    out.append(" " * (n - inside), style=over_style)
                x += n
            if row == 1 and over is not None and end < width:
                out.append_text(Text())  # (the red run's label, written over its cells)
                start = len(out) - (width - end)
                for cand in (f"OVER {over.gib}", f"OVER {over.gib_short}", "OVER"):
                    if len(cand) + 2 <= width - end:
                        at = start + (width - end - len(cand)) // 2
                        out = out[:at] + Text(cand, style=over_style + " bold") + out[at + len(cand):]
                        break
            out.append("\n")
        used = 0
        for seg in bar.segments:  # the legend flows; an entry never breaks
            entry = 2 + len(seg.name) + 1 + len(seg.gib)
            if used and used + 3 + entry > width:
                out.append("\n")
                used = 0
            elif used:
                out.append("   ")
                used += 3
            out.append("■ ", style=SEGMENT_STYLES[seg.key] if seg.key != "free" else "#8a8a8a")
            out.append(seg.name + " ", style="bold" if seg.key == "over" else "")
            out.append(seg.gib, style="bold red" if seg.key == "over" else "bold")
            used += entry
        if bar.note:
            out.append("\n" + bar.note, style="italic")
        return out


class VerdictPanel(Panel):
    """The verdict: FITS, SGLang's own message, or the out-of-memory risk."""

    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed

    def watch_view(self, view: PlanView | None) -> None:
        if view is None:
            return
        v = view.verdict
        for kind in ("fits", "oom_risk", "rejected", "bad"):
            self.set_class(v.kind == kind, f"-{kind}")
        self.show(Text.assemble((f" {v.title} ", "bold reverse"), "\n", v.message))


class ExplainPanel(Panel):
    """The binding constraint in words, and the flag changes that would help."""

    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed

    def watch_view(self, view: PlanView | None) -> None:
        if view is None:
            return
        v = view.verdict
        text = Text()
        if v.binding:
            text.append("Why: ", style="bold")
            text.append(v.binding)
        for s in v.suggestions:
            text.append("\n\nFix: " if text else "Fix: ", style="bold")
            text.append(s)
        for n in view.notes:
            text.append("\n\nNote: " if text else "Note: ", style="bold")
            text.append(n)
        if self.display != bool(text):
            self.display = bool(text)
        self.show(text)


class CapacityPanel(Panel):
    """What the plan serves: running requests, KV tokens, the longest request."""

    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed

    def watch_view(self, view: PlanView | None) -> None:
        if view is None:
            return
        text = Text()
        width = max((len(name) for name, _ in view.capacity), default=0)
        for i, (name, value) in enumerate(view.capacity):
            text.append(f"{name:<{width}}  ", style="dim")
            text.append(value, style="bold")
            if i < len(view.capacity) - 1:
                text.append("\n")
        self.show(text)


class CommandBar(Panel):
    """The launch command for the current inputs, wrapped at the bar's width with backslash continuations
    (planner.shell.shell_wrap, as the CLI prints it), so that a copy from the terminal still pastes into a shell."""

    view: var[PlanView | None] = var(None, always_update=True)  # its watcher redraws what changed

    def watch_view(self, view: PlanView | None) -> None:
        if view is None:
            return
        if view.command:
            self.show(command_text(view.command, self.content_size.width))
        else:
            self.show(Text("(no command: fix the inputs)", style="dim"))

    def on_resize(self) -> None:
        if self.view is not None and self.view.command:
            self.show(command_text(self.view.command, self.content_size.width))


def command_text(command: str, width: int) -> Text:
    """``$ COMMAND``, wrapped to ``width`` cells with `` \\`` continuations (one line when the width is unknown)."""
    from planner.shell import shell_wrap  # noqa: PLC0415

    body = shell_wrap(command, width - 2, indent="") if width > 20 else command
    return Text.assemble(("$ ", "bold"), body)


# --------------------------------------------------------------------------- search results


class ResultsTable(DataTable):
    """The results' DataTable: its flags column takes the table's width, so a new width of the table itself
    (the layout settling after the rows arrived, a scrollbar, the screen resized) fills the rows again."""

    def on_resize(self) -> None:
        panel = self.parent
        if isinstance(panel, ResultsPanel):
            panel.call_after_refresh(panel._refill_if_resized)


class ResultsPanel(Vertical):
    """The search's feasible configurations: sortable, filterable; Enter loads a row's flags."""

    result: reactive[SearchResult | None] = reactive(None, always_update=True)
    status: reactive[str] = reactive("")
    searching: reactive[bool] = reactive(False)
    sort_column: reactive[str] = reactive("rank")
    sort_reverse: reactive[bool] = reactive(False)
    query: reactive[str] = reactive("")

    class Picked(Message):
        """A row was selected: load these flags."""

        def __init__(self, candidate: Candidate, result: SearchResult) -> None:
            super().__init__()
            self.candidate = candidate
            self.result = result  # the search the row came from (the app loads rows of the shown one only)

    def compose(self) -> ComposeResult:
        yield Static("", classes="status")
        yield Input(placeholder="filter flags (/)", id="filter", compact=True)
        yield ResultsTable(id="table", cursor_type="row", zebra_stripes=True)
        yield Static("", classes="detail")

    def on_mount(self) -> None:
        self._fill()

    def watch_status(self, status: str) -> None:
        self.query_one(".status", Static).update(status)

    def watch_searching(self, searching: bool) -> None:
        self.query_one(DataTable).loading = searching

    def watch_result(self) -> None:
        self._fill()

    def watch_sort_column(self) -> None:
        self._fill()

    def watch_sort_reverse(self) -> None:
        self._fill()

    def watch_query(self) -> None:
        self._fill()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        self.query = event.value

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(DataTable).focus()

    def sort_by(self, column: str) -> None:
        """Sort by a column; the same column again flips the order (numbers start largest first)."""
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_reverse = column in NUMERIC
            self.sort_column = column

    def next_sort(self) -> None:
        keys = ["rank"] + [k for k, _ in COLUMNS]
        self.sort_column = keys[(keys.index(self.sort_column) + 1) % len(keys)]
        self.sort_reverse = self.sort_column in NUMERIC

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    @on(DataTable.RowHighlighted)
    def _highlight(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        detail = self.query_one(".detail", Static)
        if self.result is None or event.row_key.value is None:
            detail.update("")
            return
        detail.update(Text.assemble(("Enter", "bold"), " loads the highlighted row's flags into the inputs."))

    @on(DataTable.RowSelected)
    def _row(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.result is not None and event.row_key.value is not None:
            self.post_message(self.Picked(self.result.ranked[int(event.row_key.value)], self.result))

    def _fill(self) -> None:
        if not self.is_mounted:
            return
        table = self.query_one(DataTable)
        table.clear(columns=True)
        rows = [] if self.result is None else filter_rank(self.result.ranked, self.query, self.sort_column,
                                                          self.sort_reverse)
        cells = [candidate_cells(cand) for _, cand in rows]
        labels = []
        for key, label in COLUMNS:
            arrow = (" ▼" if self.sort_reverse else " ▲") if key == self.sort_column else ""
            labels.append(label + arrow)
        # the numbers take what they need; the flags column the rest of the table's width, its text wrapped
        # (a column as wide as its longest text would leave a letter of it in view)
        widths = [max([len(label)] + [len(row[j]) for row in cells]) for j, label in enumerate(labels)]
        self._filled_width = table.size.width
        if table.size.width:
            numbers = sum(w + 2 * table.cell_padding for w in widths[:-1])
            widths[-1] = max(FLAGS_MIN_WIDTH, table.size.width - numbers - 2 * table.cell_padding
                             - table.styles.scrollbar_size_vertical)
        for (key, _), label, width in zip(COLUMNS, labels, widths):
            table.add_column(Text(label, justify="right" if key in NUMERIC else "left"), key=key, width=width)
        self.query_one(".detail", Static).update("")
        if self.result is not None:
            self.query_one("#filter", Input).placeholder = filter_placeholder(self.result.ranked)
        for (i, _), row in zip(rows, cells):
            table.add_row(*[Text(c, justify="right") if k in NUMERIC else Text(c)
                            for (k, _), c in zip(COLUMNS, row)], key=str(i), height=None)
        # rows that arrive before the layout has settled (a search answered from the process's cache returns at
        # once) were sized for the table's width then: fill again if the next refresh finds another width
        self.call_after_refresh(self._refill_if_resized)

    _filled_width = 0

    def on_resize(self) -> None:
        self.call_after_refresh(self._refill_if_resized)

    def _refill_if_resized(self) -> None:
        if self.query_one(DataTable).size.width != self._filled_width:
            self._fill()
