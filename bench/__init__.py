"""shapetorch's benchmarks: ``python -m bench`` runs the suite (``--quick`` for a short run)."""
