"""``torch.backends.cudnn``'s flags. There is no cuDNN here: the flags are kept (scripts set them) and change
nothing, and ``is_available()`` is False."""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version() -> int | None:
    return None
