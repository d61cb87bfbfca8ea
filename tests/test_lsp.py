"""``shapetorch lsp`` end to end: the server in a subprocess, driven over stdio by pygls's LSP client.

Each module-scoped server is one editor session on a project in a temporary folder: open a typed model
and get the plugin's diagnostics with their codes, hover and hint shapes, take a quick fix, edit and see
the diagnostics follow, break the syntax, and a project without shapetorch types, its own mypy config,
and no mypy at all.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from shapetorch.lsp import actions

TIMEOUT = 60.0  # the first check loads the stubs; a CI machine may be slow

MODEL = textwrap.dedent('''\
    from __future__ import annotations

    from typing import Literal as L

    import shapetorch as st
    from shapetorch import Dim, Tensor, float32, nn


    class Batch(Dim): ...


    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(768, 512)

        def forward(self, x: Tensor[tuple[Batch, L[196], L[768]], float32]) -> None:
            y = self.proj(x)
            z = st.rearrange(y, "b t c -> b c tt")
            print(z)
    ''')
PROJ_LINE, Y_LINE, Z_LINE = 14, 17, 18  # 0-based lines of self.proj = ..., y = ..., z = ...


class Session:
    """An LSP client on one event loop, remembering what the server published."""

    def __init__(self, root: Path, env: dict[str, str] | None = None, options: dict[str, Any] | None = None):
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.client = LanguageClient("shapetorch-tests", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.messages: list[str] = []
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def shown(params: lsp.ShowMessageParams) -> None:
            self.messages.append(params.message)

        self.run(self.client.start_io(sys.executable, "-m", "shapetorch", "lsp", cwd=str(root),
                                      env={**os.environ, **(env or {})}))
        self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=from_fs_path(str(root)),
            initialization_options={"debounce": 0.05, **(options or {})})))
        self.client.initialized(lsp.InitializedParams())

    def run(self, aw: Any) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(aw, TIMEOUT))

    def close(self) -> None:
        self.run(self.client.shutdown_async(None))
        self.client.exit(None)
        self.run(self.client.stop())
        self.loop.close()

    def uri(self, name: str) -> str:
        uri = from_fs_path(str(self.root / name))
        assert uri is not None
        return uri

    def open(self, name: str, text: str) -> str:
        (self.root / name).write_text(text)
        uri = self.uri(name)
        self.versions[uri] = 1
        self.diagnostics.pop(uri, None)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri

    def change(self, uri: str, text: str) -> None:
        """An unsaved edit: the whole buffer, as editors without incremental sync send it."""
        self.versions[uri] += 1
        self.diagnostics.pop(uri, None)
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def wait(self, uri: str, ok: Callable[[list[lsp.Diagnostic]], bool] = lambda ds: True) -> list[lsp.Diagnostic]:
        async def until() -> list[lsp.Diagnostic]:
            while uri not in self.diagnostics or not ok(self.diagnostics[uri]):
                await asyncio.sleep(0.02)
            return list(self.diagnostics[uri])

        return self.run(until())  # type: ignore[no-any-return]

    def hover(self, uri: str, line: int, character: int) -> str | None:
        found = self.run(self.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(line, character))))
        if found is None:
            return None
        assert isinstance(found.contents, lsp.MarkupContent)
        return found.contents.value  # type: ignore[no-any-return]

    def hints(self, uri: str) -> list[tuple[int, int, str]]:
        found = self.run(self.client.text_document_inlay_hint_async(lsp.InlayHintParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0)))))
        return [(h.position.line, h.position.character, h.label) for h in found or []]

    def actions(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
        found = self.run(self.client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri), diagnostics[0].range, lsp.CodeActionContext(diagnostics))))
        return list(found or [])


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    session = Session(tmp_path_factory.mktemp("typed"))
    yield session
    session.close()


def test_open_publishes_the_plugins_diagnostics_with_codes(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    [d] = typed.wait(uri)
    assert d.code == "einops_error_undefined_axis" and d.source == "shapetorch"
    assert "did you mean 't'?" in d.message
    assert d.range.start == lsp.Position(Z_LINE, 12) and d.range.end == lsp.Position(Z_LINE, 46)


def test_hover_shows_the_compact_shape_and_a_layers_sizes(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    typed.wait(uri)
    assert typed.hover(uri, Y_LINE, 8) == "`(Batch, 196, 512) float32`"  # the name y
    assert typed.hover(uri, Y_LINE, 22) == "`(Batch, 196, 768) float32`"  # the argument x
    assert typed.hover(uri, Y_LINE, 18) == "`Linear[768, 512]`"  # self.proj
    assert typed.hover(uri, 0, 3) is None  # no expression: no hover (other servers answer there)


def test_inlay_hints_follow_tensor_assignments(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    typed.wait(uri)
    # after y = self.proj(x); z's rearrange failed, so nothing is known of z: no hint; no hint for a layer
    assert typed.hints(uri) == [(Y_LINE, 24, "(Batch, 196, 512) float32")]


def test_a_did_you_mean_is_a_quick_fix(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    ds = typed.wait(uri)
    [action] = typed.actions(uri, ds)
    assert action.kind == lsp.CodeActionKind.QuickFix and action.title == "Replace 'tt' with 't'"
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "t"
    line = MODEL.splitlines()[edit.range.start.line]
    assert line[edit.range.start.character:edit.range.end.character] == "tt"


def test_edits_are_checked_and_the_diagnostics_follow(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    typed.wait(uri, lambda ds: len(ds) == 1)
    fixed = MODEL.replace('c tt"', 'c t"')
    typed.change(uri, fixed)
    assert typed.wait(uri) == []
    assert (Z_LINE, 45, "(Batch, 512, 196) float32") in typed.hints(uri)
    broken = fixed.replace("print(z)", "print(z @ z)")
    typed.change(uri, broken)
    [d] = typed.wait(uri)
    assert d.code == "matmul_error_inner_dimensions_do_not_match" and d.range.start.line == Z_LINE + 1
    assert (typed.root / "model.py").read_text() == MODEL  # the user's file is never written


def test_a_syntax_error_is_reported_and_the_server_recovers(typed: Session) -> None:
    uri = typed.open("model.py", MODEL)
    typed.wait(uri, lambda ds: len(ds) == 1)
    typed.change(uri, MODEL.replace('(y, "b', '(y "b'))
    ds = typed.wait(uri)
    assert ds and {d.code for d in ds} == {"syntax"} and ds[0].range.start.line == Z_LINE
    typed.change(uri, MODEL)
    [d] = typed.wait(uri)
    assert d.code == "einops_error_undefined_axis"
    assert typed.hover(uri, Y_LINE, 8) == "`(Batch, 196, 512) float32`"


PLAIN = textwrap.dedent('''\
    def mean(xs: list[float]) -> float:
        total: int = "zero"
        return sum(xs) / len(xs)


    m = mean([1.0, 2.0])
    ''')


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    root = tmp_path_factory.mktemp("configured")
    # the project's own config, found as mypy finds it: one of the plugin's codes is turned off there
    (root / "mypy.ini").write_text("[mypy]\ndisable_error_code = einops_error_undefined_axis\n")
    session = Session(root)
    yield session
    session.close()


def test_a_project_without_shapetorch_types_gets_no_noise(configured: Session) -> None:
    uri = configured.open("plain.py", PLAIN)
    # mypy's own error (an int annotated "zero") is left to the project's Python server
    assert configured.wait(uri) == []
    assert configured.hover(uri, 5, 0) is None and configured.hints(uri) == []
    assert configured.messages == []


def test_the_projects_mypy_config_is_used(configured: Session) -> None:
    uri = configured.open("model.py", MODEL.replace("print(z)", "print(y @ y)"))
    [d] = configured.wait(uri)  # the undefined axis is off in mypy.ini; the matmul error is not
    assert d.code == "matmul_error_inner_dimensions_do_not_match"


def test_without_mypy_the_server_says_so_and_keeps_serving(tmp_path: Path) -> None:
    # a `mypy` that cannot be imported, first on the path: as if mypy were not installed
    fake = tmp_path / "fake"
    (fake / "mypy").mkdir(parents=True)
    (fake / "mypy" / "__init__.py").write_text("raise ImportError('mypy is hidden by the test')\n")
    session = Session(tmp_path, env={"PYTHONPATH": str(fake)})
    try:
        uri = session.open("model.py", MODEL)

        async def told() -> None:
            while not session.messages:
                await asyncio.sleep(0.02)

        session.run(told())
        assert "mypy is not installed" in session.messages[0]
        assert session.hover(uri, Y_LINE, 8) is None and session.hints(uri) == []
    finally:
        session.close()


@pytest.mark.parametrize(("source", "message", "fixed"), [
    ('y = st.rearrange(x, "b t c -> b c tt")', "axis 'tt' appears on the right side only; did you mean 't'?",
     'y = st.rearrange(x, "b t c -> b c t")'),
    ('y = st.rearrange(x, "b (h s) c -> b h s c", hh=4)', "axis 'hh' was given a size but is not used; "
     "did you mean 'h'?", 'y = st.rearrange(x, "b (h s) c -> b h s c", h=4)'),
    ('y = st.einsum("bij,jk->biK", x, w)', "einsum: output subscript 'K' of 'bij,jk->biK' does not appear in "
     "any input term; did you mean 'k'?", 'y = st.einsum("bij,jk->bik", x, w)'),
    ('y = st.reduce(x, "b t c -> b c", "summ")', "unknown reduction 'summ'; expected one of sum; did you mean "
     "'sum'?", 'y = st.reduce(x, "b t c -> b c", "sum")'),
])
def test_quick_fix_edits(source: str, message: str, fixed: str) -> None:
    edit = actions.fix([source], 0, 4, 0, len(source), message)
    assert edit is not None
    assert source[:edit.column] + edit.new_text + source[edit.end_column:] == fixed


def test_no_quick_fix_without_a_suggestion() -> None:
    assert actions.fix(['y = st.rearrange(x, "b t c -> b c tt")'], 0, 4, 0, 38, "axis 'tt' appears") is None


VSCODE = Path(__file__).resolve().parents[1] / "editors" / "vscode"


def test_the_vscode_extensions_settings_are_the_servers() -> None:
    import json

    from shapetorch.lsp.server import Settings

    manifest = json.loads((VSCODE / "package.json").read_text())
    keys = {k.removeprefix("shapetorch.") for k in manifest["contributes"]["configuration"]["properties"]}
    settings = Settings()
    settings.update({"shapetorch": {"inlayHints": False, "mypyDiagnostics": True, "debounce": 0.5}})
    assert settings == Settings(inlay_hints=False, mypy_diagnostics=True, debounce=0.5)
    assert keys == {"command", "inlayHints", "mypyDiagnostics", "debounce"}
    assert (VSCODE / manifest["main"]).exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (the extension's syntax is checked with it)")
def test_the_vscode_extension_parses() -> None:
    done = subprocess.run(["node", "--check", str(VSCODE / "extension.js")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
