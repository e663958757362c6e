#include "tools/cli/mc_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "quasistep/batch/mc_summary.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/version.hpp"
#include "quasistep/batch/mc_csv.hpp"
#include "tools/report/mc_report.hpp"
#include "quasistep/core/output_file.hpp"

namespace qs::cli {
namespace {

std::string fixed(double x, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << x;
  return o.str();
}

/// "K/M" with 0 <= K < M, else a one-line error.
std::pair<int, int> parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t used_k = 0, used_m = 0;
      const int k = std::stoi(s.substr(0, slash), &used_k), m = std::stoi(s.substr(slash + 1), &used_m);
      if (used_k == slash && used_m == s.size() - slash - 1) {
        if (m < 1) throw BatchError("--shard " + s + ": M must be >= 1");
        if (k < 0 || k >= m) throw BatchError("--shard " + s + ": K must satisfy 0 <= K < M (K counts from 0)");
        return {k, m};
      }
    }
  } catch (const std::logic_error&) {
  }
  throw BatchError("--shard " + s + ": expected K/M, e.g. 0/4");
}

/// A one-line progress bar, redrawn in place: samples done, rate and time left.
class ProgressBar {
 public:
  explicit ProgressBar(std::ostream& err) : err_(err), t0_(std::chrono::steady_clock::now()) {}
  void update(long done, long total) {
    const auto now = std::chrono::steady_clock::now();
    // At most ten redraws a second, and always the last one.
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - t0_).count();
    const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
    const int width = 30, filled = total > 0 ? static_cast<int>(width * done / total) : width;
    err_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#') << std::string(static_cast<std::size_t>(width - filled), ' ')
         << "] " << done << "/" << total << "  " << fixed(rate, 0) << " samples/s  "
         << (rate > 0 ? fixed(static_cast<double>(total - done) / rate, 1) : std::string("?")) << " s left   "
         << std::flush;
    if (done == total) err_ << "\n";
  }

 private:
  std::ostream& err_;
  std::chrono::steady_clock::time_point t0_, last_{};
};

}  // namespace

namespace {

/// Now, in UTC (ISO 8601), for the report's provenance.
std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

/// Keeps the first `limit` records of a stream (the report's scatter plot and replays).
void keep_first(McRecords& kept, const McRecords& chunk, long limit) {
  const int np = chunk.parameter_count;
  kept.parameter_count = np;
  for (long i = 0; i < chunk.size() && kept.size() < limit; ++i) {
    const auto u = static_cast<std::size_t>(i);
    kept.sample.push_back(chunk.sample[u]);
    kept.values.insert(kept.values.end(), chunk.values.begin() + i * np, chunk.values.begin() + (i + 1) * np);
    kept.outcome.push_back(chunk.outcome[u]);
    kept.final_pose.push_back(chunk.final_pose[u]);
    kept.failed_step.push_back(chunk.failed_step[u]);
    kept.status.push_back(chunk.status[u]);
  }
}

}  // namespace


McOptions mc_options(const McCommandOptions& o) {
  McOptions mo;
  mo.samples = o.samples;
  mo.seed = o.seed;
  std::tie(mo.shard, mo.shards) = parse_shard(o.shard);
  mo.threads = o.threads;
  mo.trajectories = o.trajectories;
  return mo;
}

int run_mc(const Scene& scene, const McCommandOptions& o, std::ostream& out, std::ostream& err,
           const McRunner& runner) {
  McOptions mo = mc_options(o);
  ProgressBar bar(err);
  if (o.progress) mo.progress = [&bar](long done, long total) { bar.update(done, total); };
  // The outputs are checked and opened first: a path that cannot be written fails before the
  // study runs, and none of them is left behind when a later one fails.
  io::OutputSet outputs(out, {o.scene});
  io::Output* csv = outputs.add("--out", o.out);
  io::Output* report = outputs.add("--report", o.report);
  outputs.open();

  // The study streams: each chunk's rows are written and summed as they come, so any
  // number of samples runs in bounded memory.
  const McStudy study = make_study(scene, mo);
  McSummary summary = empty_summary(study, static_cast<int>(study.parameters.size()));
  if (csv)
    io::write_mc_csv_header(study, mo.shard,
                            io::provenance_line(scene.source, scene.hash, std::to_string(o.seed),
                                                std::string(to_string(scene.model->world.type)), study.model),
                            csv->stream());
  // The report's axes are checked before the study runs.
  const std::array<int, 2> axes =
      report && !o.report_axes.empty() ? io::parse_report_axes(o.report_axes, study) : std::array<int, 2>{0, 1};
  McRecords kept;  // the first samples, for the report
  mo.records_sink = [&](const McRecords& chunk) {
    add_to_summary(summary, chunk);
    if (csv) io::write_mc_csv_rows(chunk, csv->stream());
    if (report) keep_first(kept, chunk, io::kReportScatterSamples);
  };
  const McRun run = runner ? runner(scene, mo) : run_monte_carlo(scene, mo);
  finish_summary(summary);
  // Which study this was, on stderr with the run's other lines (stdout is the study's result,
  // the same for merged shards): the scene's path and description.
  err << "mc: " << io::printable(o.scene.empty() ? scene.source : o.scene)
      << (scene.description.empty() ? std::string() : ": " + io::printable(scene.description)) << "\n";
  // With an output on standard output the summary goes to stderr, out of its way.
  print_mc_summary(run.study, summary, outputs.uses_standard_output() ? err : out);

  if (report) {
    io::McReportInput in;
    in.study = &run.study;
    in.summary = &summary;
    in.records = &kept;
    in.records_of = run.count;
    in.trajectories = &run.trajectories;
    in.scene = &scene;
    in.success = scene.success ? &*scene.success : nullptr;
    in.replays = io::replay_samples(scene, run.study, kept);
    in.title = (scene.model->name.empty() ? scene.source : scene.model->name) + ": Monte Carlo study";
    in.version = std::string(kVersion);
    in.date = utc_now();
    in.command_line = o.command_line;
    in.scene_path = o.scene.empty() ? scene.source : o.scene;
    in.description = scene.description;
    in.axes = axes;
    io::write_mc_report(in, report->stream());
  }
  outputs.commit();
  err << "mc: samples ";
  if (run.count > 0) err << run.first << ".." << run.first + run.count - 1;
  else err << "none";  // a shard of more slices than samples
  err << " (shard " << mo.shard << "/" << mo.shards
      << ") in " << fixed(run.seconds, 3) << " s, "
      << fixed(run.seconds > 0 ? static_cast<double>(run.count) / run.seconds : 0.0, 0) << " samples/s, "
      << fixed(run.seconds > 0 ? static_cast<double>(run.count) * scene.model->step.steps / run.seconds : 0.0, 0)
      << " world-steps/s; " << run.path
      << "\n";
  if (csv && csv->kind() != io::OutputKind::standard_output) err << "mc: samples written to " << o.out << "\n";
  if (report && report->kind() != io::OutputKind::standard_output) err << "mc: report written to " << o.report << "\n";
  return 0;
}

int run_mc_merge(const std::vector<std::string>& files, const std::string& report, const Scene* scene,
                 const std::string& report_axes, const std::string& command_line, std::ostream& out,
                 std::ostream& err) {
  io::OutputSet outputs(out, files);
  io::Output* out_report = outputs.add("--report", report);
  std::vector<io::McShard> shards;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) throw io::McCsvError(f + ": cannot open for reading");
    shards.push_back(io::read_mc_csv(in, f));
  }
  McStudy study;
  const McRecords records = io::merge_mc_shards(shards, study);
  // The report's inputs are checked before anything is printed.
  if (scene && scene->hash != study.scene_hash)
    throw std::runtime_error("--scene " + scene->source + " is not the study's scene (its hash is " + scene->hash +
                             ", the study's " + study.scene_hash + ")");
  const std::array<int, 2> axes =
      report_axes.empty() ? std::array<int, 2>{0, 1} : io::parse_report_axes(report_axes, study);
  const McSummary summary = summarize(study, records);
  print_mc_summary(study, summary, outputs.uses_standard_output() ? err : out);
  if (out_report) {
    outputs.open();
    io::McReportInput in;
    in.study = &study;
    in.summary = &summary;
    McRecords kept;  // the first samples, for the scatter plot and the replays
    keep_first(kept, records, io::kReportScatterSamples);
    in.records = &kept;
    in.records_of = records.size();
    in.scene = scene;
    in.success = scene && scene->success ? &*scene->success : nullptr;
    if (scene) in.replays = io::replay_samples(*scene, study, kept);
    else in.no_replays = "No replays: merged shard CSVs carry no trajectories (mc-merge --scene SCENE runs the chosen samples again).";
    in.title = scene ? (scene->model->name.empty() ? scene->source : scene->model->name) + ": merged Monte Carlo study"
                     : "merged study " + study.scene_hash + " (seed " + std::to_string(study.seed) + ")";
    in.version = std::string(kVersion);
    in.date = utc_now();
    in.command_line = command_line;
    in.scene_path = scene ? scene->source : std::string();
    in.description = scene ? scene->description : std::string();
    in.axes = axes;
    io::write_mc_report(in, out_report->stream());
    outputs.commit();
    if (out_report->kind() != io::OutputKind::standard_output) err << "mc-merge: report written to " << report << "\n";
  }
  return 0;
}

}  // namespace qs::cli
