"""torch's layouts and memory formats: ``torch.strided``, ``torch.channels_last``, ...

Every tensor here is strided (``x.layout`` is ``strided``). A memory format names an order of strides:
``x.contiguous(memory_format=channels_last)`` gives an (N, C, H, W) tensor whose channels are innermost
in memory, as torch's, so ``x.stride()`` and ``x.is_contiguous(memory_format=...)`` answer as torch's.
"""

from __future__ import annotations


class layout:
    """A tensor's layout. Only ``strided`` tensors exist in shapetorch; the sparse layouts are named so code
    that compares against them runs."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"shapetorch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")


class memory_format:
    """An order of a tensor's strides; ``order`` lists the dims from outermost to innermost (None: any rank,
    row-major)."""

    __slots__ = ("name", "order")

    def __init__(self, name: str, order: tuple[int, ...] | None) -> None:
        self.name, self.order = name, order

    def __repr__(self) -> str:
        return f"shapetorch.{self.name}"


contiguous_format = memory_format("contiguous_format", None)
preserve_format = memory_format("preserve_format", None)
legacy_contiguous_format = memory_format("legacy_contiguous_format", None)
channels_last = memory_format("channels_last", (0, 2, 3, 1))
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1))
