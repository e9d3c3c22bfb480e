// The `strata` command: train an app, explain its plans, plot metrics files.
//
//   strata train mf --synthetic users=50000,items=5000,ratings=1000000 --epochs 10 --plot mf.svg
//   mpirun -np 2 strata train mf --data ratings.txt --threads 1 --metrics mf.csv
//   strata explain lda --synthetic docs=1000
//   strata predict mf --model model --data pairs.txt --out predictions.txt
//   strata plot a.csv b.csv -o both.svg
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line.hpp"
#include "metrics_file.hpp"
#include "progress.hpp"
#include "strata/error.hpp"
#include "strata/recovery.hpp"
#include "strata/runtime.hpp"
#include "svg_plot.hpp"
#include "training.hpp"

namespace strata::cli {

namespace {

std::string run_label(const TrainCommand& t, const Runtime& rt) {
  if (t.config.serial) return t.app->name + " serial";
  const std::string plan = t.config.plan ? analysis::to_string(*t.config.plan) : "auto";
  return fmt::format("{} strata {} {}x{}", t.app->name, plan, rt.size(), rt.threads());
}

MetricsTable metrics_table(const TrainCommand& t, const Runtime& rt, const std::vector<apps::PassReport>& passes) {
  MetricsTable m;
  m.meta["app"] = t.app->name;
  m.meta["label"] = run_label(t, rt);
  m.meta["seed"] = std::to_string(t.config.seed);
  m.meta["data"] = t.config.data_path.empty() ? "synthetic:" + t.config.synthetic.describe() : t.config.data_path;
  m.meta["options"] = t.config.options.describe();
  m.meta["ranks"] = std::to_string(rt.size());
  m.meta["threads"] = std::to_string(rt.threads());
  m.columns = standard_metrics_columns();
  if (!passes.empty())
    for (const auto& x : passes.front().metrics) m.columns.push_back(x.name);
  double elapsed = 0;
  for (const auto& r : passes) {
    elapsed += r.seconds;
    std::vector<double> row{static_cast<double>(r.pass), r.seconds, elapsed, static_cast<double>(r.items),
                            r.seconds > 0 ? static_cast<double>(r.items) / r.seconds : 0.0};
    for (const auto& x : r.metrics) row.push_back(x.value);
    m.rows.push_back(std::move(row));
  }
  return m;
}

// A bar redrawn in place on a terminal; plain lines otherwise. Open MPI hands ranks
// a pseudo-terminal even when mpirun's output goes to a file, so under mpirun the
// bar needs STRATA_PROGRESS=bar (and =lines forces lines anywhere).
bool draw_bar() {
  if (const char* p = std::getenv("STRATA_PROGRESS")) return std::string(p) == "bar";
  return isatty(fileno(stdout)) != 0 && !std::getenv("OMPI_COMM_WORLD_SIZE");
}

Series series_of(const MetricsTable& m, const std::string& metric, const std::string& fallback_label) {
  Series s;
  s.label = m.meta.count("label") ? m.meta.at("label") : fallback_label;
  s.pass = m.column("pass");
  s.seconds = m.column("elapsed");
  s.value = m.column(metric);
  return s;
}

// Where the checkpoints' time went (slowest rank's figures). In the background, the
// training paused only to copy the model and to commit; inline, it waited for the
// whole write.
void print_checkpoint_times(const recovery::CheckpointTimes& ck, const RuntimeOptions& o) {
  const double n = ck.written;
  if (o.checkpoint_in_background)
    std::printf("checkpoints: %d written to %s in the background, %.3f s each; training paused %.4f s each to copy "
                "and %.4f s each to commit, and %.3f s at the end for the last one\n",
                ck.written, o.checkpoint_dir.c_str(), ck.write_seconds / n, ck.copy_seconds / n,
                ck.commit_seconds / n, ck.final_seconds);
  else
    std::printf("checkpoints: %d written to %s inline, %.3f s each\n", ck.written, o.checkpoint_dir.c_str(),
                (ck.copy_seconds + ck.commit_seconds + ck.final_seconds) / n);
}

int train(Runtime& rt, const TrainCommand& t) {
  const bool lead = rt.rank() == 0;
  if (t.explain_only) {
    apps::find_app(t.app->name).explain(rt, t.config);
    return 0;
  }
  std::unique_ptr<Progress> progress;
  auto info = [&](const std::string& line) {
    if (lead) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  auto on_pass = [&](const apps::PassReport& r) {
    if (!lead) return;
    if (!progress) progress = std::make_unique<Progress>(stdout, draw_bar(), t.config.epochs, " " + t.app->unit);
    progress->update(r);
  };
  if (lead)
    std::printf("strata train %s: %s, %d rank(s) x %d thread(s), %d passes, seed %llu\n", t.app->name.c_str(),
                t.config.serial ? "serial program" : "Strata", rt.size(), rt.threads(), t.config.epochs,
                static_cast<unsigned long long>(t.config.seed));
  // A pass whose quality figures are not finite ends training: the passes so far are
  // still reported and written, the model is not saved, and the exit status is 1.
  const TrainingResult result = run_training(rt, t, info, on_pass);
  const std::vector<apps::PassReport>& passes = result.passes;
  const std::string& diverged = result.diverged;
  recovery::CheckpointTimes ck = recovery::checkpoint_times(rt);
  for (double* v : {&ck.copy_seconds, &ck.commit_seconds, &ck.final_seconds, &ck.write_seconds})
    *v = rt.comm().allreduce(*v, ReduceOp::max);
  // The peak resident set of the largest rank: what a machine must have per process.
  rusage use{};
  getrusage(RUSAGE_SELF, &use);
  const double peak_mb = rt.comm().allreduce(static_cast<double>(use.ru_maxrss) / 1024.0, ReduceOp::max);
  if (!lead) return diverged.empty() ? 0 : 1;
  if (progress) progress->finish();
  std::printf("\n%s", pass_table(passes, t.app->unit).c_str());
  std::printf("peak memory: %.1f MB (resident set of the largest of %d rank(s))\n", peak_mb, rt.size());
  const MetricsTable table = metrics_table(t, rt, passes);
  if (!t.metrics_path.empty()) {
    write_metrics_csv(t.metrics_path, table);
    std::printf("metrics: %s\n", t.metrics_path.c_str());
  }
  if (!t.plot_path.empty()) {
    write_convergence_svg(t.plot_path, fmt::format("{} ({})", t.app->name, table.meta.at("data")), "loss",
                          {series_of(table, "loss", run_label(t, rt))});
    std::printf("plot: %s\n", t.plot_path.c_str());
  }
  if (!diverged.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "strata: %s\n", diverged.c_str());
    return 1;
  }
  if (!t.config.save_dir.empty()) std::printf("model: %s\n", t.config.save_dir.c_str());
  if (ck.written > 0) print_checkpoint_times(ck, rt.options());
  return 0;
}

int predict(Runtime& rt, const PredictCommand& p) {
  const apps::App& app = apps::find_app(p.app->name);
  if (!app.predict) throw OptionError(fmt::format("strata predict: app {} has no predict yet (mf, slr and mlr have)", app.name));
  app.predict(rt, p.request, [&](const std::string& line) {
    if (rt.rank() == 0) std::printf("%s\n", line.c_str());
  });
  return 0;
}

int plot(const PlotCommand& p) {
  std::vector<Series> all;
  for (const auto& path : p.inputs) all.push_back(series_of(read_metrics_csv(path), p.metric, path));
  write_convergence_svg(p.output, p.metric, p.metric, all);
  std::printf("plot: %s (%zu run(s))\n", p.output.c_str(), all.size());
  return 0;
}

// Rank of this process before MPI starts (Open MPI sets it), so errors found while
// parsing options are printed once, not once per rank.
bool lead_process() {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  return !r || std::string(r) == "0";
}

int run(int argc, char** argv) {
  CommandLine cl;
  try {
    cl = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const Error& e) {
    if (lead_process()) std::fprintf(stderr, "strata: %s\n", failure_line(e).c_str());
    return 2;
  }
  if (cl.verb == CommandLine::Verb::help) {
    if (lead_process()) std::printf("%s", usage().c_str());
    return 0;
  }
  if (cl.verb == CommandLine::Verb::plot) return plot(cl.plot);
  std::vector<std::string> rt_args{"strata"};
  for (auto& a : runtime_arguments(cl)) rt_args.push_back(a);
  std::vector<char*> rt_argv;
  for (auto& a : rt_args) rt_argv.push_back(a.data());
  rt_argv.push_back(nullptr);
  int rt_argc = static_cast<int>(rt_args.size());
  Runtime rt(rt_argc, rt_argv.data());
  try {
    return cl.verb == CommandLine::Verb::predict ? predict(rt, cl.predict) : train(rt, cl.train);
  } catch (const Error& e) {
    // Errors in the data or options are found by every rank alike: one line.
    const bool shared = dynamic_cast<const OptionError*>(&e) || dynamic_cast<const ParseError*>(&e) ||
                        dynamic_cast<const IoError*>(&e);
    if (rt.rank() == 0 || !shared) std::fprintf(stderr, "strata: %s\n", failure_line(e).c_str());
    return 1;
  } catch (const std::exception& e) {
    // Before the Runtime stops: a rank that ran out of memory says so itself.
    std::fprintf(stderr, "strata: %s\n", failure_line(e).c_str());
    return 1;
  }
}

}  // namespace

}  // namespace strata::cli

// Every exception ends here at the latest: one line on stderr and exit status 1,
// never std::terminate's abort.
int main(int argc, char** argv) {
  // A run frees large buffers as it moves on (the parsed file once its arrays are
  // built, routing buffers once entries reached their owners). glibc raises its mmap
  // threshold to the size of each such block freed, so later blocks come from the
  // heap, which it does not give back: a rank's peak then holds both phases. A fixed
  // threshold hands every block of 1 MiB or more back when it is freed (mf, 4M ratings
  // on 4 ranks: 130-160 MB a rank became 122 MB). MALLOC_MMAP_THRESHOLD_ still wins.
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 1 << 20);
  try {
    return strata::cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: %s\n", strata::cli::failure_line(e).c_str());
  } catch (...) {
    std::fprintf(stderr, "strata: unexpected error of an unknown type\n");
  }
  return 1;
}
