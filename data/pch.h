// Precompiled header: the ATen headers every torch-using translation unit needs.
// Kept narrow on purpose (no <torch/torch.h>): the 2-core CI compiles each TU in ~30 s.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <c10/core/ScalarType.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <memory>
