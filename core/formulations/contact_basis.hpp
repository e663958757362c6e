// Internal to the step derivatives of the vertical world's complementarity steps (Trinkle's
// LCP, trinkle_lcp_derivatives.cpp; Pang & Tedrake's MIQP, pang_tedrake_miqp_derivatives.cpp):
// which of a contact's rows hold with equality at the step's answer, the active rows whose
// persistence the derivative assumes.
//
// Both steps pose each contact's four complementarity pairs of Pang & Tedrake 2018, eqs.
// (12)-(17), over x = [dq; P_n; P_t+; P_t-; Gamma]:
//   gap  = phi + J_n dq                   >= 0  _|_  P_n   >= 0
//   rho+ = Gamma + slide, slide = J_t dq  >= 0  _|_  P_t+  >= 0
//   rho- = Gamma - slide                  >= 0  _|_  P_t-  >= 0
//   cone = mu P_n - P_t+ - P_t-           >= 0  _|_  Gamma >= 0
// Pair by pair, a sticking contact is degenerate (slide = Gamma = 0, so one of P_t+- and its
// rho are both zero) while the motion is smooth there, and an open contact's Gamma is any
// value >= |slide|. So the rows are chosen contact by contact:
//   open (P_n = 0, gap > 0):   P_n = P_t+ = P_t- = 0; Gamma, which nothing binds, is left free
//                              (it moves nothing);
//   closed (gap = 0, P_n > 0): gap = 0, and
//     sticking (|P_t| < mu P_n, slide = 0): rho+ = rho- = 0 and Gamma = 0;
//     sliding along +t (slide > 0, friction along -t at the cone's edge): P_t+ = 0, rho- = 0
//       (Gamma = slide), cone = 0; along -t the mirror;
//     frictionless (mu = 0): P_t+ = P_t- = 0.
// Margins are relative: an impulse against the step's impulse scale, a length against its
// displacement scale; a contact within kSwitchMargin of a switch (gap and P_n both zero: it
// touches without pushing; or slide and the cone's slack both zero: it is about to slip) is
// weak. A weak contact's rows are taken on both sides at once (ContactSide::both: gap = 0 and
// P_n = 0; sticking's and sliding's rows), the two-sided derivative when they stay consistent
// (the contact stays at its switch to first order); else on one side: separating (open, or
// sliding: the side on which it lets go, the Anitescu step's convention), or holding (closed,
// sliding where it slides and else sticking; or sticking) where the separating side does not
// determine the motion or (the MIQP) is not the optimum's.
#pragma once

#include <algorithm>
#include <cmath>

#include "quasistep/core/derivatives.hpp"

namespace qs {

/// One contact's four pairs at the answer: the variables, their rows' values, and the
/// caller's numbering of both (variables P_n, P_t+, P_t-, Gamma; rows gap, rho+, rho-, cone).
struct ContactPairs {
  double var_value[4] = {0, 0, 0, 0};
  double row_value[4] = {0, 0, 0, 0};
  double mu = 0;
  int var[4] = {0, 0, 0, 0};
  int row[4] = {0, 0, 0, 0};
};

enum class ContactNormal { open, closed, weak };
enum class ContactTangent { none, frictionless, sticking, slide_plus, slide_minus, weak_friction_plus, weak_friction_minus };
enum class ContactSide { both, separating, holding };

struct ContactState {
  ContactNormal normal = ContactNormal::open;
  ContactTangent tangent = ContactTangent::none;  // of a closed contact
  double margin = 1;                              // the smaller of its pairs' relative margins
  bool weak() const {
    return normal == ContactNormal::weak || tangent == ContactTangent::weak_friction_plus ||
           tangent == ContactTangent::weak_friction_minus;
  }
};

inline ContactState classify_contact(const ContactPairs& c, double impulse_scale, double displacement_scale) {
  ContactState st;
  const double impulse = c.var_value[0] / impulse_scale, gap = std::max(c.row_value[0], 0.0) / displacement_scale;
  st.margin = std::max(impulse, gap);
  st.normal = st.margin <= kSwitchMargin ? ContactNormal::weak : impulse > gap ? ContactNormal::closed : ContactNormal::open;
  if (st.normal == ContactNormal::open) return st;
  if (!(c.mu > 0)) {
    st.tangent = ContactTangent::frictionless;
    return st;
  }
  const double slide = c.row_value[1] - c.var_value[3];  // rho+ - Gamma
  const double stick = std::max(c.row_value[3], 0.0) / impulse_scale, slip = std::abs(slide) / displacement_scale;
  const double margin = std::max(stick, slip);
  if (st.normal == ContactNormal::weak) {
    // Its tangent as it would close (ContactSide::holding): sliding where it slides, else
    // sticking (its cone has no width yet, so only the slide tells).
    st.tangent = slip > kSwitchMargin ? (slide > 0 ? ContactTangent::slide_plus : ContactTangent::slide_minus)
                                      : ContactTangent::sticking;
    return st;
  }
  st.margin = std::min(st.margin, margin);
  if (margin <= kSwitchMargin)
    st.tangent = c.var_value[1] >= c.var_value[2] ? ContactTangent::weak_friction_plus : ContactTangent::weak_friction_minus;
  else if (stick >= slip)
    st.tangent = ContactTangent::sticking;
  else
    st.tangent = slide > 0 ? ContactTangent::slide_plus : ContactTangent::slide_minus;
  return st;
}

/// The contact's active rows for `side` (the file comment): row(k) for its row k (0 gap,
/// 1 rho+, 2 rho-, 3 cone) = 0, var(k) for its variable k (0 P_n, 1 P_t+, 2 P_t-, 3 Gamma) = 0.
template <class Row, class Var>
void contact_rows(const ContactState& st, ContactSide side, Row&& row, Var&& var) {
  const auto sliding = [&](bool plus) {  // slide along +t: friction along -t at the cone's edge
    var(plus ? 1 : 2);
    row(plus ? 2 : 1);
    row(3);
  };
  const auto sticking = [&] {
    row(1);
    row(2);
    var(3);
  };
  if (st.normal == ContactNormal::open || (st.normal == ContactNormal::weak && side != ContactSide::holding)) {
    if (st.normal == ContactNormal::weak && side == ContactSide::both) row(0);
    var(0);
    var(1);
    var(2);
    return;
  }
  row(0);
  switch (st.tangent) {
    case ContactTangent::frictionless:
      var(1);
      var(2);
      break;
    case ContactTangent::sticking: sticking(); break;
    case ContactTangent::slide_plus: sliding(true); break;
    case ContactTangent::slide_minus: sliding(false); break;
    case ContactTangent::weak_friction_plus:  // friction along +t: it would slide along -t
    case ContactTangent::weak_friction_minus:
      if (side != ContactSide::holding) sliding(st.tangent == ContactTangent::weak_friction_minus);
      if (side != ContactSide::separating) sticking();
      break;
    case ContactTangent::none: break;
  }
}

}  // namespace qs
