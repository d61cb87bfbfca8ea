"""``shapetorch lsp``: shapes in the editor over the Language Server Protocol (stdio, pygls).

It only adds shapes: diagnostics of the plugin's codes (source ``shapetorch``), hovers with the compact
``(Batch, 196, 768) float32``, inlay hints after tensor assignments and quick fixes for "did you mean",
so it runs beside Pylance or any other Python server. mypy runs on one worker thread (``checker``), so
the protocol stays responsive while a check runs; a change is checked after a pause in typing.

Settings (``initializationOptions``, or ``workspace/didChangeConfiguration`` as ``{"shapetorch": {...}}``):
``inlayHints`` (default true), ``mypyDiagnostics`` (mypy's own errors too; default false), ``debounce``
(seconds after the last change before a check; default 0.2).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from . import actions

if TYPE_CHECKING:  # mypy itself is imported when the first file opens, so a missing mypy is a message
    from .checker import Diagnostic, ShapeChecker

T = TypeVar("T")
log = logging.getLogger(__name__)
SOURCE = "shapetorch"
_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "note": lsp.DiagnosticSeverity.Information}


@dataclass
class Settings:
    inlay_hints: bool = True
    mypy_diagnostics: bool = False
    debounce: float = 0.2

    def update(self, raw: object) -> None:
        if not isinstance(raw, dict):
            return
        raw = raw.get("shapetorch", raw)
        if not isinstance(raw, dict):
            return
        self.inlay_hints = bool(raw.get("inlayHints", self.inlay_hints))
        self.mypy_diagnostics = bool(raw.get("mypyDiagnostics", self.mypy_diagnostics))
        self.debounce = float(raw.get("debounce", self.debounce))


class ShapeServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("shapetorch", version("shapetorch"))
        self.settings = Settings()
        self.root = Path.cwd()
        self.checker: ShapeChecker | None = None
        self.unavailable: str | None = None  # why there are no shapes (mypy missing, a bad config, ...)
        self.worker = ThreadPoolExecutor(1, thread_name_prefix="shapetorch-mypy")
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.published: set[str] = set()

    # -- the mypy worker --------------------------------------------------------------------
    async def on_worker(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    def _make_checker(self) -> ShapeChecker | None:
        if self.checker is None and self.unavailable is None:
            try:
                from .checker import ShapeChecker
            except ImportError as e:
                self.give_up(f"mypy is not installed ({e}); install shapetorch[lsp] to see shapes")
                return None
            self.checker = ShapeChecker(self.root, mypy_diagnostics=self.settings.mypy_diagnostics)
        return self.checker

    def give_up(self, why: str) -> None:
        """Say once why there are no shapes, and keep serving (empty answers), as a server should."""
        if self.unavailable is None:
            self.unavailable = why
            log.warning("shapetorch lsp: %s", why)
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"shapetorch: {why}"))

    async def check(self, uri: str, what: str) -> None:
        """Run ``checker.<what>`` (open, change, save, close) for ``uri`` and publish what it found."""
        if self._make_checker() is None:
            return
        checker = self.checker
        assert checker is not None
        doc = self.workspace.get_text_document(uri)
        path = to_fs_path(uri)
        if path is None:
            return
        try:
            if what == "close":
                found = await self.on_worker(checker.close, path)
            else:
                found = await self.on_worker(getattr(checker, what), path, doc.source)
        except (Exception, SystemExit) as e:  # mypy exits on a bad config; a crash must not stop the server
            log.exception("mypy failed")
            self.give_up(f"mypy could not check {os.path.basename(path)}: {e}")
            self.checker = None
            return
        self.publish(found)
        caps = self.client_capabilities.workspace
        if caps and caps.inlay_hint and caps.inlay_hint.refresh_support and self.settings.inlay_hints:
            self.workspace_inlay_hint_refresh(None)

    def publish(self, found: dict[str, list[Diagnostic]]) -> None:
        now = {from_fs_path(p) or p: ds for p, ds in found.items()}
        for uri in self.published - now.keys():
            now[uri] = []
        for uri, ds in now.items():
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, [_diagnostic(d) for d in ds]))
        self.published = {uri for uri, ds in now.items() if ds}

    def schedule(self, uri: str) -> None:
        """Check ``uri`` once typing pauses: a newer change restarts the wait."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()

        async def later() -> None:
            await asyncio.sleep(self.settings.debounce)
            self.pending.pop(uri, None)
            await self.check(uri, "change")

        self.pending[uri] = asyncio.ensure_future(later())

    async def settle(self, uri: str) -> None:
        """Before a hover or hints: check a change still waiting for its pause, so the types are current."""
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
            await self.check(uri, "change")


def _diagnostic(d: Diagnostic) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=lsp.Range(lsp.Position(d.line, d.column), lsp.Position(d.end_line, d.end_column)),
        message=d.message, severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error),
        code=d.code, source=SOURCE)


server = ShapeServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: ShapeServer, params: lsp.InitializeParams) -> None:
    ls.settings.update(params.initialization_options)
    folders = params.workspace_folders or []
    root = to_fs_path(folders[0].uri) if folders else (to_fs_path(params.root_uri) if params.root_uri else None)
    if root:
        ls.root = Path(root)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: ShapeServer, params: lsp.DidChangeConfigurationParams) -> None:
    ls.settings.update(params.settings)
    if ls.checker is not None:
        ls.checker.mypy_diagnostics = ls.settings.mypy_diagnostics
        ls.publish(ls.checker.diagnostics())


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: ShapeServer, params: lsp.DidOpenTextDocumentParams) -> None:
    await ls.check(params.text_document.uri, "open")


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ShapeServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: ShapeServer, params: lsp.DidSaveTextDocumentParams) -> None:
    task = ls.pending.pop(params.text_document.uri, None)
    if task is not None:
        task.cancel()
    await ls.check(params.text_document.uri, "save")


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: ShapeServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    if ls.checker is not None:
        path = to_fs_path(uri)
        if path is not None:
            ls.publish(await ls.on_worker(ls.checker.close, path))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: ShapeServer, params: lsp.HoverParams) -> lsp.Hover | None:
    uri, pos = params.text_document.uri, params.position
    path = to_fs_path(uri)
    if ls.checker is None or path is None:
        return None
    await ls.settle(uri)
    found = await ls.on_worker(ls.checker.hover, path, pos.line, pos.character)
    if found is None:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, f"`{found.text}`"),
        range=lsp.Range(lsp.Position(found.line, found.column), lsp.Position(found.end_line, found.end_column)))


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
async def inlay_hints(ls: ShapeServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
    uri, r = params.text_document.uri, params.range
    path = to_fs_path(uri)
    if ls.checker is None or path is None or not ls.settings.inlay_hints:
        return None
    await ls.settle(uri)
    found = await ls.on_worker(ls.checker.hints, path, r.start.line, r.end.line)
    return [lsp.InlayHint(position=lsp.Position(h.line, h.column), label=h.label, padding_left=True)
            for h in found]


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_actions(ls: ShapeServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    uri = params.text_document.uri
    lines = ls.workspace.get_text_document(uri).lines
    lines = [ln.rstrip("\r\n") for ln in lines]
    out = []
    for d in params.context.diagnostics:
        if d.source != SOURCE:
            continue
        r = d.range
        edit = actions.fix(lines, r.start.line, r.start.character, r.end.line, r.end.character, d.message)
        if edit is None:
            continue
        change = lsp.TextEdit(lsp.Range(lsp.Position(edit.line, edit.column), lsp.Position(edit.line, edit.end_column)),
                              edit.new_text)
        out.append(lsp.CodeAction(
            title=f"Replace '{edit.old_text}' with '{edit.new_text}'", kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[d], is_preferred=True, edit=lsp.WorkspaceEdit(changes={uri: [change]})))
    return out or None


def main() -> int:
    """Serve on stdin/stdout until the client exits (logs go to stderr, which editors show)."""
    logging.basicConfig(level=logging.WARNING)
    server.start_io()
    return 0
