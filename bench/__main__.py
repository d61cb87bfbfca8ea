"""``python -m bench [--quick] [--json PATH] [--plot PATH]``: the whole suite in one process (see ``bench.suite``)."""

from .suite import main

raise SystemExit(main())
