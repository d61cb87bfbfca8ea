# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# shapetorch.linalg under pyright (the stub's precise branch): square matrices keep their shape, solve's rank-2 case.
from typing import Any, Literal as L

from typing_extensions import assert_type

from shapetorch import Tensor, float32, linalg


def f(a: Tensor[tuple[L[3], L[3]], float32], b: Tensor[tuple[L[3], L[2]], float32]) -> None:
    assert_type(linalg.inv(a), Tensor[tuple[L[3], L[3]], float32])
    assert_type(linalg.solve(a, b), Tensor[tuple[L[3], L[2]], float32])
    assert_type(linalg.det(a), Tensor[tuple[()], float32])
    assert_type(linalg.matrix_exp(a), Tensor[tuple[L[3], L[3]], float32])
    U, S, Vh = linalg.svd(a)
    assert_type(U, Tensor[Any, float32])
