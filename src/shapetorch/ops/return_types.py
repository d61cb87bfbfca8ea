"""The named tuples ops return, as ``torch.return_types``: one class per op, printed as torch prints them.

``x.max(1)`` returns a ``return_types.max`` with ``values`` and ``indices``; ``torch.sort`` a
``return_types.sort`` with the same fields. Each op's class is a subclass of one tuple type per field
list (``ValuesIndices``, ``SVD``, ...), so code and annotations that name the field list keep working, and
``print(x.max(1))`` shows ``shapetorch.return_types.max(values=..., indices=...)`` on separate lines, as
torch's structseqs do.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from .._tensor import Tensor

_MODULE = "shapetorch.return_types"
T = TypeVar("T", bound=tuple[Any, ...])


def _repr(self: Any) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{_MODULE}.{type(self).__name__}(\n{fields})"


class ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class MinMax(NamedTuple):
    min: Tensor
    max: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class MantissaExponent(NamedTuple):
    mantissa: Tensor
    exponent: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class HistogramResult(NamedTuple):
    hist: Tensor
    bin_edges: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class SVD(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class SVDLegacy(NamedTuple):
    """``torch.svd``'s: V itself, not its adjoint."""

    U: Tensor
    S: Tensor
    V: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class QR(NamedTuple):
    Q: Tensor
    R: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class Eigh(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class SlogDet(NamedTuple):
    sign: Tensor
    logabsdet: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class InvEx(NamedTuple):
    inverse: Tensor
    info: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class CholeskyEx(NamedTuple):
    L: Tensor
    info: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class Lstsq(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class SolveEx(NamedTuple):
    result: Tensor
    info: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class LUFactor(NamedTuple):
    LU: Tensor
    pivots: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class LUFactorEx(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class PLU(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class LDLFactor(NamedTuple):
    LD: Tensor
    pivots: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class LDLFactorEx(NamedTuple):
    LD: Tensor
    pivots: Tensor
    info: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class Geqrf(NamedTuple):
    a: Tensor
    tau: Tensor

    def __repr__(self) -> str:
        return _repr(self)


class TriangularSolve(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor

    def __repr__(self) -> str:
        return _repr(self)


def _named(base: type[T], name: str) -> type[T]:
    cls = type(name, (base,), {"__slots__": (), "__module__": _MODULE, "__qualname__": name})
    return cls


# torch's names, by the ops that return them
VALUES_INDICES: dict[str, type[ValuesIndices]] = {
    op: _named(ValuesIndices, op)
    for op in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin")
}
aminmax = _named(MinMax, "aminmax")
frexp = _named(MantissaExponent, "frexp")
histogram = _named(HistogramResult, "histogram")
histogramdd = _named(HistogramResult, "histogramdd")  # (its bin_edges: a tuple, one tensor per dim)
linalg_svd = _named(SVD, "linalg_svd")
svd = _named(SVDLegacy, "svd")
linalg_qr = _named(QR, "linalg_qr")
qr = _named(QR, "qr")
linalg_eigh = _named(Eigh, "linalg_eigh")
linalg_eig = _named(Eigh, "linalg_eig")
linalg_slogdet = _named(SlogDet, "linalg_slogdet")
linalg_inv_ex = _named(InvEx, "linalg_inv_ex")
linalg_cholesky_ex = _named(CholeskyEx, "linalg_cholesky_ex")
linalg_lstsq = _named(Lstsq, "linalg_lstsq")
geqrf = _named(Geqrf, "geqrf")
linalg_solve_ex = _named(SolveEx, "linalg_solve_ex")
linalg_lu_factor = _named(LUFactor, "linalg_lu_factor")
linalg_lu_factor_ex = _named(LUFactorEx, "linalg_lu_factor_ex")
linalg_lu = _named(PLU, "linalg_lu")
lu_unpack = _named(PLU, "lu_unpack")
linalg_ldl_factor = _named(LDLFactor, "linalg_ldl_factor")
linalg_ldl_factor_ex = _named(LDLFactorEx, "linalg_ldl_factor_ex")
triangular_solve = _named(TriangularSolve, "triangular_solve")

# ``from shapetorch.return_types import max`` as from torch's: the per-op classes by their own names
globals().update(VALUES_INDICES)
