"""The op hooks: read the argument types, call the rule from ``shapetorch._rules``, build the result.

One module per op family, named as the family's rules module in ``shapetorch._rules``: the hook of an
op whose rule is in ``shapetorch._rules.views`` is in ``hooks/views.py``.

* ``broadcast``: unary and binary elementwise ops, their dunders, ``where``, ``expand``/``broadcast_to``
* ``matmul``: ``@``, ``matmul``, ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``
* ``views``: ``reshape``, ``view``, ``transpose``, ``permute``, ``squeeze``, ... and ``mT``/``T``
* ``joining``: ``cat``, ``stack``, ``split``, ``chunk``, ``tensor_split``, ``unbind``, ``select``, ``narrow``
* ``reduction``: ``sum``, ``mean``, ``amax``, ...
* ``scan``: ``cumsum``, ``cummax``, ... and the dim check of ``softmax``
* ``sorting``: ``max``/``min`` with a dim, ``sort``, ``topk``, ``kthvalue``, ``median``, ``mode``
* ``scatter``: ``gather``, ``scatter``, ``index_select``
* ``tiling``: ``repeat``, ``tile``, ``roll``, ``flip``
* ``indexing``: ``x[i]`` and ``x[i] = v``
* ``inplace``: ``x += y``, ``x.add_(y)``, ...
* ``einsum``, ``einops``: equations and patterns
* ``nn``: ``shapetorch.nn`` layers (constructors and calls) and ``nn.functional``
* ``layers``: the recurrent, attention, Transformer, padding, pixel-shuffle, Upsample, distance and pooling
  layers (constructors and calls; ``nn`` hands their calls over)
* ``creation``: factories; ``conversion``: ``x.float()`` and friends; ``reveal``: ``reveal_shape``
* ``_common``: what they share: :class:`~._common.Op`, :func:`~._common.run` (a ``RuleError`` becomes a mypy
  error), the result's dtype rules and the ``(values, indices)`` result

Which hook serves which op name is ``shapetorch_mypy.table``.
"""
