"""``shapetorch.linalg``: torch.linalg's functions with torch's semantics, batching, dtypes and errors.

Factorizations (``cholesky``, ``qr``, ``svd``, ``eigh``, ``eig``), solvers (``solve``, ``solve_triangular``,
``lstsq``), inverses and determinants, norms, and the functions built on them. The op table names those
torch has only here as ATen does (``linalg_solve``, ...); this module gives them their public names.
"""

from __future__ import annotations

from ._errors import LinAlgError
from .ops.linalg import det, matrix_exp, matrix_power, slogdet
from .ops.linalg import linalg_cholesky as cholesky
from .ops.linalg import linalg_cholesky_ex as cholesky_ex
from .ops.linalg import linalg_cond as cond
from .ops.linalg import linalg_cross as cross
from .ops.linalg import linalg_diagonal as diagonal
from .ops.linalg import linalg_eig as eig
from .ops.linalg import linalg_eigh as eigh
from .ops.linalg import linalg_eigvals as eigvals
from .ops.linalg import linalg_eigvalsh as eigvalsh
from .ops.linalg import linalg_householder_product as householder_product
from .ops.linalg import linalg_inv as inv
from .ops.linalg import linalg_inv_ex as inv_ex
from .ops.linalg import linalg_ldl_factor as ldl_factor
from .ops.linalg import linalg_ldl_factor_ex as ldl_factor_ex
from .ops.linalg import linalg_ldl_solve as ldl_solve
from .ops.linalg import linalg_lstsq as lstsq
from .ops.linalg import linalg_lu as lu
from .ops.linalg import linalg_lu_factor as lu_factor
from .ops.linalg import linalg_lu_factor_ex as lu_factor_ex
from .ops.linalg import linalg_lu_solve as lu_solve
from .ops.linalg import linalg_matrix_norm as matrix_norm
from .ops.linalg import linalg_matrix_rank as matrix_rank
from .ops.linalg import linalg_multi_dot as multi_dot
from .ops.linalg import linalg_norm as norm
from .ops.linalg import linalg_pinv as pinv
from .ops.linalg import linalg_qr as qr
from .ops.linalg import linalg_solve as solve
from .ops.linalg import linalg_solve_ex as solve_ex
from .ops.linalg import linalg_solve_triangular as solve_triangular
from .ops.linalg import linalg_svd as svd
from .ops.linalg import linalg_svdvals as svdvals
from .ops.linalg import linalg_tensorinv as tensorinv
from .ops.linalg import linalg_tensorsolve as tensorsolve
from .ops.linalg import linalg_vander as vander
from .ops.linalg import linalg_vecdot as vecdot
from .ops.linalg import linalg_vector_norm as vector_norm
from .ops.matmul import matmul

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
    "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
    "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]
