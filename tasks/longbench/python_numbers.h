// Bit-exact renditions of the Python/NumPy arithmetic eval.py ends with.
#pragma once
#include <vector>

namespace foxeval::longbench {

// Python's round(x, 2) on a float: the decimal nearest to x's exact binary value, ties to even.
double python_round2(double x);

// NumPy's round(np.float64(x), 2): rint(x * 100) / 100 (not correctly rounded, unlike Python's).
double numpy_round2(double x);

// np.mean(values) for a list of floats: NumPy's pairwise summation divided by the count; NaN for
// an empty list (NumPy warns "Mean of empty slice").
double numpy_mean(const std::vector<double>& values);

}  // namespace foxeval::longbench
