// The MIQP step's memory between steps: its layout in the world's state, the key that says
// whether a step may reuse it, and what is stored and loaded.
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "pang_tedrake_miqp_problem.hpp"

namespace qs {

int PangTedrakeMiqp::active_contacts() const { return problem_->nc; }

int PangTedrakeMiqp::answer_capacity(const Model& m) { return m.n_q() + 4 * std::min(kMaxContacts, m.n_slots()); }

int PangTedrakeMiqp::key_capacity(const Model& m) {
  return 4 + std::min(kMaxContacts, m.n_slots()) * (4 + 2 * m.n_q()) + m.n_q() + m.n_a;
}

PangTedrakeMiqp::MemoryLayout PangTedrakeMiqp::MemoryLayout::of(const Model& m) {
  const int k = std::min(kMaxContacts, m.n_slots()), cap = answer_capacity(m);
  MemoryLayout l;
  l.phi_bar = 0;
  l.warm_count = l.phi_bar + m.n_slots();
  l.warm_slots = l.warm_count + 1;
  l.warm_active = l.warm_slots + k;
  l.warm_bound = l.warm_active + 5 * k;
  l.warm_point = l.warm_bound + cap;
  l.memo_length = l.warm_point + cap;
  l.memo_key = l.memo_length + 1;
  l.memo_answer = l.memo_key + key_capacity(m);
  l.memo_cost = l.memo_answer + cap;
  l.sides = l.memo_cost + 1;
  l.polish = l.sides + 4 * m.n_slots();
  l.size = l.polish + 1;
  return l;
}

int PangTedrakeMiqp::memory_size(const Model& m) { return MemoryLayout::of(m).size; }

void PangTedrakeMiqp::start_memory(const Model& m, const double*, double* memory) {
  std::fill(memory, memory + memory_size(m), std::numeric_limits<double>::infinity());
}

int PangTedrakeMiqp::memo_key(const Model& m, const WorldParams& wp) {
  // Everything build() poses the step's problem from (and stage 2 reads): h, K, the bound's
  // variant, per active contact its slot, friction, gap, elastic bound (under `previous`
  // from the memory) and Jacobian rows, the generalized force and the command.
  const Problem& p = *problem_;
  double* k = key_.data();
  int len = 0;
  k[len++] = wp.h;
  k[len++] = wp.model_gain;
  k[len++] = formulation_params_or_default<PangTedrakeMiqpParams>(m).elastic_bound_previous ? 1.0 : 0.0;
  k[len++] = p.nc;
  for (int c = 0; c < p.nc; ++c) {
    const int i = record_.slots[c];
    k[len++] = i;
    k[len++] = wp.slot_friction(m, i);
    k[len++] = record_.geometry.frame[i].phi;
    k[len++] = p.b_in[4 * p.nc + c];
    for (int e = 0; e < m.n_q(); ++e) k[len++] = record_.geometry.J_n(i, e);
    for (int e = 0; e < m.n_q(); ++e) k[len++] = record_.geometry.J_t(i, e);
  }
  for (int e = 0; e < m.n_q(); ++e) k[len++] = tau_[e];
  for (int a = 0; a < m.n_a; ++a) k[len++] = dqa_bar_[a];
  return len;
}

bool PangTedrakeMiqp::memo_matches(const State& s) const {
  const int len = key_length_;
  if (s.memory.size() != memory_.size) return false;
  const double* memory = s.memory.data();
  // Bitwise (memcmp: -0.0 is not 0.0 here), so the problem is exactly the same one.
  return memory[memory_.memo_length] == static_cast<double>(len) &&
         std::memcmp(memory + memory_.memo_key, key_.data(), static_cast<std::size_t>(len) * sizeof(double)) == 0;
}

bool PangTedrakeMiqp::load_root_warm(const Model& m, const State& s) {
  const Problem& p = *problem_;
  if (s.memory.size() != memory_.size || p.nc == 0) return false;
  const int k = std::min(kMaxContacts, m.n_slots()), nd = m.n_u + m.n_a;
  const double* memory = s.memory.data();
  const double count = memory[memory_.warm_count];
  if (!(count >= 1 && count <= k)) return false;  // none (+inf)
  const int prev_nc = static_cast<int>(count);
  const double* slots = memory + memory_.warm_slots;
  const double* active = memory + memory_.warm_active;
  const double* bound = memory + memory_.warm_bound;
  const double* x = memory + memory_.warm_point;
  const auto state = [](double v) { return static_cast<QpBoundState>(static_cast<int>(v)); };
  // Mapped by slot: a contact of both steps takes its rows, bounds and impulses from the
  // last step; a new one starts with its rows inactive and its impulses at zero.
  QpWorkingSet& ws = root_warm_;
  ws.rows = p.m_in;
  ws.cols = p.n;
  for (int j = 0; j < nd; ++j) {
    ws.bound[j] = state(bound[j]);
    ws.x[j] = x[j];
  }
  int shared = 0;
  for (int c = 0; c < p.nc; ++c) {
    int pc = -1;
    for (int d = 0; d < prev_nc && pc < 0; ++d)
      if (slots[d] == static_cast<double>(record_.slots[c])) pc = d;
    for (int t = 0; t < 4; ++t) {
      const int var = p.pair_var(c, t), prev_var = nd + t * prev_nc + pc;
      ws.active[p.pair_row(c, t)] = pc >= 0 && active[t * prev_nc + pc] != 0.0;
      ws.bound[var] = pc >= 0 ? state(bound[prev_var]) : QpBoundState::at_lower;
      ws.x[var] = pc >= 0 ? x[prev_var] : 0.0;
    }
    ws.active[4 * p.nc + c] = pc >= 0 && active[4 * prev_nc + pc] != 0.0;  // elastic bound
    shared += pc >= 0;
  }
  ws.has_point = true;
  ws.point_is_guess = true;  // the last step's point, in this step's moved data
  return shared > 0;
}

void PangTedrakeMiqp::store_memory(const Model& m, State& s) {
  const Problem& p = *problem_;
  const MemoryLayout& l = memory_;
  if (s.memory.size() != l.size) s.memory.setConstant(l.size, std::numeric_limits<double>::infinity());  // once
  double* memory = s.memory.data();
  for (int i = 0; i < m.n_slots(); ++i) memory[l.phi_bar + i] = phi_bar_[i];
  memory[l.polish] = polish_record_;
  // The answer's side of each pair (0: slot inactive), for the next step's polish.
  double* sides = memory + l.sides;
  for (int i = 0; i < m.n_slots(); ++i) {
    const int c = p.contact_of_slot[i];
    for (int t = 0; t < 4; ++t)
      sides[4 * i + t] = c < 0 ? 0.0 : static_cast<double>(static_cast<int>(p.side_at(c, t, x_)));
  }
  // This step's key and answer, for the next step (memo_matches()).
  const int len = key_length_;  // this step's key (step())
  memory[l.memo_length] = len;
  std::copy(key_.data(), key_.data() + len, memory + l.memo_key);
  std::copy(x_.data(), x_.data() + p.n, memory + l.memo_answer);
  memory[l.memo_cost] = cost_;
  const QpWorkingSet& ws = stage1_answer_;
  if (!ws.has_point || ws.rows != p.m_in || ws.cols != p.n) {
    memory[l.warm_count] = std::numeric_limits<double>::infinity();  // nothing to hand on
    return;
  }
  memory[l.warm_count] = p.nc;
  for (int c = 0; c < p.nc; ++c) memory[l.warm_slots + c] = record_.slots[c];
  double* active = memory + l.warm_active;
  double* bound = memory + l.warm_bound;
  double* x = memory + l.warm_point;
  for (int i = 0; i < p.m_in; ++i) active[i] = ws.active[i] ? 1.0 : 0.0;
  for (int j = 0; j < p.n; ++j) {
    bound[j] = static_cast<double>(static_cast<int>(ws.bound[j]));
    x[j] = ws.x[j];
  }
}

PangTedrakeMiqp::View PangTedrakeMiqp::view() const {
  const Problem& p = *problem_;
  return View{p.root_problem(), p.constant, p.nu, p.na, p.nc, record_.slots};
}

}  // namespace qs
