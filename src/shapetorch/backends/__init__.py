"""Backends: where a tensor's elements live. ``numpy_backend`` is the default and the reference."""
