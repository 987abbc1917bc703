"""The vLLM explorer: a screen of :class:`planner.tui.app.PlannerApp` (``plan tui --engine vllm``, or ``e``).

Left: the engine, the GPU, the model, vLLM's release and its knobs (--gpu-memory-utilization, --max-model-len,
--max-num-seqs, --max-num-batched-tokens, --kv-cache-dtype, --block-size, prefix caching, MTP tokens, other
flags). Centre: the verdict, the KV cache (blocks, tokens, concurrency), the recommendation of vLLM's knob search
and the lines vLLM would log. Bottom: the ``vllm serve`` line. Every edit re-plans at once without the search
(a few ms, in the field's value watcher); the search (~0.1 s) follows in a worker thread and fills in the
recommendation. Everything shown is vLLM's front end's PlanOutcome (:mod:`planner.tui.vllm_view`).
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from planner.tui import vllm_view as vv
from planner.tui.widgets import ChoiceField, Field, TextField, command_text

ENGINES = [("SGLang", "sglang"), ("vLLM", "vllm")]


class VllmScreen(Screen):
    """vLLM's what-if explorer; its state is the form (``inputs``) and the last plan (``view``)."""

    AUTO_FOCUS = "#vplan"
    BINDINGS = [
        Binding("e", "app.switch_engine", "SGLang"),
        Binding("c", "copy", "Copy"),
        Binding("r", "reset", "Reset"),
        Binding("i", "inputs", "Inputs"),
        Binding("q", "app.quit", "Quit"),
        Binding("escape", "leave_field", "Leave field", show=False),
    ]

    inputs: var[dict[str, Any]] = var(dict, always_update=True, init=False)
    view: var[vv.VllmView | None] = var(None, always_update=True)
    searching: var[bool] = var(False)

    def __init__(self, gpu: str, model: str, flags: list[str], version: str | None = None) -> None:
        super().__init__(id="vllm")
        values, extras = vv.form_from_flags(list(flags))
        import shlex  # noqa: PLC0415

        self._start = {"engine": "vllm", "gpu": gpu, "model": model, "version": vv.default_version(version),
                       **values, "other": shlex.join(extras)}
        self._worker: Worker | None = None

    def compose(self) -> ComposeResult:
        from planner.tui.view import gpu_options, model_options  # noqa: PLC0415

        s = self._start
        with Container(id="vbody"):
            with VerticalScroll(id="vinputs"):
                yield Static("Target", classes="section")
                yield ChoiceField("engine", "engine", ENGINES, "vllm", id="vengine",
                                  tooltip="the engine whose rules plan the launch (e switches)")
                yield ChoiceField("gpu", "GPU", [o for o in gpu_options() if o[1] != "auto"], s["gpu"], id="vgpu")
                models = model_options()
                if s["model"] not in {v for _, v in models}:
                    models = [(s["model"], s["model"]), *models]
                yield ChoiceField("model", "model", models, s["model"], id="vmodel")
                yield ChoiceField("version", "vLLM", [(x, x) for x in vv.versions()], s["version"], id="vversion")
                yield Static("vLLM flags  (empty = default)", classes="section")
                for knob in vv.KNOBS:
                    fid = "v-" + knob.key.removeprefix("--")
                    if knob.kind == "choice":
                        yield ChoiceField(knob.key, vv.label(knob), list(knob.choices), s[knob.key], tooltip=knob.help,
                                          id=fid)
                    else:
                        yield TextField(knob.key, vv.label(knob), s[knob.key], tooltip=knob.help, id=fid,
                                        placeholder="default")
                yield TextField("other", "other flags", s["other"], id="vother", placeholder="--enforce-eager ...",
                                tooltip="any other vLLM flags, as vllm serve takes them")
            with VerticalScroll(id="vplan", can_focus=True):
                yield Static(id="vverdict")
                yield Static(id="vcapacity")
                yield Static(id="vrecommend")
                yield Static(id="vlog")
        yield Static(id="vcommand")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#vinputs").border_title = "Inputs (vLLM)"
        self.query_one("#vplan").border_title = "vLLM plan"
        for f in self.query(Field):
            self._follow(f)
        self.inputs = dict(self._start)

    def _follow(self, f: Field) -> None:
        def edited(value: Any) -> None:
            if f.key == "engine":
                if value != "vllm":
                    f.set_value("vllm")  # this screen stays vLLM's; the app shows SGLang's
                    self.app.action_switch_engine()
                return
            self.inputs = {**self.inputs, f.key: value}

        self.watch(f, "value", edited, init=False)

    # ------------------------------------------------------------------ state

    def _plan(self, inputs: dict[str, Any], search: bool) -> vv.VllmView:
        gpu, model, errors = vv.resolve(inputs["gpu"], inputs["model"])
        if errors:
            return vv.VllmView([], error=next(iter(errors.values())), field_errors=errors)
        values = {k.key: inputs.get(k.key, vv.UNSET) for k in vv.KNOBS}
        return vv.replan(gpu, model, inputs["version"], values, inputs.get("other", ""), search=search)

    def watch_inputs(self, inputs: dict[str, Any]) -> None:
        view = self._plan(inputs, search=False)
        if view.outcome is not None and view.json.get("verdict") != "fits" or (
                view.outcome is not None and not view.json["needs"]["met"]):
            self.searching = True
            self._worker = self._search(dict(inputs))
        else:
            self.searching = False
        self.view = view

    @work(thread=True, exclusive=True, group="vsearch", exit_on_error=False)
    def _search(self, inputs: dict[str, Any]) -> tuple[dict[str, Any], vv.VllmView]:
        return inputs, self._plan(inputs, search=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker or event.worker.is_cancelled:
            return
        if event.state == WorkerState.SUCCESS:
            inputs, view = event.worker.result
            self.searching = False
            if inputs == self.inputs:  # else the form moved on: its own search is running
                self.view = view
        elif event.state == WorkerState.ERROR:
            self.searching = False
            self.notify(f"vLLM search failed: {type(event.worker.error).__name__}", severity="error")

    def watch_view(self, view: vv.VllmView | None) -> None:
        if view is None:
            return
        for f in self.query(Field):
            f.error = view.field_errors.get(f.key, "")
        verdict = self.query_one("#vverdict", Static)
        verdict.update(vv.verdict_text(view))
        for cls in ("-fits", "-rejected", "-oom_risk", "-bad_input"):
            verdict.set_class(cls == f"-{view.verdict}", cls)
        self.query_one("#vcapacity", Static).update(vv.capacity_text(view))
        self.query_one("#vrecommend", Static).update(vv.recommendation_text(view, self.searching))
        log = vv.log_text(view)
        self.query_one("#vlog", Static).update(f"vLLM would log:\n{log}" if log else "")
        self._show_command()

    def _show_command(self) -> None:
        bar = self.query_one("#vcommand", Static)
        if self.view is not None and self.view.command:
            rec = self.view.json.get("recommendation") or {}
            line = command_text(self.view.command, bar.content_size.width or 0)
            if rec.get("found"):  # the front end's launch is the search's, not the form's flags
                from rich.text import Text  # noqa: PLC0415

                line = Text.assemble(("recommended (the search's):\n", "dim"), line)
        else:
            line = "(no command: fix the inputs)"
        bar.update(line)
        bar.styles.height = str(line).count("\n") + 1  # shell_wrap's lines (an auto height kept the first one's)

    def on_resize(self) -> None:
        self._show_command()

    # ------------------------------------------------------------------ actions

    def action_copy(self) -> None:
        command = self.view.command if self.view is not None else ""
        if not command:
            self.notify("No command: fix the inputs first.", severity="warning")
            return
        self.app.copy_to_clipboard(command)
        self.notify(command, title="Copied launch command")

    def action_reset(self) -> None:
        """Every vLLM knob back to vLLM's default (the GPU, model and release stay)."""
        new = {**self.inputs, **vv.empty_form(), "other": ""}
        for f in self.query(Field):
            if f.key in new and f.key not in ("engine", "gpu", "model", "version"):
                f.set_value(new[f.key])
        self.inputs = new

    def action_inputs(self) -> None:
        self.query(Field).first().control.focus()

    def action_leave_field(self) -> None:
        self.query_one("#vplan").focus()
