// The scene reader's contacts: the pairs of shapes that may touch, listed or found
// ("auto"), and the model's size, counted and checked before any pair is built.

#include "scene_compiler.hpp"

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/json_node.hpp"
#include "quasistep/core/scene_reading.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace qs {

using json_input::json;
using json_input::json_quote;
using json_input::Node;

/// Rank for the default orientation of a pair: the normal points from the environment
/// and the manipulator toward the object (Pang & Tedrake 2018, Fig. 4b, Pang, Trinkle & Lo 1996, sec. 2).
int SceneCompiler::rank(BodyKind k) { return k == BodyKind::fixed ? 0 : k == BodyKind::linked ? 1 : 2; }

bool SceneCompiler::adjacent(int a, int b) const {
  auto parent_of = [&](int x) {
    return m_.bodies[x].kind == BodyKind::linked ? m_.joints[m_.bodies[x].parent_joint].parent : -2;
  };
  return parent_of(a) == b || parent_of(b) == a;
}

void SceneCompiler::check_pair(int a, int b, const Node& where) const {
  if (m_.bodies[a].kind == BodyKind::fixed && m_.bodies[b].kind == BodyKind::fixed)
    where.fail("bodies \"" + m_.bodies[a].name + "\" and \"" + m_.bodies[b].name + "\" are both fixed");
  for (int x : {a, b})
    if (m_.bodies[x].shapes.empty()) where.fail("body \"" + m_.bodies[x].name + "\" has no shapes to touch with");
}

void SceneCompiler::add_pair(int a, int b, double friction) {
  for (int sa : m_.bodies[a].shapes) {
    for (int sb : m_.bodies[b].shapes) {
      const Shape& A = m_.shapes[sa];
      const Shape& B = m_.shapes[sb];
      if (A.core == ShapeCore::half_plane && B.core == ShapeCore::half_plane) continue;
      ContactPair p;
      p.body_a = a;
      p.body_b = b;
      p.shape_a = sa;
      p.shape_b = sb;
      p.friction = friction;
      p.first_slot = m_.n_slots();
      const int pair = static_cast<int>(m_.pairs.size());
      auto features = [&](int feature_shape, int other_shape, bool on_b) {
        for (int i = 0; i < m_.shapes[feature_shape].feature_count(); ++i)
          m_.slots.push_back({pair, feature_shape, i, other_shape, on_b});
      };
      // One slot for a round feature; otherwise each shape's feature points against the
      // other's core (a half-plane has no feature points). See contacts.hpp.
      if (B.core == ShapeCore::point) features(sb, sa, true);
      else if (A.core == ShapeCore::point) features(sa, sb, false);
      else {
        features(sa, sb, false);
        features(sb, sa, true);
      }
      p.slot_count = m_.n_slots() - p.first_slot;
      m_.pairs.push_back(p);
    }
  }
}

// ---- the model's size, checked before any pair is built -------------------------------
//
// The dense buffers of a world grow with slots x DOFs (the contact Jacobians) or slots^2
// (anitescu_qp's LCP matrix), and "auto" pairs grow with bodies^2: a scene of 1,000 disks
// would need tens of GiB. The counts are added up first, without allocating, and a scene
// beyond kMaxWorldBytes is refused with the buffer that dominates.

SceneCompiler::ShapeCounts SceneCompiler::shape_counts(int b) const {
  ShapeCounts c;
  for (int s : m_.bodies[b].shapes) {
    const Shape& sh = m_.shapes[s];
    if (sh.core == ShapeCore::point) ++c.point;
    else if (sh.core == ShapeCore::half_plane) ++c.half_plane;
    else {
      ++c.other;
      c.features += sh.feature_count();
    }
  }
  return c;
}

/// The shape pairs and slots add_pair(a, b) makes: a point core meets any shape in one
/// slot; otherwise every feature point of either shape is one slot (a half-plane has none,
/// and two half-planes are no pair).
void SceneCompiler::count_pair(int a, int b) {
  const ShapeCounts& x = shape_counts_[a];
  const ShapeCounts& y = shape_counts_[b];
  const std::int64_t all_x = x.point + x.half_plane + x.other, all_y = y.point + y.half_plane + y.other;
  count_pairs_ += all_x * all_y - x.half_plane * y.half_plane;
  count_slots_ += x.point * all_y + all_x * y.point - x.point * y.point +
                  x.features * (y.half_plane + y.other) + (x.half_plane + x.other) * y.features;
}

/// The dense buffers one world of this model holds, as the steppers size them
/// (ContactWorkspace, and the formulation's own: its row's stepper_buffers), for `slots` slots.
SceneCompiler::Footprint SceneCompiler::footprint(double pairs, double slots) const {
  const double nq = m_.n_q(), d = sizeof(double);
  Footprint f;
  auto add = [&](double bytes, std::string what) {
    f.total += bytes;
    if (bytes > f.largest) {
      f.largest = bytes;
      f.what = std::move(what);
    }
  };
  add(pairs * sizeof(ContactPair) + slots * (sizeof(ContactSlot) + sizeof(ContactFrame<double>) + 4 * d),
      "the contact slots and their per-step results");
  // The formulation's own buffers, then the contact Jacobians (ContactWorkspace's J_n and J_t,
  // and whatever copies the formulation keeps).
  const FormulationInfo& row = formulation_info(m_.formulation);
  if (row.stepper_buffers) {
    std::vector<StepperBuffer> buffers;
    row.stepper_buffers(m_, slots, buffers);
    for (StepperBuffer& b : buffers) add(b.bytes, std::move(b.what));
  }
  add(row.jacobian_doubles * slots * nq * d,
      "the contact Jacobians (" + std::to_string(row.jacobian_doubles) + " x slots x DOFs doubles)");
  return f;
}

/// Refuses (at `where`) a model whose counted pairs and slots need more than the limit.
void SceneCompiler::check_size(const Node& where, bool at_least) const {
  const Footprint f = footprint(static_cast<double>(count_pairs_), static_cast<double>(count_slots_));
  if (f.total <= static_cast<double>(kMaxWorldBytes)) return;
  const char* more = at_least ? "at least " : "";
  const std::string all = gib_text(f.total) == gib_text(f.largest) ? "" : " (" + (more + gib_text(f.total)) + " in all)";
  where.fail(std::to_string(m_.bodies.size()) + " bodies give " + more + std::to_string(count_slots_) +
             " contact slots with " + std::to_string(m_.n_q()) + " DOFs: " + f.what + " would need " + more +
             gib_text(f.largest) + all + ", more than the limit of " + gib_text(static_cast<double>(kMaxWorldBytes)) +
             " per world; list fewer contact pairs");
}

void SceneCompiler::read_contacts(const std::optional<Node>& n) {
  std::optional<double> default_friction;
  std::optional<Node> pairs, exclude;
  if (n) {
    n->expect_object({"margin", "friction", "pairs", "exclude"});
    if (auto m = n->get("margin")) m_.contact_margin = m->nonnegative();
    if (auto f = n->get("friction")) default_friction = f->nonnegative();
    pairs = n->get("pairs");
    exclude = n->get("exclude");
  }
  static const json kEmptyObject = json::object();
  const Node where = n ? *n : Node(kEmptyObject, "contacts");
  auto friction_or_default = [&](const Node& at) {
    if (!default_friction) at.fail("missing friction (give it here or as contacts.friction)");
    return *default_friction;
  };
  std::set<std::pair<int, int>> seen;
  auto key = [](int a, int b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
  shape_counts_.clear();
  for (size_t b = 0; b < m_.bodies.size(); ++b) shape_counts_.push_back(shape_counts(static_cast<int>(b)));
  count_pairs_ = count_slots_ = 0;

  if (pairs && !(pairs->raw().is_string() && pairs->raw() == "auto")) {
    if (exclude) exclude->fail("only with \"pairs\": \"auto\"");
    struct Listed {
      int a, b;
      double mu;
    };
    std::vector<Listed> listed;
    const size_t k = pairs->array();
    for (size_t i = 0; i < k; ++i) {
      const Node p = pairs->item(i);
      p.expect_object({"bodies", "friction"});
      const Node bodies = p.at("bodies");
      if (bodies.array() != 2) bodies.fail("must name exactly two bodies");
      const int a = body_index(bodies.item(0), false);
      const int b = body_index(bodies.item(1), false);
      if (a == b) bodies.fail("a body cannot touch itself");
      if (!seen.insert(key(a, b)).second) bodies.fail("pair listed twice");
      const double mu = p.has("friction") ? p.child("friction").nonnegative() : friction_or_default(p);
      check_pair(a, b, bodies);
      count_pair(a, b);
      listed.push_back({a, b, mu});
    }
    check_size(*pairs, false);
    for (const Listed& l : listed) add_pair(l.a, l.b, l.mu);
    check_counted();
    return;
  }
  // "auto" (the default): every shape pair of bodies that can move relative to each other,
  // except a joint's parent and child and the excluded pairs.
  if (exclude) {
    const size_t k = exclude->array();
    for (size_t i = 0; i < k; ++i) {
      const Node e = exclude->item(i);
      if (e.array() != 2) e.fail("must name exactly two bodies");
      const int a = body_index(e.item(0), false), b = body_index(e.item(1), false);
      if (a == b) e.fail("must name two different bodies");
      seen.insert(key(a, b));
    }
  }
  // Bodies with shapes, and those of them that move: a fixed body pairs only with these,
  // so the loops visit (about) the pairs they make, not every pair of bodies.
  std::vector<int> shaped, moving;
  for (size_t b = 0; b < m_.bodies.size(); ++b) {
    if (m_.bodies[b].shapes.empty()) continue;
    shaped.push_back(static_cast<int>(b));
    if (m_.bodies[b].kind != BodyKind::fixed) moving.push_back(static_cast<int>(b));
  }
  // Every pair (i, j), i < j, in that order (the slot numbering follows it); stops early
  // when visit returns false.
  auto for_each_auto_pair = [&](auto&& visit) {
    for (int i : shaped) {
      const std::vector<int>& partners = m_.bodies[i].kind == BodyKind::fixed ? moving : shaped;
      for (auto it = std::upper_bound(partners.begin(), partners.end(), i); it != partners.end(); ++it) {
        int a = i, b = *it;
        if (seen.count(key(a, b)) || adjacent(a, b)) continue;
        if (rank(m_.bodies[b].kind) < rank(m_.bodies[a].kind)) std::swap(a, b);
        if (!visit(a, b)) return;
      }
    }
  };
  // Counting stops once the size is hopeless (1,024 times the limit), so that even a
  // scene of a million bodies is refused at once; the message then says "at least".
  bool stopped = false;
  std::int64_t visits = 0;
  for_each_auto_pair([&](int a, int b) {
    friction_or_default(where);
    count_pair(a, b);
    if ((++visits & 0xffff) == 0 &&
        footprint(static_cast<double>(count_pairs_), static_cast<double>(count_slots_)).total >
            static_cast<double>(kMaxWorldBytes) * 1024.0) {
      stopped = true;
      return false;
    }
    return true;
  });
  check_size(where, stopped);
  for_each_auto_pair([&](int a, int b) {
    add_pair(a, b, *default_friction);
    return true;
  });
  check_counted();
}

/// The size check is only as good as the count: every scene read checks it.
void SceneCompiler::check_counted() const {
  if (count_pairs_ != static_cast<std::int64_t>(m_.pairs.size()) || count_slots_ != m_.n_slots())
    throw std::logic_error("scene reader: counted " + std::to_string(count_pairs_) + " pairs and " +
                           std::to_string(count_slots_) + " slots, built " + std::to_string(m_.pairs.size()) +
                           " and " + std::to_string(m_.n_slots()));
}

}  // namespace qs
