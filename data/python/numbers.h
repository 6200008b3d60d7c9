// Bit-exact renditions of the Python/NumPy arithmetic eval.py ends with.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace foxeval {

// Python's round(x, 2) on a float: the decimal nearest to x's exact binary value, ties to even.
double python_round2(double x);

// NumPy's round(np.float64(x), 2): rint(x * 100) / 100 (not correctly rounded, unlike Python's).
double numpy_round2(double x);

// np.mean(values) for a list of floats: NumPy's pairwise summation divided by the count; NaN for
// an empty list (NumPy warns "Mean of empty slice").
double numpy_mean(const std::vector<double>& values);

// Python's repr(x) of a float (also str(x) and json.dumps' float form): the shortest digits that
// round-trip, fixed notation for exponents -4..15 ("1000000000000000.0", "0.0001"), else
// scientific with a signed two-digit exponent ("1e+16", "1e-05"); "nan", "inf", "-inf".
std::string python_float_repr(double x);

// Python's str() of a JSON scalar as json.loads gives it: str for strings, "15" for ints, repr for
// floats, "True"/"False", "None". foxeval::Error for arrays and objects (`what` names the value).
std::string python_str(const nlohmann::json& scalar, const std::string& what);

}  // namespace foxeval
