# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
"""shapetorch.linalg under the plugin: solve's broadcasting, the named tuples of svd/qr/eigh/slogdet, square
matrices; the messages are the runtime's (shapetorch._rules.matrix)."""

from typing import reveal_type

import shapetorch as st
from shapetorch import linalg

a = st.randn(5, 3, 3)
b = st.randn(3, 2)
st.reveal_shape(linalg.solve(a, b))  # N: Shape: (5, 3, 2)
st.reveal_shape(linalg.solve(a, st.randn(4, 1, 3, 2)))  # N: Shape: (4, 5, 3, 2)
st.reveal_shape(linalg.solve(a, st.randn(5, 3)))  # N: Shape: (5, 3)
st.reveal_shape(linalg.solve(a, st.randn(2, 3), left=False))  # N: Shape: (5, 2, 3)
linalg.solve(a, st.randn(4, 2))  # E: linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)  [linalg_error_solve_incompatible]

m = st.randn(4, 6, dtype=st.complex64)
U, S, Vh = linalg.svd(m, full_matrices=False)
st.reveal_shape(U)  # N: Shape: (4, 4)
st.reveal_shape(S)  # N: Shape: (4,)
st.reveal_shape(Vh)  # N: Shape: (4, 6)
reveal_type(linalg.svd(m).S)  # N: Tensor[tuple[Literal[4]], shapetorch.float32]
st.reveal_shape(linalg.svd(m).Vh)  # N: Shape: (6, 6)
st.reveal_shape(linalg.svdvals(st.randn(2, 7, 3)))  # N: Shape: (2, 3)
linalg.svd(st.randn(3))  # E: linalg.svd: expected at least 2 dimensions, got shape (3,)  [linalg_error_requires_at_least_2d]

Q, R = linalg.qr(st.randn(6, 4))
st.reveal_shape(Q)  # N: Shape: (6, 4)
st.reveal_shape(linalg.qr(st.randn(6, 4), mode="complete").Q)  # N: Shape: (6, 6)
w, v = linalg.eigh(a)
st.reveal_shape(w)  # N: Shape: (5, 3)
st.reveal_shape(linalg.slogdet(a).logabsdet)  # N: Shape: (5,)
st.reveal_shape(linalg.det(a))  # N: Shape: (5,)
st.reveal_shape(linalg.inv(a))  # N: Shape: (5, 3, 3)
linalg.inv(st.randn(2, 3))  # E: inverse: expected batches of square matrices, got 2 by 3 matrices (shape (2, 3))  [linalg_error_not_square_matrix]
linalg.cholesky(st.randn(2, 3))  # E: linalg.cholesky: expected batches of square matrices, got 2 by 3 matrices (shape (2, 3))  [linalg_error_not_square_matrix]

P, L, U = linalg.lu(st.randn(2, 3, 5))
st.reveal_shape(P)  # N: Shape: (2, 3, 3)
st.reveal_shape(L)  # N: Shape: (2, 3, 3)
st.reveal_shape(U)  # N: Shape: (2, 3, 5)
st.reveal_shape(linalg.lu(st.randn(5, 3)).L)  # N: Shape: (5, 3)
LU, piv = linalg.lu_factor(st.randn(4, 4))
st.reveal_shape(LU)  # N: Shape: (4, 4)
st.reveal_shape(piv)  # N: Shape: (4,)
st.reveal_shape(linalg.lu_solve(LU, piv, st.randn(7, 1, 4, 2)))  # N: Shape: (7, 1, 4, 2)
linalg.lu_solve(LU, piv, st.randn(3, 2))  # E: linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B (4x4 and 3x2)  [linalg_error_solve_incompatible]
linalg.lu(st.randn(3))  # E: linalg.lu: expected at least 2 dimensions, got shape (3,)  [linalg_error_requires_at_least_2d]
st.reveal_shape(linalg.tensorinv(st.randn(4, 6, 8, 3), ind=2))  # N: Shape: (8, 3, 4, 6)
linalg.tensorinv(st.randn(4, 6, 8, 3), ind=1)  # E: linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got 144 != 4  [linalg_error_tensor_sizes]
st.reveal_shape(linalg.tensorsolve(st.randn(2, 3, 6), st.randn(2, 3)))  # N: Shape: (6,)
