// Reading a scene must take time linear in its size. Scenes of 50/64 MB ... 50 MB (each
// twice the last) of a large fixed environment: many fixed obstacle bodies with a few shapes
// each around one free puck, contacts "auto". Two series: the JSON layer alone
// (json_input::parse_document) and the whole reader (parse_scene: JSON, checks, compile).
// Each doubling should at most double the time (the bar is 2.3x).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/scene.hpp"

namespace {

/// A valid scene of about `bytes` bytes.
std::string make_scene(size_t bytes) {
  std::string s = R"({"format": 1, "name": "bench_parse",
  "world": {"type": "vertical", "gravity": 9.81},
  "model": {"formulation": "trinkle_lcp"},
  "step": {"h": 0.01, "steps": 1},
  "contacts": {"friction": 0.5, "margin": 0.01},
  "bodies": [
    {"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
    {"name": "puck", "kind": "free", "mass": 1, "inertia": 0.01, "pose": [0, 0.05, 0],
     "shapes": [{"type": "disk", "radius": 0.05}]})";
  char buf[512];
  for (long i = 0; s.size() < bytes; ++i) {
    const double x = 1.0 + 0.25 * static_cast<double>(i % 1000), y = 0.25 * static_cast<double>(i / 1000);
    std::snprintf(buf, sizeof buf,
                  ",\n    {\"name\": \"obstacle_%ld\", \"kind\": \"fixed\", \"pose\": [%.3f, %.3f, 0.1],"
                  " \"shapes\": [{\"type\": \"disk\", \"radius\": 0.02},"
                  " {\"type\": \"box\", \"size\": [0.05, 0.03], \"pose\": [0.05, 0, 0]},"
                  " {\"type\": \"polygon\", \"vertices\": [[0, 0], [0.04, 0], [0.02, 0.03]], \"pose\": [-0.06, 0, 0]}]}",
                  i, x, y);
    s += buf;
  }
  s += "\n  ]\n}\n";
  return s;
}

size_t size_arg(const benchmark::State& state) {
  // range(0) = k: 50 MB / 2^k
  return static_cast<size_t>(50.0 * 1024 * 1024 / static_cast<double>(1L << state.range(0)));
}

void parse_document(benchmark::State& state) {
  const std::string text = make_scene(size_arg(state));
  for (auto _ : state) {
    const qs::json_input::json doc = qs::json_input::parse_document(text);
    benchmark::DoNotOptimize(doc.size());
  }
  state.counters["MB"] = static_cast<double>(text.size()) / (1024.0 * 1024.0);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void parse_scene(benchmark::State& state) {
  const std::string text = make_scene(size_arg(state));
  int slots = 0;
  for (auto _ : state) {
    const qs::Scene scene = qs::parse_scene(text, "bench");
    slots = scene.model->n_slots();
  }
  state.counters["MB"] = static_cast<double>(text.size()) / (1024.0 * 1024.0);
  state.counters["slots"] = slots;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// Largest first: the 50 MB scene is the figure the bound is about. Compare the "min" rows'
// CPU times: on a shared machine the fastest of five runs is the least disturbed one.
BENCHMARK(parse_document)->DenseRange(0, 6)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)
    ->ComputeStatistics("min", fastest)->ReportAggregatesOnly(true);
BENCHMARK(parse_scene)->DenseRange(0, 6)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)
    ->ComputeStatistics("min", fastest)->ReportAggregatesOnly(true);

}  // namespace
