#include "quasistep/core/lcp_problem_file.hpp"

#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "quasistep/core/json_node.hpp"
#include "quasistep/kernels/lemke.hpp"

namespace qs {
namespace {

using json_input::json;
using json_input::Node;

// The CLI's capacity for `lcp`: the largest problem a Lemke<kLcpCapacity> holds.
using CliLemke = Lemke<kLcpCapacity>;

LcpProblem read_problem(const json& doc) {
  const Node root(doc, "");
  root.expect_object({"M", "q", "free"});
  const Node qn = root.at("q");
  const size_t n = qn.array(1);
  if (n > static_cast<size_t>(CliLemke::kCapacity))
    qn.fail("has " + std::to_string(n) + " entries; this build solves LCPs up to n = " +
            std::to_string(CliLemke::kCapacity));
  LcpProblem p;
  p.q.resize(static_cast<Eigen::Index>(n));
  for (size_t i = 0; i < n; ++i) p.q[static_cast<Eigen::Index>(i)] = qn.item(i).number();
  p.M = root.at("M").matrix(static_cast<int>(n), static_cast<int>(n));
  if (auto f = root.get("free")) {
    p.free = f->integer(0);
    if (p.free > static_cast<int>(n)) f->fail("must be <= n = " + std::to_string(n));
  }
  return p;
}

nlohmann::ordered_json vector_json(const Eigen::Ref<const Eigen::VectorXd>& v) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(v[i]);
  return a;
}

}  // namespace

LcpProblem load_lcp_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JsonInputError("", "cannot read problem file " + json_input::json_quote(path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_lcp_problem(text);
}

LcpProblem read_lcp_problem(const std::string& text) { return read_problem(json_input::parse_document(text)); }

LcpSolution solve_lcp(const LcpProblem& p) {
  auto solver = std::make_unique<CliLemke>();
  LcpSolution out;
  SolverStats stats;
  if (p.free == 0) {
    auto r = std::make_unique<CliLemke::Result>();
    out.status = solver->solve(p.M, p.q, *r);
    stats = r->stats;
    if (out.status == Status::solved) {
      out.z = r->z;
      out.w = r->w;
    }
  } else {
    auto r = std::make_unique<CliLemke::MixedResult>();
    out.status = solver->solve_mixed(p.M, p.q, p.free, *r);
    stats = r->stats;
    if (out.status == Status::solved) {
      out.z.resize(p.q.size());
      out.z << r->u, r->z;
      out.w = p.M * out.z + p.q;  // the free rows' entries are the equality residuals
    }
  }
  out.pivots = stats.iterations;
  out.residual = stats.residual;
  return out;
}

std::string solve_lcp_to_json(const LcpProblem& p) {
  const LcpSolution s = solve_lcp(p);
  nlohmann::ordered_json out;  // keys in the documented order
  out["status"] = std::string(to_string(s.status));
  // A point is reported only when it is a verified solution.
  if (s.status == Status::solved) {
    out["z"] = vector_json(s.z);
    out["w"] = vector_json(s.w);
  } else {
    out["z"] = nullptr;
    out["w"] = nullptr;
  }
  out["pivots"] = s.pivots;
  out["residual"] = s.residual;
  return out.dump();
}

}  // namespace qs
