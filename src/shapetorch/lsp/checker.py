"""mypy's daemon, in process: the open files checked with the shapetorch plugin, and the types it computed.

The language server holds one ``mypy.dmypy_server.Server`` (the engine behind ``dmypy``) with exported
types, as ``dmypy start --export-types`` would, but without the socket: the hovers and hints read the
mypy ``Type`` of an expression and format it with the plugin's own ``shape_text``, not a string parsed
back. A file is added to the daemon's sources when it is opened; an unsaved buffer is given to mypy as
a shadow file (mypy's ``--shadow-file``), so an edit re-checks one module, fine-grained, without a write
to the user's file. Everything here runs on one thread (the server's mypy worker): mypy is not
thread-safe.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mypy.dmypy_server import Server
from mypy.find_sources import create_source_list
from mypy.inspections import find_all_by_location
from mypy.main import process_options
from mypy.modulefinder import BuildSource
from mypy.nodes import (
    AssignmentStmt,
    Block,
    ClassDef,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Statement,
    TryStmt,
    WhileStmt,
    WithStmt,
)
from mypy.options import Options

from shapetorch._rules.errors import CATALOGUE
from shapetorch_mypy.convert import shape_text

PLUGIN = "shapetorch_mypy"
UNKNOWN_TENSOR = "(...) Any"  # shape_text of a Tensor of which nothing is known (the result of an error)

# The codes the plugin reports: one per catalogue entry, and the family codes above them. ``syntax`` is
# mypy's, but a file that does not parse has no shapes either, so it is always shown.
SHAPE_CODES = frozenset(CATALOGUE) | frozenset(e.family for e in CATALOGUE.values()) | {"syntax"}

_MESSAGE = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)(?::(?P<eline>\d+):(?P<ecol>\d+))?: "
    r"(?P<sev>error|warning|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


@dataclass(frozen=True)
class Diagnostic:
    """One mypy message; lines and columns 0-based, the end exclusive (as LSP counts)."""

    line: int
    column: int
    end_line: int
    end_column: int
    severity: str  # "error" | "warning" | "note"
    message: str
    code: str | None


@dataclass(frozen=True)
class Hint:
    """An inlay hint: ``label`` shown at (line, column), 0-based, after a tensor assignment."""

    line: int
    column: int
    label: str


@dataclass(frozen=True)
class Hover:
    text: str
    line: int
    column: int
    end_line: int
    end_column: int


def parse_messages(lines: list[str], mypy_diagnostics: bool) -> dict[str, list[Diagnostic]]:
    """``path -> diagnostics`` from mypy's output lines (with column numbers and error ends).

    Without ``mypy_diagnostics`` only the plugin's codes are kept (and their notes): beside Pylance,
    mypy's own errors would be said twice.
    """
    out: dict[str, list[Diagnostic]] = {}
    keep_notes = False
    for text in lines:
        m = _MESSAGE.match(text)
        if m is None:
            continue
        sev, code = m["sev"], m["code"]
        if sev == "note":
            # a note continues the error above it, or is a reveal_shape / reveal_type of its own
            if not (mypy_diagnostics or keep_notes or m["msg"].startswith("Shape: ")):
                continue
        else:
            keep_notes = mypy_diagnostics or code in SHAPE_CODES
            if not keep_notes:
                continue
        line, col = int(m["line"]) - 1, max(int(m["col"]) - 1, 0)
        if m["eline"] is not None:
            end_line, end_col = int(m["eline"]) - 1, int(m["ecol"])
        else:
            end_line, end_col = line, col + 1
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        out.setdefault(os.path.abspath(m["file"]), []).append(
            Diagnostic(line, col, end_line, end_col, sev, m["msg"], code))
    return out


def mypy_options(root: Path, first_file: str) -> Options:
    """The project's mypy options, found as ``mypy`` finds them when run from ``root``, with the plugin on.

    mypy looks for its config (``mypy.ini``, ``.mypy.ini``, ``pyproject.toml``, ``setup.cfg``) from the
    current directory up, and resolves the paths in it from there; the server runs in the workspace root.
    A project without the plugin in its config gets it added: without it there are no shapes to show.
    mypy loads plugins only when there is a config file, so a project without one gets a minimal one.
    """
    old = os.getcwd()
    os.chdir(root)
    try:
        _, options = process_options([first_file])
        if options.config_file is None:
            cfg = Path(tempfile.mkdtemp(prefix="shapetorch-lsp-")) / "mypy.ini"
            cfg.write_text(f"[mypy]\nplugins = {PLUGIN}\n")
            _, options = process_options(["--config-file", str(cfg), first_file])
        elif PLUGIN not in options.plugins:
            options.plugins.append(PLUGIN)
    finally:
        os.chdir(old)
    options.export_types = True
    options.show_column_numbers = True
    options.show_error_end = True
    options.hide_error_codes = False
    options.color_output = False
    options.error_summary = False
    options.pretty = False
    return options


class ShapeChecker:
    """The open files of one workspace, checked by mypy's fine-grained daemon with the plugin.

    ``open``/``change``/``save``/``close`` return the diagnostics of every checked file (``path ->
    list``, paths absolute); ``hover`` and ``hints`` read the types of the last check.
    """

    def __init__(self, root: Path, *, mypy_diagnostics: bool = False) -> None:
        self.root = root.resolve()
        self.mypy_diagnostics = mypy_diagnostics
        self.server: Server | None = None
        self.sources: dict[str, BuildSource] = {}
        self.shadow_dir = Path(tempfile.mkdtemp(prefix="shapetorch-lsp-shadow-"))
        self._shadows: dict[str, Path] = {}
        self._messages: list[str] = []

    # -- documents ------------------------------------------------------------------------
    def open(self, path: str, text: str) -> dict[str, list[Diagnostic]]:
        path = os.path.abspath(path)
        if self.server is not None and path not in self.sources:
            # a file new to the daemon: its fine-grained update does not follow a new file's imports into
            # an installed (site-packages) package, so the shapes would stay unknown; start the daemon afresh
            self.server = None
        self._shadow(path, text)
        if self.server is None:
            options = mypy_options(self.root, path)
            self.server = Server(options, str(self.shadow_dir / "status.json"))
        if path not in self.sources:
            for source in create_source_list([path], self.server.options, self.server.fscache):
                self.sources[path] = source
        return self._check()

    def change(self, path: str, text: str) -> dict[str, list[Diagnostic]]:
        """Re-check after an unsaved edit: the buffer goes to mypy as the file's shadow."""
        path = os.path.abspath(path)
        if self.server is None or path not in self.sources:
            return self.open(path, text)
        self._shadow(path, text)
        fg = self.server.fine_grained_manager
        if fg is None:  # the first check stopped at a blocking error (a syntax error): start again
            return self._check()
        fg.flush_cache()
        self.server.fscache.flush()
        self._messages = fg.update([(self.sources[path].module, path)], [])
        return self.diagnostics()

    def save(self, path: str, text: str) -> dict[str, list[Diagnostic]]:
        """On save the daemon also sees what changed on disk (other files, new imports)."""
        path = os.path.abspath(path)
        self._shadow(path, text)
        return self._check()

    def close(self, path: str) -> dict[str, list[Diagnostic]]:
        path = os.path.abspath(path)
        self.sources.pop(path, None)
        shadow = self._shadows.pop(path, None)
        if self.server is not None:
            fg = self.server.fine_grained_manager
            if fg is not None:
                fg.manager.shadow_map.pop(path, None)
                fg.manager.shadow_equivalence_map.pop(path, None)
        if shadow is not None:
            shadow.unlink(missing_ok=True)
        return self._check() if self.sources else {}

    def _shadow(self, path: str, text: str) -> None:
        shadow = self._shadows.get(path)
        if shadow is None:
            shadow = self._shadows[path] = self.shadow_dir / f"{len(self._shadows)}_{Path(path).name}"
        shadow.write_text(text, encoding="utf-8")
        if self.server is not None:
            self.server.options.shadow_file = [[p, str(s)] for p, s in self._shadows.items()]
            fg = self.server.fine_grained_manager
            if fg is not None:
                fg.manager.shadow_map[path] = str(shadow)
                fg.manager.shadow_equivalence_map.pop(path, None)

    def _check(self) -> dict[str, list[Diagnostic]]:
        assert self.server is not None
        self.server.options.shadow_file = [[p, str(s)] for p, s in self._shadows.items()]
        fg = self.server.fine_grained_manager
        if fg is not None:
            fg.manager.shadow_map.update({p: str(s) for p, s in self._shadows.items()})
            fg.manager.shadow_equivalence_map.clear()
        result = self.server.check(list(self.sources.values()), export_types=True, is_tty=False,
                                   terminal_width=200)
        self._messages = str(result.get("out", "")).splitlines()
        if self.server.fine_grained_manager is None:
            self._messages += str(result.get("err", "")).splitlines()
        return self.diagnostics()

    def diagnostics(self) -> dict[str, list[Diagnostic]]:
        found = parse_messages(self._messages, self.mypy_diagnostics)
        return {path: found.get(path, []) for path in self.sources} | found

    # -- types ----------------------------------------------------------------------------
    def _tree(self, path: str) -> MypyFile | None:
        fg = self.server.fine_grained_manager if self.server is not None else None
        source = self.sources.get(os.path.abspath(path))
        if fg is None or source is None:
            return None
        state = fg.graph.get(source.module)
        return state.tree if state is not None else None

    def _text(self, e: Expression) -> str | None:
        assert self.server is not None and self.server.fine_grained_manager is not None
        t = self.server.fine_grained_manager.manager.all_types.get(e)
        return shape_text(t) if t is not None else None

    def hover(self, path: str, line: int, column: int) -> Hover | None:
        """The shape of the innermost tensor expression (or typed layer) at a 0-based position."""
        tree = self._tree(path)
        if tree is None:
            return None
        for e in find_all_by_location(tree, line + 1, column):
            text = self._text(e)
            if text is not None:
                end_line = e.end_line if e.end_line is not None else e.line
                end_column = e.end_column if e.end_column is not None else e.column + 1
                return Hover(text, e.line - 1, e.column, end_line - 1, end_column)
        return None

    def hints(self, path: str, first_line: int = 0, last_line: int | None = None) -> list[Hint]:
        """``⟨shape⟩`` after each unannotated assignment of a tensor to a name or attribute."""
        tree = self._tree(path)
        if tree is None:
            return []
        out = []
        for stmt in _assignments(tree.defs):
            line = stmt.line - 1
            if line < first_line or (last_line is not None and line > last_line):
                continue
            target = stmt.lvalues[0]
            text = self._text(target) or self._text(stmt.rvalue)
            # tensors only (a layer's sizes are in its constructor call), and not a tensor nothing is known of
            if text is None or not text.startswith("(") or text == UNKNOWN_TENSOR:
                continue
            r = stmt.rvalue
            end_line = (r.end_line or r.line) - 1
            end_column = r.end_column if r.end_column is not None else 0
            out.append(Hint(end_line, end_column, text))
        return out


def _assignments(stmts: list[Statement]) -> Iterator[AssignmentStmt]:
    """Assignments ``x = ...`` / ``self.x = ...`` without an annotation (an annotation says the shape),
    in functions, classes and compound statements too."""
    for o in stmts:
        if isinstance(o, AssignmentStmt):
            if len(o.lvalues) == 1 and isinstance(o.lvalues[0], NameExpr | MemberExpr) and o.unanalyzed_type is None:
                yield o
        elif isinstance(o, Decorator):
            yield from _assignments(o.func.body.body)
        elif isinstance(o, FuncDef):
            yield from _assignments(o.body.body)
        elif isinstance(o, ClassDef):
            yield from _assignments(o.defs.body)
        else:
            blocks: list[Block | None] = []
            if isinstance(o, IfStmt):
                blocks = [*o.body, o.else_body]
            elif isinstance(o, ForStmt | WhileStmt):
                blocks = [o.body, o.else_body]
            elif isinstance(o, WithStmt):
                blocks = [o.body]
            elif isinstance(o, TryStmt):
                blocks = [o.body, *o.handlers, o.else_body, o.finally_body]
            for b in blocks:
                if b is not None:
                    yield from _assignments(b.body)
