// Randomized ("bundled") derivatives of a step: the derivatives of the step smoothed by a
// Gaussian perturbation of its command, estimated from samples (Suh, Pang & Tedrake,
// "Bundled Gradients through Contact via Randomized Smoothing", IEEE RA-L 2022; Pang, Suh,
// Yang & Tedrake, IEEE T-RO 2023, plan with them). With w_i ~ N(0, sigma^2 I) over the
// commands,
//   first order:   B1 = (1/N) sum_i B(x, u + w_i),  A1 = (1/N) sum_i A(x, u + w_i)
//                  (the mean of the exact derivatives at the perturbed commands);
//   zeroth order:  B0 = argmin_B sum_i |f(x, u + w_i) - f(x, u) - B w_i|^2
//                  = (sum_i df_i w_i') (sum_i w_i w_i')^-1, least squares on the steps alone
//                  (Suh et al. 2022's zeroth-order estimator, in its least-squares form);
// each with its standard error per entry (of the mean; of the regression coefficient), and
// the smoothed next state E[f(x, u + w)]. A sample whose step fails, or has no derivative, is
// left out and counted.
//
// Deterministic: sample i's perturbation is drawn from the counter-based stream of
// quasistep/batch/sampling.hpp (key: the seed and the command's index; counter: i), each
// sample is stepped on a stepper of its thread, and the sums are taken in sample order, so
// the result is bitwise the same for any thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

struct BundledOptions {
  int samples = 100;       // N >= 2 (the zeroth-order fit needs N > n_a)
  double sigma = 0.0;      // standard deviation of each command's perturbation (> 0; m/s or rad/s)
  std::uint64_t seed = 0;  // the perturbations' stream
};

struct BundledDerivatives {
  /// solved, or why not (detail): too few samples solved, or bad options; the estimates are
  /// then NaN (or empty before any call solved).
  Status status = Status::not_run;
  std::string detail;
  int used = 0;     // samples whose step solved with a derivative (the estimates' N)
  int failed = 0;   // samples left out
  Eigen::MatrixXd A1, B1;              // first order (n_x x n_x, n_x x n_a)
  Eigen::MatrixXd A1_error, B1_error;  // their standard errors, per entry
  Eigen::MatrixXd B0, B0_error;        // zeroth order (least squares) and its standard errors
  Eigen::VectorXd next;                // E[f(x, u + w)]: the smoothed next state (n_x)
};

class BundledStep {
 public:
  /// Throws BatchError when the model's formulation has no step derivatives, or options.threads < 0.
  explicit BundledStep(std::shared_ptr<const Model> model, BatchOptions options = {});
  ~BundledStep();
  BundledStep(const BundledStep&) = delete;
  BundledStep& operator=(const BundledStep&) = delete;

  /// The bundled derivatives of the step from `state` under `params` (params.commanded with
  /// params.command = u, or the scene's schedules at the middle of the step); the result is
  /// the BundledStep's own, overwritten by the next call.
  const BundledDerivatives& compute(const State& state, const WorldParams& params, const BundledOptions& options);

 private:
  struct Workers;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Workers> workers_;
  BundledDerivatives result_;
  // Per sample: the next state's change from the unperturbed step (n_x), w (n_a), A and B.
  std::vector<double> dx_, w_, A_, B_;
  std::vector<char> ok_;
};

}  // namespace qs
