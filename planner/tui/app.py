"""The what-if explorer: edit SGLang flags, see the memory plan change as you type.

    plan tui --gpu rtxpro6000 --model qwen3.6-27b [SGLang flags]
    plan tui --engine vllm --gpu rtxpro6000 --model qwen3.6-27b [vLLM flags]

``e`` switches the engine: vLLM's explorer is its own screen (:mod:`planner.tui.vllm_screen`), kept while the
app runs, so switching back and forth keeps each engine's form.

Left: the GPU, the model and every flag the search varies (on terminals under 120 columns, shown while
the focus is in them). Centre: the verdict, why, the fix, the GPU's memory as a stacked bar and the
serving capacity. Right (below it under 200 columns; switched with it by t under 120): the search's
feasible configurations. Bottom: the launch command. Every edit re-plans synchronously, in the edited field's
value watcher (a plan takes about a millisecond), so the field and the plan repaint in one screen update;
the search runs in a worker thread.
"""

from __future__ import annotations

import shlex
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Markdown, Static
from textual.worker import Worker, WorkerState

from planner.engines.sglang.search import Needs, SearchResult, run_search
from planner.tui import view as v
from planner.tui.widgets import (
    CapacityPanel,
    ChoiceField,
    CommandBar,
    ExplainPanel,
    Field,
    MemoryBar,
    PlanScroll,
    ResultsPanel,
    SwitchField,
    TextField,
    VerdictPanel,
)

HELP = """\
# gpu-memory-planner: what-if explorer

Every edit re-plans at once with the chosen SGLang release's rules. An empty field means
*SGLang's default*; its placeholder shows the value SGLang would pick.

| key | what it does |
|---|---|
| `s` | search the flags you left empty for configurations that boot |
| `Enter` (in the table) | load the selected configuration's flags |
| `/` | filter the table by flag text (every word must match) |
| `o` | sort the table by the next column (or click a header; again flips) |
| `t` | show the table (narrow terminals: switch between the plan and the table) |
| `i` | go to the inputs (narrow terminals show them while the focus is in them) |
| `c` | copy the launch command (also shown at the bottom) |
| `r` | reset every flag to SGLang's default |
| `e` | switch the engine: vLLM's explorer (its knobs, verdict, KV blocks, tokens, concurrency, `vllm serve` line); `e` again comes back |
| `Esc` | leave a field (then the single-letter keys work) |
| arrows, `PgUp` / `PgDn` | scroll the plan, the table or this help |
| `Tab` / `Shift+Tab` | next / previous field |
| `?` | this help |
| `q` | quit |

**Bar**: the GPU's memory left to right, in GiB (2^30 bytes; SGLang's logs say "GB"):
driver + CUDA context, weights, mamba state, speculative intermediates, KV cache, draft KV,
req_to_token + index buffers, the allocations after the pools (workspace, CUDA graphs,
activations, draft weights), and what is left. When the plan asks for more than the GPU has, the
segments run past its end: the bar's second row turns red there, **OVER**, by that much.

**Verdict**: `FITS`, SGLang's own error message (rejected flags, or a failure while sizing the
pools), or `OUT-OF-MEMORY RISK` (the pools fit but a later allocation is unlikely to);
*Why* names the binding constraint.
"""


class HelpScreen(ModalScreen[None]):
    """Keys and how to read the screen."""

    AUTO_FOCUS = "#help"  # the arrow and page keys scroll it
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)


class PlannerApp(App[int]):
    """Inputs on the left, the plan in the centre, the search on the right, the command at the bottom."""

    CSS_PATH = "app.tcss"
    TITLE = "gpu-memory-planner"
    AUTO_FOCUS = "#plan"  # the verdict in view and the single-letter keys live from the start, at any size
    # side by side only where the table's flags column still gets its width (app.tcss)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-medium"), (200, "-wide")]
    BINDINGS = [
        Binding("s", "search", "Search"),
        Binding("c", "copy", "Copy"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("o", "sort", "Sort"),
        Binding("t", "table", "Table"),
        Binding("i", "inputs", "Inputs"),
        Binding("r", "reset", "Reset"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "leave_field", "Leave field", show=False),
        Binding("e", "switch_engine", "vLLM", show=False),  # hidden: SGLang's footer stays as it was
    ]

    # vars, not reactives: setting one must not repaint the whole screen (App.refresh); the widgets bound to
    # them redraw what changed themselves
    inputs: var[dict[str, Any]] = var(dict, always_update=True, init=False)
    view: var[v.PlanView | None] = var(None, always_update=True)
    result: var[SearchResult | None] = var(None, always_update=True)
    search_status: var[str] = var("s searches the flags you left empty for configurations that boot.")
    searching: var[bool] = var(False)

    def __init__(self, gpu: str | None = None, model: str | None = None, flags: list[str] | None = None,
                 env: dict[str, str] | None = None, *, version: str | None = None, auto_search: bool = True,
                 engine: str = "sglang", vllm_version: str | None = None) -> None:
        super().__init__()
        if engine not in ("sglang", "vllm"):
            from planner.errors import BadInput  # noqa: PLC0415

            raise BadInput(f"--engine {str(engine)[:40]}: one of sglang, vllm")
        self.engine = engine
        self._vllm: Any = None  # vLLM's screen, made on the first switch (or now, with --engine vllm)
        if engine == "vllm":  # the flags given are vLLM's; SGLang's form starts at SGLang's defaults
            if env:
                from planner.errors import BadInput  # noqa: PLC0415

                raise BadInput("--env: SGLang environment variables are not taken with --engine vllm")
            self._start = v.initial_inputs(gpu, model, [], {}, version)
            self._vllm = self._vllm_screen(gpu, model, list(flags or []), vllm_version)
        else:
            self._start = v.initial_inputs(gpu, model, list(flags or []), env, version)  # BadInput: unknown GPU/model
        self._auto_search = auto_search and engine == "sglang"
        self._searched_for: tuple[str, ...] | None = None
        self._search_ctx: v.SearchContext | None = None  # what the running (or last) search was for
        self._result_ctx: v.SearchContext | None = None  # what the shown result was searched for
        self._search_worker: Worker | None = None  # the newest search: an older one's result is dropped
        self._loading = False  # load_flags is setting the fields: one re-plan at the end, not one per field

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        start = self._start
        bind = {"view": PlannerApp.view}
        with Container(id="body"):
            with VerticalScroll(id="inputs"):
                yield Static("Target", classes="section")
                yield ChoiceField("gpu", "GPU", v.gpu_options(), start["gpu"], id="gpu").data_bind(**bind)
                yield ChoiceField("model", "model", v.model_options(), start["model"], id="model").data_bind(**bind)
                yield TextField("model-path", "or path / HF id", start["model-path"], id="model-path",
                                placeholder="config.json, checkpoint dir",
                                tooltip="a config.json, a checkpoint directory or a Hugging Face id "
                                        "(overrides the model above)").data_bind(**bind)
                yield ChoiceField("engine", "SGLang", [(x, x) for x in v.ENGINE_VERSIONS], start["engine"],
                                  id="engine").data_bind(**bind)
                yield Static("Flags  (empty = default)", classes="section")
                for spec in v.FIELDS:
                    value = start[spec.flag]
                    if spec.kind == "switch":
                        field: Field = SwitchField(spec.flag, spec.flag, bool(value), tooltip=spec.help, id=spec.id)
                    elif spec.kind == "choice":
                        field = ChoiceField(spec.flag, spec.flag, list(spec.choices), value, tooltip=spec.help,
                                            id=spec.id)
                    else:
                        field = TextField(spec.flag, spec.flag, value, tooltip=spec.help, id=spec.id)
                    yield field.data_bind(**bind)
                yield TextField("other", "other flags", start["other"], id="other", placeholder="--tp-size 2 ...",
                                tooltip="any other SGLang flags, as launch_server takes them").data_bind(**bind)
                yield TextField("env", "env", start["env"], id="env", placeholder="KEY=VALUE ...",
                                tooltip="SGLang environment variables, e.g. SGLANG_MAMBA_SSM_DTYPE=bfloat16"
                                ).data_bind(**bind)
            with Container(id="work"):
                with PlanScroll(id="plan"):
                    # the answer first (what SGLang says, why, the fix), so a small terminal shows it; then the picture
                    yield VerdictPanel(id="verdict").data_bind(**bind)
                    yield ExplainPanel(id="explain").data_bind(**bind)
                    yield MemoryBar(id="bar").data_bind(**bind)
                    yield CapacityPanel(id="capacity").data_bind(**bind)
                yield ResultsPanel(id="results").data_bind(
                    result=PlannerApp.result, status=PlannerApp.search_status, searching=PlannerApp.searching)
        yield CommandBar(id="command").data_bind(**bind)
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#plan").border_title = "Memory plan"
        self.query_one("#results").border_title = "Feasible configurations"
        self.query_one("#inputs").border_title = "Inputs"
        for field in self.query(Field):
            self._follow(field)
        self.watch(self.screen, "focused", self._focus_moved)
        self.inputs = dict(self._start)
        if self._auto_search:
            self.action_search()
        if self.engine == "vllm":
            self.install_screen(self._vllm, name="vllm")  # installed: popped, it keeps its form
            self.push_screen("vllm")

    # ------------------------------------------------------------------ engines

    def _vllm_screen(self, gpu: str | None, model: str | None, flags: list[str], version: str | None):
        from planner.tui.vllm_screen import VllmScreen  # noqa: PLC0415

        gpu_id = v.initial_gpu(gpu)  # BadInput: an unknown GPU
        if gpu_id == v.LIVE:
            from planner.errors import BadInput  # noqa: PLC0415

            raise BadInput("--gpu auto: vLLM's explorer plans a GPU profile; give --gpu NAME")
        return VllmScreen(gpu_id, model or v.DEFAULT_MODEL, flags, version)

    # the SGLang screen's own actions: off (and out of the footer) while vLLM's screen shows
    SGLANG_ACTIONS = frozenset({"search", "focus_filter", "sort", "table", "help", "inputs", "reset", "copy",
                                "leave_field"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.SGLANG_ACTIONS and getattr(self.screen, "id", None) == "vllm":
            return False
        return True

    def action_switch_engine(self) -> None:
        """SGLang <-> vLLM: vLLM's screen over SGLang's (made from SGLang's GPU and model the first time)."""
        from planner.tui.vllm_screen import VllmScreen  # noqa: PLC0415

        if isinstance(self.screen, VllmScreen):
            self.pop_screen()
            self.engine = "sglang"
            return
        if self.screen is not self.screen_stack[0]:
            return  # the help is open
        if self._vllm is None:
            from planner.errors import PlannerError  # noqa: PLC0415

            gpu = self.inputs.get("gpu")
            model = self.inputs.get("model-path") or self.inputs.get("model")
            try:  # e.g. a vllm installed here whose release is not modelled: one line, the app goes on
                self._vllm = self._vllm_screen(v.DEFAULT_GPU if gpu == v.LIVE else gpu, model, [], None)
            except PlannerError as exc:
                self.notify(str(exc), title="vLLM", severity="error")
                return
            self.install_screen(self._vllm, name="vllm")  # installed: popped, it keeps its form
        self.engine = "vllm"
        self.push_screen("vllm")

    # ------------------------------------------------------------------ state

    def watch_inputs(self, inputs: dict[str, Any]) -> None:
        self.view = v.replan(inputs)

    def watch_view(self, view: v.PlanView | None) -> None:
        if self.result is None and not self.searching:
            return
        ctx = v.search_context(view)
        if ctx != (self._search_ctx if self.searching else self._result_ctx):
            # the release, GPU, model or environment changed: the rows were searched for something else
            self._results_moved(ctx)
        elif self.result is not None and view is not None and view.model is not None and not self.searching:
            self.search_status = v.search_status(self.result, view.model, self._stale())
        self._mark_stale()

    def _results_moved(self, ctx: v.SearchContext | None) -> None:
        """The shown rows (or the running search) are for another release, GPU, model or environment:
        search again when the inputs allow, else say the rows are stale; rows never load across contexts."""
        if ctx is not None and self.view is not None and self.view.plan is not None:
            self.action_search(
                f"Searching again for {v.context_text(ctx)} (the rows were for "
                f"{v.context_text(self._result_ctx or self._search_ctx)})...")
            return
        if self.searching:
            self.workers.cancel_group(self, "search")
            self.searching = False
        if self.result is not None:
            self.search_status = (f"Stale: these rows are for {v.context_text(self._result_ctx)}; fix the "
                                  "inputs, then s searches again.")
        else:
            self.search_status = "Search stopped: fix the inputs, then s searches again."

    def _mark_stale(self) -> None:
        stale = self.result is not None and v.search_context(self.view) != self._result_ctx
        self.query_one(ResultsPanel).set_class(stale, "-stale")

    def _stale(self) -> bool:
        if self.view is None or self.result is None:
            return True
        return v.is_stale(self.result, list(self._searched_for or ()), self.view.flags, self.view.version)

    def _follow(self, field: Field) -> None:
        """Re-plan when the field's value changes, in the same step (its watcher), not a message later."""

        def edited(value: Any) -> None:
            if not self._loading:
                self.inputs = {**self.inputs, field.key: value}

        self.watch(field, "value", edited, init=False)

    def load_flags(self, flags: list[str]) -> None:
        """Put a flag list into the form (fields it covers, the rest into 'other flags'), then re-plan once."""
        values, extras = v.form_from_flags(flags)
        new = {**self.inputs, **values, "other": shlex.join(extras)}
        self._loading = True
        try:
            for field in self.query(Field):
                if field.key in values or field.key == "other":
                    field.set_value(new[field.key])
        finally:
            self._loading = False
        self.inputs = new

    # ------------------------------------------------------------------ search

    def action_search(self, status: str = "Searching the flags you left empty...") -> None:
        view = self.view
        if view is None or view.plan is None or view.gpu is None or view.model is None:
            self.notify("Fix the inputs first.", severity="warning")
            return
        self.searching = True
        self.search_status = status
        self._searched_for = tuple(view.flags)
        self._search_ctx = v.search_context(view)
        self._search_worker = self._search(self._search_ctx, view.gpu, view.model, list(view.flags),
                                           dict(view.env), view.version)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, ctx: v.SearchContext, gpu, model, flags: list[str], env: dict[str, str],
                version: str | None) -> tuple[v.SearchContext, SearchResult]:
        # branch and bound: the exhaustive search's top 20 and radix-off alternative, proved (run_search)
        return ctx, run_search(gpu, model, flags, env, needs=Needs(), top=20, relax=False, version=version,
                               prune=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "search" or worker.is_cancelled or worker is not self._search_worker:
            return  # an older search, superseded (exclusive: a thread is marked cancelled, not stopped)
        if event.state == WorkerState.SUCCESS:
            ctx, result = worker.result
            self._result_ctx = ctx
            self.result = result
            self.searching = False
            if ctx != v.search_context(self.view):  # the inputs moved while it ran
                self._results_moved(v.search_context(self.view))
            elif self.view is not None and self.view.model is not None:
                self.search_status = v.search_status(result, self.view.model, self._stale())
            self._mark_stale()
        elif event.state == WorkerState.ERROR:
            self.searching = False
            self.search_status = f"Search failed: {type(worker.error).__name__}: {worker.error}"

    @on(ResultsPanel.Picked)
    def _picked(self, event: ResultsPanel.Picked) -> None:
        if event.result is not self.result or self.searching or self._result_ctx != v.search_context(self.view):
            self.notify(f"Not loaded: these rows are for {v.context_text(self._result_ctx)}; "
                        + ("the search for the current inputs is running." if self.searching
                           else "fix the inputs, then s searches again."), severity="warning")
            return
        self.load_flags(event.candidate.flags)
        self._show_plan()
        self.notify(" ".join(event.candidate.chosen) or "SGLang defaults", title="Loaded")

    # ------------------------------------------------------------------ actions

    def action_copy(self) -> None:
        command = self.view.command if self.view is not None else ""
        if not command:
            self.notify("No command: fix the inputs first.", severity="warning")
            return
        self.copy_to_clipboard(command)
        self.notify(command, title="Copied launch command")

    def action_focus_filter(self) -> None:
        self.screen.add_class("-show-results")
        self.query_one("#filter", Input).focus()

    def action_sort(self) -> None:
        self.query_one(ResultsPanel).next_sort()

    def action_reset(self) -> None:
        self.load_flags([])

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_inputs(self) -> None:
        """Focus the inputs (on narrow terminals they show while the focus is in them)."""
        self.screen.add_class("-show-inputs")  # displayed first: a hidden widget cannot take the focus
        self.call_after_refresh(lambda: self.query(Field).first().control.focus())

    def _focus_moved(self, focused) -> None:
        inputs = self.query_one("#inputs")
        self.screen.set_class(focused is not None and inputs in focused.ancestors_with_self, "-show-inputs")
        self.call_after_refresh(self._keep_focus_visible)

    def on_resize(self) -> None:
        self.call_after_refresh(self._keep_focus_visible)

    @staticmethod
    def _shown(widget: Widget) -> bool:
        return widget.region.area > 0 and all(w.display for w in widget.ancestors_with_self
                                              if isinstance(w, Widget))

    def _keep_focus_visible(self) -> None:
        """A widget the layout hid (the filter or the table on a terminal made narrow, the inputs) must not
        keep the focus: keys would go to it unseen. Move it to what is shown."""
        if self.screen is not self.screen_stack[0]:
            return  # the help is open: the main screen's focus is looked at when it closes
        focused = self.screen.focused
        if focused is None or not self._shown(focused):
            plan, table = self.query_one("#plan"), self.query_one("#table", DataTable)
            (table if not self._shown(plan) and self._shown(table) else plan).focus()

    def action_leave_field(self) -> None:
        """Out of a text field, so that the single-letter keys work: to the table, or the plan when
        the table is hidden (narrow terminals)."""
        table = self.query_one("#table", DataTable)
        (table if table.region.width else self.query_one("#plan")).focus()

    def action_table(self) -> None:
        """Narrow terminals show the plan or the table: switch. Wider ones show both: focus the table."""
        if self.screen.has_class("-narrow"):
            self.screen.toggle_class("-show-results")
            if not self.screen.has_class("-show-results"):
                self.query_one("#plan").focus()
                return
        self.query_one("#table", DataTable).focus()

    def _show_plan(self) -> None:
        if self.screen.has_class("-show-results"):
            self.screen.remove_class("-show-results")
            self.query_one("#plan").focus()

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(0)
