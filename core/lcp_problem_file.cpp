#include "quasistep/core/lcp_problem_file.hpp"

#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "quasistep/core/json_node.hpp"
#include "quasistep/kernels/lcp_enumeration.hpp"
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

std::string solve_lcp_to_json(const LcpProblem& p, const LcpSolveOptions& o) {
  if (o.method == "lemke") return solve_lcp_to_json(p);
  if (o.method != "exact" && o.method != "auto")
    throw std::invalid_argument("method must be lemke, exact or auto, got " + o.method);
  if (o.node_limit < 1) throw std::invalid_argument("node limit must be >= 1, got " + std::to_string(o.node_limit));

  nlohmann::ordered_json out;  // keys in the documented order
  std::optional<LcpSolution> lemke;
  if (o.method == "auto") {
    lemke = solve_lcp(p);
    // Lemke's answer stands when it has one, or when the input itself is malformed; a ray,
    // the pivot limit or a failed check say nothing about the problem: the enumeration decides.
    if (lemke->status == Status::solved || lemke->status == Status::bad_input) {
      out["status"] = std::string(to_string(lemke->status));
      out["method"] = "lemke";
      const bool solved = lemke->status == Status::solved;
      out["z"] = solved ? vector_json(lemke->z) : nlohmann::ordered_json(nullptr);
      out["w"] = solved ? vector_json(lemke->w) : nlohmann::ordered_json(nullptr);
      out["residual"] = lemke->residual;
      out["pivots"] = lemke->pivots;
      if (!solved) out["reason"] = "the problem is malformed (sizes, or a number that is not finite)";
      return out.dump();
    }
  }
  LcpEnumerationOptions eo;
  eo.max_nodes = o.node_limit;
  eo.record_certificate = true;
  LcpEnumeration enumeration(kLcpCapacity, eo);
  const LcpEnumeration::Result& r = enumeration.solve(p.M, p.q, p.free);
  out["status"] = std::string(to_string(r.status));
  out["method"] = "exact";
  const bool solved = r.status == Status::solved;
  out["z"] = solved ? vector_json(r.x) : nlohmann::ordered_json(nullptr);
  out["w"] = solved ? vector_json(r.w) : nlohmann::ordered_json(nullptr);
  out["residual"] = solved ? r.residual : 0.0;
  if (lemke) {
    out["pivots"] = lemke->pivots;
    out["lemke_status"] = std::string(to_string(lemke->status));
  }
  out["nodes"] = r.stats.nodes;
  if (r.status == Status::infeasible) {
    out["reason"] = "no solution: every leaf of the search is empty, each by a Farkas certificate (" +
                    std::to_string(r.certificate.size()) + " leaves, " + std::to_string(r.stats.nodes) + " nodes)";
    nlohmann::ordered_json cert;
    cert["free"] = p.free;
    bool exact = true;
    nlohmann::ordered_json leaves = nlohmann::ordered_json::array();
    for (const LcpLeafCertificate& leaf : r.certificate) {
      nlohmann::ordered_json l;
      l["z_zero"] = leaf.z_zero;
      l["w_zero"] = leaf.w_zero;
      l["y"] = vector_json(leaf.y);
      l["exact"] = leaf.exact;
      exact = exact && leaf.exact;
      leaves.push_back(l);
    }
    cert["exact"] = exact;
    cert["leaves"] = leaves;
    out["certificate"] = cert;
  } else if (r.status == Status::iteration_limit) {
    out["reason"] = "node limit " + std::to_string(o.node_limit) + " reached without a solution or a proof";
  } else if (r.status == Status::numerical_failure) {
    out["reason"] = "a node's LP or the answer failed its check (numbers beyond what doubles resolve?)";
  } else if (r.status == Status::bad_input) {
    out["reason"] = "the problem is malformed (sizes, or a number that is not finite)";
  }
  return out.dump();
}

}  // namespace qs
