// Helpers of the scene reader that the formulations' parameter readers share
// (core/formulations/*/*_params.cpp). Internal to core.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <string>

#include "quasistep/core/json_node.hpp"

namespace qs {

/// A size x size symmetric positive definite matrix at n; fails at n otherwise.
Eigen::MatrixXd read_spd(const json_input::Node& n, int size);
/// bytes as "1.5 GiB", for size-limit messages.
std::string gib_text(double bytes);

}  // namespace qs
