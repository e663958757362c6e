// Scalar functions of time for commands (joint velocities or efforts) and loads (force
// and torque components). One format serves both; a vector quantity is an array of
// schedules, one per component. See docs/scene-format.md, "Schedules".
#pragma once

#include <vector>

namespace qs {

/// A scalar function of time t (seconds):
///  - piecewise constant: values[k] on [breaks[k-1], breaks[k]), values[0] before
///    breaks[0], the last value from the last break on (so values.size() == breaks.size()+1);
///    a constant is the case with no breaks;
///  - plus a sum of sinusoids: amplitude * sin(frequency * t + phase), or cos.
/// Evaluation allocates nothing.
class Schedule {
 public:
  enum class Wave { sin, cos };
  struct Term {
    Wave wave = Wave::sin;
    double amplitude = 0;
    double frequency = 0;  // rad/s
    double phase = 0;      // rad
  };

  Schedule() = default;
  static Schedule constant(double value) { return Schedule({}, {value}, {}); }
  /// values.size() == breaks.size() + 1 and breaks sorted (asserted here); the scene
  /// reader also requires them strictly increasing and names the field when they are not.
  Schedule(std::vector<double> breaks, std::vector<double> values, std::vector<Term> terms);

  double operator()(double t) const;
  /// Becomes the constant `value` without allocating once the schedule holds one value (a
  /// world's commands in a batch travel in WorldParams instead; see quasistep/core/world_params.hpp).
  void set_constant(double value) {
    breaks_.clear();
    terms_.clear();
    values_.resize(1);
    values_[0] = value;
  }
  bool is_constant() const { return breaks_.empty() && terms_.empty(); }

 private:
  std::vector<double> breaks_;
  std::vector<double> values_{0.0};
  std::vector<Term> terms_;
};

}  // namespace qs
