// The dense LP solver's adjacent extreme points: the vertices one pivot away from an
// optimal basis and the edges that are rays (DenseLp::for_each_adjacent_basis and
// for_each_adjacent_vertex in quasistep/kernels/dense_lp.hpp).
#include "quasistep/kernels/dense_lp.hpp"

#include <algorithm>
#include <cmath>

#include "dense_lp_internal.hpp"
#include "quasistep/kernels/input_checks.hpp"

namespace qs {

using dense_lp_internal::default_state;
using dense_lp_internal::kHarrisFraction;
using dense_lp_internal::kInf;
using dense_lp_internal::value_of;
using detail::max_abs;

void DenseLp::fill_neighbour(int q, int sigma, const Ratio& r) {
  // Edge direction over the structural columns, then the point at the end of the step.
  edge_.head(n_).setZero();
  edge_[q] = sigma;
  for (int i = 0; i < m_; ++i) {
    const int h = basis_.head[i];
    if (h < n_) edge_[h] = -sigma * alpha_[i];
  }
  point_.head(n_) = x_.head(n_);
  std::copy(basis_.head.begin(), basis_.head.begin() + m_, neighbour_basis_.head.begin());
  std::copy(basis_.state.begin(), basis_.state.begin() + n_ + m_, neighbour_basis_.state.begin());
  neighbour_basis_.rows = m_;
  neighbour_basis_.cols = n_;
  if (r.unbounded) return;
  if (r.theta > 0) point_.head(n_) += r.theta * edge_.head(n_);
  if (r.flip) {
    point_[q] = sigma > 0 ? up_[q] : lo_[q];
    neighbour_basis_.state[q] = sigma > 0 ? LpVarState::at_upper : LpVarState::at_lower;
    return;
  }
  const int h = basis_.head[r.row];
  const bool to_lower = sigma * alpha_[r.row] > 0;
  if (h < n_) point_[h] = to_lower ? lo_[h] : up_[h];
  neighbour_basis_.state[h] =
      (to_lower || lo_[h] == up_[h]) ? LpVarState::at_lower : LpVarState::at_upper;
  neighbour_basis_.state[q] = LpVarState::basic;
  neighbour_basis_.head[r.row] = q;
}

bool DenseLp::remember_neighbour(bool ray, int& count, bool& overflow) {
  // Rays are compared after scaling to max|edge| = 1, points as they are.
  const double scale = ray ? 1.0 / max_abs(edge_.head(n_)) : 1.0;
  const double tol = ray ? opt_.feasibility_tol : tol_p_;
  for (int k = 0; k < count; ++k) {
    if (static_cast<bool>(seen_is_ray_[k]) != ray) continue;
    const double diff = ray ? (seen_.col(k).head(n_) - scale * edge_.head(n_)).cwiseAbs().maxCoeff()
                            : (seen_.col(k).head(n_) - point_.head(n_)).cwiseAbs().maxCoeff();
    if (diff <= tol) return false;
  }
  if (count < cap_.vertex_neighbours) {
    if (ray) seen_.col(count).head(n_) = scale * edge_.head(n_);
    else seen_.col(count).head(n_) = point_.head(n_);
    seen_is_ray_[count] = ray ? 1 : 0;
    ++count;
  } else {
    overflow = true;  // reported, but later duplicates of it would be reported again
  }
  return true;
}

bool DenseLp::add_basis(int& count, bool& overflow) {
  // sorted_head_ holds a sorted head; add it to the visited bases unless present.
  for (int k = 0; k < count; ++k)
    if (std::equal(sorted_head_.begin(), sorted_head_.begin() + m_,
                   bases_.begin() + static_cast<std::ptrdiff_t>(k) * m_))
      return false;
  if (count >= cap_.vertex_bases) {
    overflow = true;
    return false;
  }
  std::copy(sorted_head_.begin(), sorted_head_.begin() + m_,
            bases_.begin() + static_cast<std::ptrdiff_t>(count) * m_);
  ++count;
  return true;
}

void DenseLp::sort_head_into_scratch(int replace_row, int with_col) {
  for (int i = 0; i < m_; ++i) sorted_head_[i] = basis_.head[i];
  if (replace_row >= 0) sorted_head_[replace_row] = with_col;
  std::sort(sorted_head_.begin(), sorted_head_.begin() + m_);
}

Status DenseLp::adjacent(const DenseLpProblem& p, const LpBasis& basis, bool vertices, void* ctx,
                         VisitFn visit) {
  if (check_problem(p, false) == Status::bad_input) return Status::bad_input;
  // Walk in other storage so that the last solve's basis stays intact (its other results
  // live in the output buffers, untouched here); `basis` may be that basis itself.
  const LpBasis* input = &basis;
  std::swap(basis_, saved_basis_);  // swaps buffers: no allocation
  if (input == &basis_) input = &saved_basis_;
  const auto finish = [&](Status s) {
    std::swap(basis_, saved_basis_);
    p_ = nullptr;
    return s;
  };
  begin(p);
  if (!load_basis(*input) || !refresh()) return finish(Status::bad_input);
  for (int i = 0; i < m_; ++i) {
    const int h = basis_.head[i];
    if (x_[h] < lo_[h] - tol_p_ || x_[h] > up_[h] + tol_p_) return finish(Status::bad_input);
  }
  vertex_.head(n_ + m_) = x_.head(n_ + m_);

  int n_bases = 0, n_seen = 0;
  bool overflow = false;
  if (vertices) {
    sort_head_into_scratch(-1, -1);
    add_basis(n_bases, overflow);
  }
  for (int k = 0; k < (vertices ? n_bases : 1); ++k) {
    if (k > 0) {
      // Another basis of the same vertex: its nonbasic columns sit at the vertex's values.
      for (int i = 0; i < m_; ++i)
        basis_.head[i] = bases_[static_cast<std::size_t>(k) * m_ + i];
      for (int j = 0; j < n_ + m_; ++j) {
        const double v = vertex_[j], lo = lo_[j], up = up_[j];
        LpVarState s = default_state(lo, up);
        if (lo > -kInf && up < kInf)
          s = (v - lo <= up - v) ? LpVarState::at_lower : LpVarState::at_upper;
        basis_.state[j] = s;
        x_[j] = value_of(s, lo, up);
      }
      for (int i = 0; i < m_; ++i) basis_.state[basis_.head[i]] = LpVarState::basic;
      if (!refresh()) continue;
    }
    for (int q = 0; q < n_; ++q) {
      const LpVarState s = basis_.state[q];
      if (s == LpVarState::basic || lo_[q] == up_[q]) continue;
      for (int dir = 0; dir < 2; ++dir) {
        int sigma = 0;
        if (s == LpVarState::at_lower) sigma = dir == 0 ? 1 : 0;
        else if (s == LpVarState::at_upper) sigma = dir == 0 ? -1 : 0;
        else sigma = dir == 0 ? 1 : -1;
        if (sigma == 0) continue;
        ftran(q);
        Ratio r = ratio_test(q, sigma, false);
        const bool degenerate =
            !r.unbounded &&
            r.theta * std::max(1.0, max_abs(alpha_.head(m_))) <= kHarrisFraction * tol_p_;
        if (degenerate) r.theta = 0.0;
        if (vertices && degenerate) {
          // Every row that blocks at step 0 gives another basis of this vertex.
          for (int i = 0; i < m_; ++i) {
            const double t = row_ratio(i, sigma, 0.0);
            if (t == kInf || t * std::max(1.0, std::abs(alpha_[i])) > kHarrisFraction * tol_p_)
              continue;
            sort_head_into_scratch(i, q);
            add_basis(n_bases, overflow);
          }
          continue;
        }
        fill_neighbour(q, sigma, r);
        if (vertices && !remember_neighbour(r.unbounded, n_seen, overflow)) continue;
        const int leaving = r.unbounded ? -1 : r.flip ? q : basis_.head[r.row];
        for (int j = 0; j < n_; ++j) {
          point_out_[j] = point_[j] * col_scale_[j];
          edge_out_[j] = edge_[j] * col_scale_[j];
        }
        const double objective = p.c.size() == n_ ? p.c.dot(point_out_.head(n_)) : 0.0;
        const LpNeighbour nb{q,
                             sigma,
                             leaving,
                             r.theta,
                             degenerate,
                             r.unbounded,
                             objective,
                             Eigen::Map<const Eigen::VectorXd>(point_out_.data(), n_),
                             Eigen::Map<const Eigen::VectorXd>(edge_out_.data(), n_),
                             neighbour_basis_};
        if (!visit(ctx, nb)) return finish(Status::solved);
      }
    }
  }
  return finish(overflow ? Status::iteration_limit : Status::solved);
}

}  // namespace qs
