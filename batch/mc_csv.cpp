#include "quasistep/batch/mc_csv.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <istream>
#include <map>
#include <numeric>
#include <ostream>
#include <sstream>

#include "quasistep/core/csv_cells.hpp"

namespace qs::io {
namespace {

constexpr const char* kFormat = "mc-samples 1";

/// Shortest text that reads back to the same double.
std::string exact(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The form the CSV header writes and read_mc_csv reads back (exact numbers).
std::string distribution_csv_text(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::uniform: return "uniform low=" + exact(d.low) + " high=" + exact(d.high);
    case Distribution::Kind::normal: return "normal mean=" + exact(d.mean) + " stddev=" + exact(d.stddev);
    case Distribution::Kind::truncated_normal:
      return "truncated_normal mean=" + exact(d.mean) + " stddev=" + exact(d.stddev) + " low=" + exact(d.low) +
             " high=" + exact(d.high);
  }
  return "unknown";
}


bool parse_double(const std::string& s, double& v) { return parse_finite(s, v); }

template <class Int>
bool parse_int(const std::string& s, Int& v) {
  return parse_integer(s, v);
}

/// The goal region from a criterion text "... at [x, y, theta] +- [dx, dy, dtheta]" (the
/// numbers written exactly, batch/monte_carlo.cpp describe()).
bool parse_goal(const std::string& text, std::array<double, 3>& center, std::array<double, 3>& tolerance) {
  const auto read3 = [&](std::size_t open, std::array<double, 3>& v) -> std::size_t {
    const std::size_t close = text.find(']', open);
    if (open == std::string::npos || close == std::string::npos) return std::string::npos;
    const auto parts = split_fields(text.substr(open + 1, close - open - 1), ',');
    if (parts.size() != 3) return std::string::npos;
    for (int k = 0; k < 3; ++k) {
      std::string p = parts[k];
      if (!p.empty() && p.front() == ' ') p.erase(0, 1);
      if (!parse_double(p, v[k])) return std::string::npos;
    }
    return close;
  };
  const std::size_t at = text.find(" at [");
  if (at == std::string::npos) return false;
  const std::size_t c = read3(at + 4, center);
  if (c == std::string::npos || text.compare(c, 6, "] +- [") != 0) return false;
  const std::size_t t = read3(c + 5, tolerance);
  return t == text.size() - 1;
}

Status status_from_string(const std::string& w, bool& ok) {
  for (int k = 0; k <= static_cast<int>(Status::not_run); ++k)
    if (to_string(static_cast<Status>(k)) == w) {
      ok = true;
      return static_cast<Status>(k);
    }
  ok = false;
  return Status::not_run;
}

}  // namespace

void write_mc_csv(const McRun& run, const std::string& provenance, std::ostream& o) {
  write_mc_csv_header(run.study, run.shard, provenance, o);
  write_mc_csv_rows(run.records, o);
}

void write_mc_csv_header(const McStudy& st, int shard, const std::string& provenance, std::ostream& o) {
  o << provenance << "\n";
  o << "# format: " << kFormat << "\n";
  o << "# scene_hash: " << st.scene_hash << "\n";
  o << "# model: " << st.model << "\n";
  o << "# seed: " << st.seed << "\n";
  o << "# samples: " << st.samples << "\n";
  o << "# shard: " << shard << "/" << st.shards << "\n";
  o << "# success: " << (st.success_kind == SuccessCriterion::Kind::lifted ? "lifted" : "goal_region") << " "
    << st.object << " | " << st.success << "\n";
  for (std::size_t p = 0; p < st.parameters.size(); ++p)
    o << "# parameter: " << st.parameters[p] << " " << distribution_csv_text(st.distributions[p]) << "\n";
  o << "sample";
  for (const std::string& p : st.parameters) o << "," << p;
  o << ",outcome,x,y,theta,failed_step,status\n";
}

void write_mc_csv_rows(const McRecords& r, std::ostream& o) {
  const int np = r.parameter_count;
  for (long i = 0; i < r.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    o << r.sample[u];
    for (int p = 0; p < np; ++p) o << "," << exact(r.values[u * np + p]);
    o << "," << to_string(r.outcome[u]);
    for (double v : r.final_pose[u]) o << "," << exact(v);
    o << "," << r.failed_step[u] << "," << to_string(r.status[u]) << "\n";
  }
}

McShard read_mc_csv(std::istream& in, const std::string& name) {
  McShard sh;
  sh.file = name;
  McStudy& st = sh.study;
  long line_no = 0;
  const auto fail = [&](const std::string& why) -> McCsvError {
    return McCsvError(name + ":" + std::to_string(line_no) + ": " + why);
  };
  std::string line;
  std::map<std::string, std::string> header;
  std::array<double, 3> goal_center{}, goal_tolerance{};
  std::vector<std::string> parameter_lines;
  // Header: the provenance line, then "# key: value" lines until the column line.
  const std::string not_mc = "not a sample CSV of quasistep mc (it starts with \"# quasistep \" and has \"# format: " +
                             std::string(kFormat) + "\")";
  if (!std::getline(in, line)) throw McCsvError(name + ": empty file, " + not_mc);
  ++line_no;
  if (line.rfind("# quasistep ", 0) != 0) throw fail(not_mc);
  std::string columns;
  long columns_line = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("# ", 0) != 0) {
      columns = line;
      columns_line = line_no;
      break;
    }
    const auto colon = line.find(": ");
    if (colon == std::string::npos) throw fail("header line without \"key: value\"");
    const std::string key = line.substr(2, colon - 2), value = line.substr(colon + 2);
    if (key == "parameter") parameter_lines.push_back(value);
    else if (!header.emplace(key, value).second) throw fail("header key \"" + key + "\" given twice");
  }
  if (header["format"] != kFormat) throw McCsvError(name + ": " + not_mc);
  for (const char* key : {"scene_hash", "model", "seed", "samples", "shard", "success"})
    if (!header.count(key)) throw McCsvError(name + ": header has no \"" + key + "\" line");
  st.scene_hash = header["scene_hash"];
  st.model = header["model"];
  if (!parse_int(header["seed"], st.seed)) throw McCsvError(name + ": header seed \"" + header["seed"] + "\" is not an integer");
  if (!parse_int(header["samples"], st.samples) || st.samples < 1)
    throw McCsvError(name + ": header samples \"" + header["samples"] + "\" is not a positive integer");
  {
    const auto parts = split_fields(header["shard"], '/');
    if (parts.size() != 2 || !parse_int(parts[0], sh.shard) || !parse_int(parts[1], st.shards) || st.shards < 1 ||
        sh.shard < 0 || sh.shard >= st.shards)
      throw McCsvError(name + ": header shard \"" + header["shard"] + "\" is not K/M with 0 <= K < M");
  }
  {
    const std::string& s = header["success"];
    const auto bar = s.find(" | ");
    const auto sp = s.find(' ');
    if (bar == std::string::npos || sp == std::string::npos || sp > bar)
      throw McCsvError(name + ": header success \"" + s + "\" is not \"KIND OBJECT | criterion\"");
    const std::string kind = s.substr(0, sp);
    if (kind == "lifted") st.success_kind = SuccessCriterion::Kind::lifted;
    else if (kind == "goal_region") st.success_kind = SuccessCriterion::Kind::goal_region;
    else throw McCsvError(name + ": header success kind \"" + kind + "\" is not lifted or goal_region");
    st.object = s.substr(sp + 1, bar - sp - 1);
    st.success = s.substr(bar + 3);
    if (st.success_kind == SuccessCriterion::Kind::goal_region && !parse_goal(st.success, goal_center, goal_tolerance))
      throw McCsvError(name + ": header success \"" + s + "\" does not give the goal region as \"at [x, y, theta] +- [dx, dy, dtheta]\"");
  }
  for (const std::string& pl : parameter_lines) {
    const auto words = split_fields(pl, ' ');
    const auto bad = [&] { return McCsvError(name + ": header parameter \"" + pl + "\" is not PATH DISTRIBUTION key=value..."); };
    if (words.size() < 2) throw bad();
    Distribution d;
    std::map<std::string, double> kv;
    for (std::size_t i = 2; i < words.size(); ++i) {
      const auto eq = words[i].find('=');
      double v = 0;
      if (eq == std::string::npos || !parse_double(words[i].substr(eq + 1), v)) throw bad();
      kv[words[i].substr(0, eq)] = v;
    }
    const auto need = [&](std::initializer_list<const char*> keys) {
      if (kv.size() != keys.size()) throw bad();
      for (const char* k : keys)
        if (!kv.count(k)) throw bad();
    };
    if (words[1] == "uniform") {
      need({"low", "high"});
      d.kind = Distribution::Kind::uniform;
    } else if (words[1] == "normal") {
      need({"mean", "stddev"});
      d.kind = Distribution::Kind::normal;
    } else if (words[1] == "truncated_normal") {
      need({"mean", "stddev", "low", "high"});
      d.kind = Distribution::Kind::truncated_normal;
    } else {
      throw bad();
    }
    d.low = kv.count("low") ? kv["low"] : 0.0;
    d.high = kv.count("high") ? kv["high"] : 0.0;
    d.mean = kv.count("mean") ? kv["mean"] : 0.0;
    d.stddev = kv.count("stddev") ? kv["stddev"] : 0.0;
    if ((d.kind != Distribution::Kind::normal && !(d.high > d.low)) ||
        (d.kind != Distribution::Kind::uniform && !(d.stddev > 0)))
      throw McCsvError(name + ": header parameter \"" + pl + "\": needs low < high and stddev > 0");
    st.parameters.push_back(words[0]);
    st.distributions.push_back(d);
  }
  if (st.parameters.empty()) throw McCsvError(name + ": header names no parameter");

  // Columns, then the rows.
  const int np = static_cast<int>(st.parameters.size());
  std::string expected = "sample";
  for (const std::string& p : st.parameters) expected += "," + p;
  expected += ",outcome,x,y,theta,failed_step,status";
  line_no = columns_line;
  if (columns_line == 0) throw McCsvError(name + ": no column line after the header");
  if (columns != expected) throw fail("column line does not match the header's parameters (expected \"" + expected + "\")");
  McRecords& r = sh.records;
  r.parameter_count = np;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) throw fail("empty line");
    const auto f = split_fields(line, ',');
    if (static_cast<int>(f.size()) != np + 7)
      throw fail("expected " + std::to_string(np + 7) + " fields, got " + std::to_string(f.size()));
    long sample = 0;
    if (!parse_int(f[0], sample) || sample < 0) throw fail("sample \"" + f[0] + "\" is not an index");
    r.sample.push_back(sample);
    for (int p = 0; p < np; ++p) {
      double v = 0;
      if (!parse_double(f[1 + p], v)) throw fail(st.parameters[p] + " \"" + f[1 + p] + "\" is not a finite number");
      // A sampled value lies in its distribution's support, as the header records it.
      const Distribution& d = st.distributions[p];
      if (d.kind != Distribution::Kind::normal && !(v >= d.low && v <= d.high))
        throw fail(st.parameters[p] + " " + f[1 + p] + " is outside its distribution's support [" + exact(d.low) + ", " +
                   exact(d.high) + "]");
      r.values.push_back(v);
    }
    Outcome outcome = Outcome::never_touched;
    try {
      outcome = outcome_from_string(f[1 + np]);
    } catch (const std::invalid_argument& e) {
      throw fail(e.what());
    }
    const auto& kinds = outcomes_of(st.success_kind);
    if (std::find(kinds.begin(), kinds.end(), outcome) == kinds.end())
      throw fail("outcome " + f[1 + np] + " is not one of a " +
                 (st.success_kind == SuccessCriterion::Kind::lifted ? "lifted" : "goal_region") + " study's outcomes");
    r.outcome.push_back(outcome);
    int failed = 0;
    if (!parse_int(f[5 + np], failed) || failed < -1 || failed == 0)
      throw fail("failed_step \"" + f[5 + np] + "\" is not a step (-1, or counted from 1)");
    r.failed_step.push_back(failed);
    bool ok = false;
    const Status status = status_from_string(f[6 + np], ok);
    if (!ok) throw fail("status \"" + f[6 + np] + "\" is not a status word");
    r.status.push_back(status);
    // A failed world is solver_failed, with its step and status; any other world solved.
    const bool failed_world = outcome == Outcome::solver_failed;
    if (failed_world != (status != Status::solved) || failed_world != (failed >= 1))
      throw fail("outcome " + f[1 + np] + " does not agree with status " + f[6 + np] + " and failed_step " + f[5 + np]);
    std::array<double, 3> pose{};
    for (int k = 0; k < 3; ++k)
      if (!parse_double(f[2 + np + k], pose[k]))
        throw fail(std::string("pose ") + (k == 0 ? "x" : k == 1 ? "y" : "theta") + " \"" + f[2 + np + k] +
                   "\" is not a finite number");
    r.final_pose.push_back(pose);
    // The goal rule judges a world from its final pose alone: in_goal exactly when inside.
    // (never_touched and a lifted study's outcomes depend on the path, which is not stored.)
    if (st.success_kind == SuccessCriterion::Kind::goal_region && (outcome == Outcome::in_goal || outcome == Outcome::missed) &&
        (outcome == Outcome::in_goal) != in_goal_region(pose, goal_center, goal_tolerance))
      throw fail("outcome " + f[1 + np] + " contradicts the final pose (" + f[2 + np] + ", " + f[3 + np] + ", " +
                 f[4 + np] + ") and the goal region " + st.success);
  }
  if (in.bad()) throw McCsvError(name + ": read error");

  // Exactly the shard's samples, each once. The sample ranges are checked first and the
  // count before `seen` is sized: a header claiming 10^18 samples is refused, not allocated.
  const auto [first, end] = shard_range(st.samples, sh.shard, st.shards);
  for (long s : r.sample)
    if (s < first || s >= end)
      throw McCsvError(name + ": sample " + std::to_string(s) + " is outside shard " + std::to_string(sh.shard) + "/" +
                       std::to_string(st.shards) + " (samples " + std::to_string(first) + ".." + std::to_string(end - 1) + ")");
  std::vector<char> seen(static_cast<std::size_t>(std::min(end - first, r.size())), 0);
  for (long s : r.sample)
    if (s - first < r.size() && seen[static_cast<std::size_t>(s - first)]++)
      throw McCsvError(name + ": sample " + std::to_string(s) + " appears twice");
  if (r.size() != end - first)
    throw McCsvError(name + ": shard " + std::to_string(sh.shard) + "/" + std::to_string(st.shards) + " has " +
                     std::to_string(r.size()) + " of its " + std::to_string(end - first) + " samples (incomplete file?)");
  return sh;
}

McRecords merge_mc_shards(const std::vector<McShard>& shards, McStudy& study) {
  if (shards.empty()) throw McCsvError("mc-merge: no files given");
  const McShard& a = shards.front();
  const auto same_distribution = [](const Distribution& x, const Distribution& y) {
    return x.kind == y.kind && x.low == y.low && x.high == y.high && x.mean == y.mean && x.stddev == y.stddev;
  };
  // Keyed by K, not one slot per shard: the header's shard count is not trusted.
  std::map<int, const McShard*> by_shard;
  for (const McShard& s : shards) {
    const auto differ = [&](const std::string& what, const std::string& x, const std::string& y) {
      return McCsvError("mc-merge: " + s.file + " is from a different study than " + a.file + ": " + what + " " + y +
                        " vs " + x);
    };
    const McStudy &x = a.study, &y = s.study;
    if (x.scene_hash != y.scene_hash) throw differ("scene_hash", x.scene_hash, y.scene_hash);
    if (x.model != y.model) throw differ("model", x.model, y.model);
    if (x.seed != y.seed) throw differ("seed", std::to_string(x.seed), std::to_string(y.seed));
    if (x.samples != y.samples) throw differ("samples", std::to_string(x.samples), std::to_string(y.samples));
    if (x.shards != y.shards) throw differ("shard count", std::to_string(x.shards), std::to_string(y.shards));
    if (x.success != y.success || x.object != y.object || x.success_kind != y.success_kind)
      throw differ("success", x.success, y.success);
    if (x.parameters != y.parameters) throw differ("parameters", "", "");
    for (std::size_t p = 0; p < x.distributions.size(); ++p)
      if (!same_distribution(x.distributions[p], y.distributions[p]))
        throw differ("distribution of " + x.parameters[p], "", "");
    const McShard*& slot = by_shard[s.shard];
    if (slot)
      throw McCsvError("mc-merge: " + slot->file + " and " + s.file + " are both shard " + std::to_string(s.shard) + "/" +
                       std::to_string(x.shards) + " (overlapping samples)");
    slot = &s;
  }
  for (int k = 0; k < a.study.shards; ++k)  // stops by K = the number of files at the latest
    if (!by_shard.count(k))
      throw McCsvError("mc-merge: shard " + std::to_string(k) + "/" + std::to_string(a.study.shards) +
                       " is missing (samples " + std::to_string(shard_range(a.study.samples, static_cast<int>(k), a.study.shards).first) +
                       ".." + std::to_string(shard_range(a.study.samples, static_cast<int>(k), a.study.shards).second - 1) + ")");
  study = a.study;
  McRecords out;
  out.parameter_count = a.records.parameter_count;
  out.reserve(study.samples);
  // Shards in K order: each file's rows are its slice (checked when read), so sorting each
  // by sample gives the whole study in sample order.
  for (const auto& [k, s] : by_shard) {
    const McRecords& r = s->records;
    std::vector<long> order(static_cast<std::size_t>(r.size()));
    std::iota(order.begin(), order.end(), 0L);
    std::sort(order.begin(), order.end(), [&](long i, long j) { return r.sample[i] < r.sample[j]; });
    const int np = r.parameter_count;
    for (long i : order) {
      out.sample.push_back(r.sample[i]);
      for (int p = 0; p < np; ++p) out.values.push_back(r.values[static_cast<std::size_t>(i) * np + p]);
      out.outcome.push_back(r.outcome[i]);
      out.final_pose.push_back(r.final_pose[i]);
      out.failed_step.push_back(r.failed_step[i]);
      out.status.push_back(r.status[i]);
    }
  }
  return out;
}

}  // namespace qs::io
