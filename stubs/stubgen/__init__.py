"""The stub generator: ``shapetorch-stubs/`` from the op tables. Run it as ``python stubs/generate_stubs.py``.

The ``shapetorch`` stub serves three audiences (see docs/type-safety.md):

* mypy with ``shapetorch_mypy``: the plugin marks ``_PRECISE_STUBS`` always-false, so mypy reads the
  permissive ``elif MYPY:`` branch and the plugin computes every shape from the rules;
* mypy without the plugin: both branches are reachable and mypy keeps the first (precise) one;
* pyright: uses the last declaration, the ``else:`` branch (the same precise text again).

So the precise text is written once here and emitted twice.

* ``tables``: the op tables, and the names that the runtime has and that a stub declares
* ``render_overloads``: the overload templates of one op, by op family (broadcast, reduction, matmul, views,
  creation, sorting/scan/scatter/tiling/joining)
* ``render_dunders``: the operator dunders of ``Tensor``
* ``render_tensor``: the ``Tensor`` class body
* ``render_functions``: the module functions
* ``render_registry``: loose declarations for the rest of the runtime's public names
* ``render_module``: ``__init__.pyi`` assembled: header, dtypes, TypeVars, the three branches, tail
* ``write``: every generated file (``stubs/nn_stubs.py`` renders the ``shapetorch.nn`` ones), written or checked
* ``__main__``: the command
"""
