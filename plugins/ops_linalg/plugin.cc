// plugin.cc: the ops_linalg op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_linalg", "0.1.0",
            "dense linear algebra on Eigen, batched over leading dims: determinant, "
            "slogdeterminant, inverse, cholesky, triangular_solve, solve, cholesky_solve, svd, "
            "qr, eigh, lu, lu_unpack, matrix_rank, lstsq, multi_dot");
