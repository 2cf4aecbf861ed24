#!/usr/bin/python3
"""The rational fit of erf behind the vector GELU (engine/src/kernels/vec_int8_kernels.h).

    /usr/bin/python3 bench/engine/fit_erf.py [P_DEGREE Q_DEGREE]   (default 5 5)

erf(z) = z P(z^2) / Q(z^2) on [0, 4] (odd, so the same on [-4, 0]; erf(4) =
1 - 1.5e-8 rounds to 1 in float), Q(0) = 1. Fitted for the absolute error of
erf by linearized least squares (P - f Q = 0, f = erf(z) / z), reweighted by
1 / Q of the previous pass (Loeb) and by the error itself (Lawson) so the
fit tends to equal ripple. Prints the coefficients (constant term first),
the error in double, and the error of a float32 Horner evaluation, as the
kernel computes it (no FMA here, so slightly pessimistic).
"""
import sys
from math import erf

import numpy as np


def fit(p_degree, q_degree, passes=60):
    z = np.linspace(0, 4, 40001)[1:]
    t = z * z
    exact = np.vectorize(erf)(z)
    f = exact / z
    q_prev = np.ones_like(t)
    lawson = np.ones_like(t)
    for _ in range(passes):
        columns = [t**k for k in range(p_degree + 1)] + [-f * t**k for k in range(1, q_degree + 1)]
        a = np.stack(columns, 1)
        weight = z / q_prev * np.sqrt(lawson)
        solution, *_ = np.linalg.lstsq(a * weight[:, None], f * weight, rcond=None)
        p = solution[: p_degree + 1]
        q = np.concatenate([[1.0], solution[p_degree + 1 :]])
        q_prev = np.polyval(q[::-1], t)
        error = z * np.polyval(p[::-1], t) / q_prev - exact
        lawson = lawson * np.abs(error) / np.abs(error).mean()
        lawson /= lawson.mean()
    return p, q, np.abs(error).max(), q_prev.min()


def float32_error(p, q):
    z = np.linspace(-6, 6, 2000001).astype(np.float32)
    zc = np.clip(z, -4, 4)
    t = zc * zc
    num = np.float32(p[-1])
    for c in p[-2::-1]:
        num = num * t + np.float32(c)
    den = np.float32(q[-1])
    for c in q[-2::-1]:
        den = den * t + np.float32(c)
    return np.abs((zc * num / den).astype(np.float64) - np.vectorize(erf)(z.astype(np.float64))).max()


def main():
    p_degree, q_degree = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (5, 5)
    p, q, err, q_min = fit(p_degree, q_degree)
    print(f"P (constant first): {[float(c) for c in p]}")
    print(f"Q (constant first): {[float(c) for c in q]}")
    print(f"max |error| in double: {err:.3g}; min Q on the range: {q_min:.6f} (>= 1: the kernel's reciprocal holds)")
    print(f"max |error| evaluated in float32: {float32_error(p, q):.3g}")


if __name__ == "__main__":
    main()
