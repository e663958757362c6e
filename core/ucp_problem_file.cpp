#include "quasistep/core/ucp_problem_file.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

#include "quasistep/core/json_node.hpp"

namespace qs {
namespace {

using json_input::json;
using json_input::Node;

// The reader's size limit: the LP kernel holds the polyhedra densely (3 n_c columns each).
constexpr int kMaxContacts = 200;

Eigen::MatrixXd any_matrix(const Node& n) {
  const size_t rows = n.array(1);
  const Node first = n.item(0);
  if (!first.raw().is_array()) first.fail("must be a row (array of numbers)");
  const size_t cols = first.array(1);
  return n.matrix(static_cast<int>(rows), static_cast<int>(cols));
}

Eigen::VectorXd any_vector(const Node& n) {
  const size_t size = n.array(1);
  Eigen::VectorXd v(static_cast<Eigen::Index>(size));
  for (size_t i = 0; i < size; ++i) v[static_cast<Eigen::Index>(i)] = n.item(i).number();
  return v;
}

UcpData read(const json& doc) {
  const Node root(doc, "");
  root.expect_object({"P", "J_n", "J_t", "theta_dot", "alpha", "d", "g_obj", "g_man", "tau", "mu"});
  UcpData data;
  const Node P = root.at("P");
  data.P = any_matrix(P);
  if (data.P.rows() > 2 * kMaxContacts)
    P.fail("has " + std::to_string(data.P.rows()) + " rows; this build takes up to n_c = " + std::to_string(kMaxContacts));
  data.J_n = any_matrix(root.at("J_n"));
  data.J_t = any_matrix(root.at("J_t"));
  data.theta_dot = any_vector(root.at("theta_dot"));
  data.mu = any_vector(root.at("mu"));
  if (auto a = root.get("alpha")) {
    const size_t k = a->array(0);
    std::vector<int> alpha(k);
    for (size_t i = 0; i < k; ++i) alpha[i] = a->item(i).integer(0);
    data.alpha = std::move(alpha);
  }
  if (auto d = root.get("d")) data.d = any_vector(*d);
  if (auto g = root.get("g_obj")) data.g_obj = any_vector(*g);
  if (auto g = root.get("g_man")) data.g_man = any_vector(*g);
  if (auto t = root.get("tau")) data.tau = any_vector(*t);
  return data;
}

}  // namespace

void build_ucp_or_throw(Ucp& u, const UcpData& data) {
  if (u.build(data) != Status::solved) throw JsonInputError(u.error_field(), u.error_message());
}

UcpData read_ucp_problem(const std::string& text) {
  UcpData data = read(json_input::parse_document(text));
  Ucp u;
  build_ucp_or_throw(u, data);
  return data;
}

UcpData load_ucp_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JsonInputError("", "cannot read problem file " + json_input::json_quote(path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_ucp_problem(text);
}

// The answer `quasistep ucp` prints.
namespace {

nlohmann::ordered_json vec(const Eigen::Ref<const Eigen::VectorXd>& v) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(v[i]);
  return a;
}

constexpr double kMaxPoolBytes = 4.0 * (1L << 30);

std::string number(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

std::string empty_reason(char side) {
  if (side == 'X')
    return "X is empty: with the given joint velocities every object motion makes some contact penetrate "
           "(no v_n >= 0 satisfies eqs. (4)-(6))";
  return "Y is empty: no contact forces in the friction cones balance the loads (eqs. (2), (3), (7))";
}

void put_motion(nlohmann::ordered_json& out, const Ucp& u, const Eigen::VectorXd* x, const Eigen::VectorXd* y) {
  if (!x) {
    for (const char* k : {"x", "y", "q_dot", "theta_dot", "c_n", "c_t", "tau"}) out[k] = nullptr;
    return;
  }
  UcpMotion m = u.make_motion();
  u.recover(*x, *y, m);
  out["x"] = vec(*x);
  out["y"] = vec(*y);
  out["q_dot"] = vec(m.q_dot);
  out["theta_dot"] = vec(m.theta_dot);
  out["c_n"] = vec(m.c_n);
  out["c_t"] = vec(m.c_t);
  out["tau"] = vec(m.tau);
}

std::string enumerate(const Ucp& u, const UcpSolveOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const UcpEnumerationResult r = ucp_enumerate_modes(u, o.node_limit);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json out;
  // A complete enumeration that found nothing is a proof of infeasibility.
  const Status st = r.status == Status::solved && r.solutions.empty() ? Status::infeasible : r.status;
  out["status"] = std::string(to_string(st));
  out["method"] = "enumerate";
  out["count"] = r.solutions.size();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const UcpModeSolution& s : r.solutions) {
    nlohmann::ordered_json e;
    nlohmann::ordered_json modes = nlohmann::ordered_json::array();
    for (ContactMode m : s.modes) modes.push_back(to_string(m));
    e["modes"] = modes;
    put_motion(e, u, &s.x, &s.y);
    list.push_back(e);
  }
  out["solutions"] = list;
  out["nodes"] = r.nodes;
  out["lps"] = r.lps;
  if (st == Status::infeasible) out["reason"] = "no contact mode combination has a solution (enumeration complete)";
  if (st == Status::iteration_limit) out["reason"] = "node limit reached: the list is incomplete";
  if (st == Status::numerical_failure)
    out["reason"] =
        "a solution failed the check of eqs. (2)-(10), or an empty mode's Farkas certificate failed its check "
        "(numbers beyond what doubles resolve?): no list";
  out["time"] = seconds;
  return out.dump();
}

}  // namespace

std::string solve_ucp_to_json(const UcpData& data, const UcpSolveOptions& o) {
  Ucp u;
  build_ucp_or_throw(u, data);
  if (o.all) return enumerate(u, o);

  const auto start = std::chrono::steady_clock::now();
  nlohmann::ordered_json out;
  Status status = Status::not_run;
  std::string reason;
  const Eigen::VectorXd *x = nullptr, *y = nullptr;
  double residual = 0;
  std::optional<UcpBilinear> bilinear;
  std::optional<UcpExact> exact;
  std::string solved_by;

  if (o.method == "bilinear" || o.method == "auto") {
    bilinear.emplace(u);
    const UcpBilinearResult& r = bilinear->solve();
    status = r.status;
    if (r.status == Status::solved) {
      x = &r.x;
      y = &r.y;
      residual = r.check.worst;
      solved_by = "bilinear";
    } else if (r.status == Status::infeasible) {
      reason = empty_reason(r.empty_side);
    } else if (r.status == Status::not_found) {
      reason = "the bilinear algorithm stalled at x'y = " + number(r.product) + " after " +
               std::to_string(r.pairs) + " pairs and " + std::to_string(r.restarts) + " restarts";
    }
  }
  // auto: the exact method settles what the bilinear algorithm could not.
  if (o.method == "exact" || (o.method == "auto" && status == Status::not_found)) {
    UcpExactOptions eo;
    eo.max_nodes = o.node_limit;
    // The exact method allocates its node pools up front (quasistep/kernels/ucp.hpp UcpExactOptions):
    // per node a warm start (y, two LP bases) and two tree nodes. Refuse a limit whose pools
    // do not fit, rather than fail to allocate them.
    const double rows = static_cast<double>(std::max(u.A_x().rows(), u.A_y().rows()));
    const double per_node = 8.0 * u.n() + 2 * (4 * rows + (u.n() + rows) + 48) + 2 * (64.0 + u.n()) + 64;
    const double pool = per_node * static_cast<double>(o.node_limit);
    if (pool > kMaxPoolBytes)
      throw JsonInputError("", "--node-limit " + std::to_string(o.node_limit) + ": the exact method's node pools for n_c = " +
                                   std::to_string(u.n_c()) + " would need " + number(pool / (1 << 30)) +
                                   " GiB (at most 4 GiB); lower --node-limit");
    exact.emplace(u, eo);
    const UcpExactResult& r = exact->solve();
    status = r.status;
    reason.clear();
    if (r.status == Status::solved) {
      x = &r.x;
      y = &r.y;
      residual = r.check.worst;
      solved_by = "exact";
    } else if (r.status == Status::infeasible) {
      reason = r.empty_side ? empty_reason(r.empty_side)
                            : "no complementary pair: every branch-and-bound node closed (" +
                                  std::to_string(r.stats.nodes) + " nodes, " + std::to_string(r.stats.infeasible) +
                                  " empty, each by a checked Farkas certificate)";
    } else if (r.status == Status::iteration_limit) {
      reason = "node limit " + std::to_string(o.node_limit) + " reached without a solution or a proof";
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  out["status"] = std::string(to_string(status));
  out["method"] = o.method;
  if (!solved_by.empty()) out["solved_by"] = solved_by;
  put_motion(out, u, x, y);
  out["residual"] = residual;
  if (bilinear) {
    const UcpBilinearResult& r = bilinear->result();
    out["pairs"] = r.pairs;
    out["lps"] = r.lps;
    out["restarts"] = r.restarts;
    out["products"] = nlohmann::ordered_json(r.products);
  }
  if (exact) out["nodes"] = exact->result().stats.nodes;
  if (!reason.empty()) out["reason"] = reason;
  out["time"] = seconds;
  return out.dump();
}

}  // namespace qs
