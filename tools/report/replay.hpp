// The HTML replay of a run (`quasistep render`, `quasistep run --html`; docs/cli.md,
// "render"): one self-contained page (inline SVG and JavaScript, no network, no other file)
// that draws the scene's bodies at every row of a trajectory, with a play / pause / step
// control and a time slider, and, from a forces CSV, each step's contact points, normals,
// friction cones and impulse arrows. The numbers are computed here once (body poses by
// forward kinematics, contact frames at each step's linearisation point) and stored in the
// page as base64 float32 arrays; the page's script only draws them.
#pragma once

#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs::io {

/// A trajectory or forces file that does not fit the scene: what() is one line naming the
/// file (and line) and the cause.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a replay shows: rows of states as `run --out` writes them (row k is the state after
/// k steps), the stepper's extra columns (the equivalent contact point of Xie & Chakraborty's
/// model), and optionally each step's impulses as `run --forces` writes them.
struct ReplayInput {
  std::vector<double> t;  // per row, s
  std::vector<double> q;  // rows x n_q
  std::vector<std::string> extra_names;
  std::vector<double> extra;  // rows x extra_names.size(); NaN where a cell is empty
  struct Impulse {
    int step = 0;  // moves row step - 1 to row step
    int slot = 0;
    double normal = 0, tangent = 0;  // N s
  };
  std::vector<Impulse> impulses;
  bool has_forces = false;
  bool scaled_by_k = false;  // Halm & Posa's impulses, known up to the factor k
  /// One world's values when they differ from the scene's (a Monte Carlo sample): its
  /// friction (the cones), body sizes and fixed bodies' poses are drawn.
  std::optional<WorldParams> params;
  std::string stopped;       // the run's "stopped: ..." line, or ""
  std::string frames_from;   // where the rows come from, for the page's header
  int rows() const { return static_cast<int>(t.size()); }
};

/// Appends a state as the next row (its t and q).
void add_row(ReplayInput& replay, const State& state);
/// Appends the impulses of step `step` that `stepper` just solved: one per active slot.
void add_impulses(ReplayInput& replay, const Model& m, const Stepper& stepper, int step);

/// One row: the scene's initial state (a preview of the scene).
ReplayInput initial_replay(const Model& m);

/// Reads `run --out` output of this scene: the header must name its DOFs in order; row k
/// must be step k. `name` names the file in errors.
/// A file whose provenance line names another scene hash is refused.
ReplayInput read_trajectory_csv(std::istream& in, const std::string& name, const Scene& scene);

/// Adds `run --forces` output of the same run: steps within the trajectory, slots and pair
/// names of this scene.
void read_forces_csv(std::istream& in, const std::string& name, const Scene& scene, ReplayInput& replay);

/// The page. `provenance` is shown under the title (the scene and what produced the rows).
void write_replay_html(const Scene& scene, const ReplayInput& replay, const std::string& provenance, std::ostream& out);

/// For pages that hold replays (the Monte Carlo report): the widget's <style> and <script>
/// (once per page: the script defines qsReplay(root, data, options)), and one replay's data
/// as JSON, safe inside a <script> element.
void write_replay_style_and_script(std::ostream& out);
std::string replay_data_json(const Scene& scene, const ReplayInput& replay);

/// Text for HTML: & < > " ' as entities (the replay page and the Monte Carlo report).
std::string html_escape(std::string_view text);

/// The largest replay written: rows x bodies (the page stores 3 floats per body and row).
inline constexpr long kMaxReplayBodyRows = 20'000'000;

}  // namespace qs::io
