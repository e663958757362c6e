#include "quasistep/core/formulations/ucp/ucp_problem_file.hpp"

#include <fstream>
#include <iterator>
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

}  // namespace qs
