"""How fast ``shapetorch lsp`` answers on a 500-line model file, over stdio as an editor talks to it.

    python bench/bench_lsp.py [--lines 500] [--repeat 20]

It writes a typed model of about ``--lines`` lines (blocks of layers, einops, matmul, reductions),
starts ``shapetorch lsp`` in its folder, opens the file and then times, as medians over ``--repeat``:
a warm hover on a tensor name, the inlay hints of the whole file, and the time from a change (an
unsaved edit that adds an error, then one that removes it) to the diagnostics that follow, with the
server's default pause after typing (0.2 s) included. The targets of issue 20: hover and hints within
0.3 s, diagnostics within 1 s of a change. Wall-clock numbers are for reading, not for asserting.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

HEADER = '''from __future__ import annotations

from typing import Literal as L

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, nn


class Batch(Dim): ...


'''

BLOCK = '''class Block{i}(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(64, 192)
        self.out = nn.Linear(64, 64)
        self.up = nn.Linear(64, 256)
        self.down = nn.Linear(256, 64)
        self.norm = nn.LayerNorm(64)

    def forward(self, x: Tensor[tuple[Batch, L[16], L[64]], float32]) -> Tensor[tuple[Batch, L[16], L[64]], float32]:
        h = self.norm(x)
        qkv = self.qkv(h)
        q, k, v = qkv.chunk(3, dim=-1)
        q4 = st.rearrange(q, "b t (h d) -> b h t d", h=4)
        k4 = st.rearrange(k, "b t (h d) -> b h d t", h=4)
        v4 = st.rearrange(v, "b t (h d) -> b h t d", h=4)
        att = (q4 @ k4) * 0.25
        w = F.softmax(att, dim=-1)
        y = w @ v4
        y2 = st.rearrange(y, "b h t d -> b t (h d)")
        x2 = x + self.out(y2)
        m = F.gelu(self.up(self.norm(x2)))
        out = x2 + self.down(m)
        pooled = out.mean(dim=1)
        return out + pooled.unsqueeze(1)


'''


def generate(lines: int) -> str:
    per = BLOCK.count("\n")
    return HEADER + "".join(BLOCK.format(i=i) for i in range(max(1, (lines - HEADER.count("\n")) // per)))


async def run(lines: int, repeat: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    text = generate(lines)
    path = folder / "model.py"
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    published: asyncio.Queue[list[lsp.Diagnostic]] = asyncio.Queue()
    client = LanguageClient("bench", "1")

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: lsp.PublishDiagnosticsParams) -> None:
        if params.uri == uri:
            published.put_nowait(list(params.diagnostics))

    await client.start_io(sys.executable, "-m", "shapetorch", "lsp", cwd=str(folder))
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                       root_uri=from_fs_path(str(folder))))
    client.initialized(lsp.InitializedParams())
    doc = lsp.TextDocumentIdentifier(uri)
    t0 = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
    first = await published.get()
    assert first == [], first
    out = {"lines": float(text.count("\n")), "open": time.perf_counter() - t0}

    src = text.splitlines()
    y_line = next(i for i, ln in enumerate(src) if ln.strip().startswith("y = w @ v4"))
    hovers, hints, changes = [], [], []
    for r in range(repeat):
        t = time.perf_counter()
        h = await client.text_document_hover_async(lsp.HoverParams(doc, lsp.Position(y_line, 8)))
        hovers.append(time.perf_counter() - t)
        assert h is not None and "(Batch, 4, 16, 16) float32" in h.contents.value, h
        t = time.perf_counter()
        found = await client.text_document_inlay_hint_async(
            lsp.InlayHintParams(doc, lsp.Range(lsp.Position(0, 0), lsp.Position(len(src), 0))))
        hints.append(time.perf_counter() - t)
        assert found and len(found) > lines // 3, len(found or [])
        # an edit that breaks one line, then the edit that mends it: each waits for its diagnostics
        for version, body, errors in ((2 * r + 2, text.replace("x + self.out(y2)", "x + self.up(y2)", 1), 1),
                                      (2 * r + 3, text, 0)):
            t = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [lsp.TextDocumentContentChangeWholeDocument(text=body)]))
            ds = await published.get()
            changes.append(time.perf_counter() - t)
            assert len(ds) == errors, ds
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    out |= {"hover": statistics.median(hovers), "hints": statistics.median(hints),
            "change_to_diagnostics": statistics.median(changes), "hints_count": float(len(found))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    r = asyncio.run(run(args.lines, args.repeat))
    print(f"model file: {int(r['lines'])} lines, {int(r['hints_count'])} inlay hints")
    print(f"open to first diagnostics (cold): {r['open'] * 1000:.0f} ms")
    print(f"hover (warm, median of {args.repeat}): {r['hover'] * 1000:.0f} ms")
    print(f"inlay hints, whole file (warm, median): {r['hints'] * 1000:.0f} ms")
    print(f"change to diagnostics (0.2 s pause included, median of {2 * args.repeat}): "
          f"{r['change_to_diagnostics'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
