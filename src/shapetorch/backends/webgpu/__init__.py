"""The WebGPU backend (``device="webgpu"``), on ``wgpu``.

This package's ``__init__`` and :mod:`.api` are cheap: ``wgpu`` is imported by :mod:`.runtime`, which
loads when a WebGPU tensor is first made or ``is_webgpu_available()`` is asked.
"""
