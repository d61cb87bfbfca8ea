"""The shapetorch mypy plugin (see issue: static types)."""
