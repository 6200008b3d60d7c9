#!/usr/bin/env python3
"""Checks that foxeval's ruler_fwe word counts (tasks/ruler/fwe.cpp: the correctly rounded
1 / (k * k)) equal NumPy's for every num_words foxeval accepts, whichever power NumPy uses.

lm-eval's fwe_utils computes (num_words * k**-2.0 / zeta(2.0)).astype(int) with k = arange(1, V + 1).
NumPy's float64 power runs its SIMD (SVML) kernel on AVX-512 CPUs, which is 1 ulp off the correctly
rounded k**-2 for ~6% of k; elsewhere it calls libm pow (glibc: off for k = 1253, 2506, 2801 below
3000). Either way a truncated count can only differ where num_words * k**-2 / zeta(2) lies within an
ulp of an integer. This script tries every num_words in 1..LIMIT (fwe.h kFweVerifiedWords) against
every k <= KMAX where this NumPy or math.pow differ from 1 / (k * k); for k > KMAX the count is
num_words / (zeta(2) k**2) < 1 for all such num_words, 0 with any rounding. Exit 1 on any
difference.

    /opt/ruler-venv/bin/python tests/tools/ruler_fwe_power_check.py     # ~15 s
"""
import math
import sys

import numpy as np
from scipy.special import zeta

LIMIT = 2_000_000
KMAX = 3000


def main():
    z = zeta(2.0)
    assert z.hex() == "0x1.a51a6625307d3p+0", z.hex()
    k = np.arange(1, KMAX + 1)
    numpy_p = k ** -2.0
    libm_p = np.array([math.pow(float(x), -2.0) for x in k])
    exact_p = 1.0 / (k.astype(np.float64) * k)
    assert LIMIT / (z * (KMAX + 1) ** 2) < 1
    nw = np.arange(1, LIMIT + 1, dtype=np.int64)
    bad = 0
    for name, p in [("numpy", numpy_p), ("libm", libm_p)]:
        differ = np.nonzero(p != exact_p)[0]
        print(f"{name}: k**-2.0 differs from 1/(k*k) for {len(differ)} of k = 1..{KMAX}")
        for i in differ:
            a = (nw * p[i] / z).astype(int)
            b = (nw * exact_p[i] / z).astype(int)
            m = np.nonzero(a != b)[0]
            if len(m):
                bad += 1
                print(f"  k={i + 1}: counts differ for num_words {nw[m][:5].tolist()} ...")
    print(f"numpy {np.__version__}; num_words 1..{LIMIT}: {'counts equal' if not bad else 'COUNTS DIFFER'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
