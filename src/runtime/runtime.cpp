#include "strata/runtime.hpp"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <thread>

#include "strata/error.hpp"
#include "runtime/failure_report.hpp"

namespace strata {
namespace {

int parse_int_option(std::string_view name, std::string_view text, int lo, int hi) {
  char* end = nullptr;
  const std::string s(text);
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    throw OptionError(fmt::format("{}: expected an integer in [{}, {}], got '{}'", name, lo, hi, text));
  return static_cast<int>(v);
}

double parse_seconds_option(std::string_view name, std::string_view text) {
  char* end = nullptr;
  const std::string s(text);
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0))
    throw OptionError(fmt::format("{}: expected a positive number of seconds, got '{}'", name, text));
  return v;
}

// The CPUs this process may run on (its affinity mask; mpirun binds each rank to one
// core by default), or 0 where the mask cannot be read.
int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

std::uint64_t parse_seed_option(std::string_view name, std::string_view text) {
  char* end = nullptr;
  const std::string s(text);
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || s[0] == '-')
    throw OptionError(fmt::format("{}: expected a non-negative integer, got '{}'", name, text));
  return v;
}

std::string parse_dir_option(std::string_view name, std::string_view text) {
  if (text.empty()) throw OptionError(fmt::format("{}: expected a directory, got an empty value", name));
  return std::string(text);
}

// True for "background", false for "inline".
bool parse_checkpoint_write(std::string_view name, std::string_view text) {
  if (text == "background") return true;
  if (text == "inline") return false;
  throw OptionError(fmt::format("{}: expected 'background' or 'inline', got '{}'", name, text));
}

// Applies one option given by its name (as the user wrote it) and value.
void apply_option(RuntimeOptions& o, std::string_view key, std::string_view shown, std::string_view value) {
  if (key == "threads") o.threads = parse_int_option(shown, value, 1, kMaxThreadsPerRank);
  else if (key == "timeout") o.timeout_seconds = parse_seconds_option(shown, value);
  else if (key == "seed") o.seed = parse_seed_option(shown, value);
  else if (key == "log") o.log_level = parse_log_level(value);
  else if (key == "checkpoint-dir") o.checkpoint_dir = parse_dir_option(shown, value);
  else if (key == "checkpoint-every") o.checkpoint_every = parse_int_option(shown, value, 1, INT_MAX);
  else if (key == "checkpoint-write") o.checkpoint_in_background = parse_checkpoint_write(shown, value);
  else if (key == "resume") o.resume_dir = parse_dir_option(shown, value);
  else if (key == "record") o.record_dir = parse_dir_option(shown, value);
  else if (key == "replay") o.replay_dir = parse_dir_option(shown, value);
  else throw OptionError(fmt::format("unknown option {} (known: --strata-threads, --strata-timeout, "
                                     "--strata-seed, --strata-log, --strata-checkpoint-dir, "
                                     "--strata-checkpoint-every, --strata-checkpoint-write, --strata-resume, --strata-record, --strata-replay)", shown));
}

RuntimeOptions read_environment(RuntimeOptions o) {
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"STRATA_THREADS", "threads"},
      {"STRATA_TIMEOUT", "timeout"},
      {"STRATA_SEED", "seed"},
      {"STRATA_LOG", "log"},
      {"STRATA_CHECKPOINT_DIR", "checkpoint-dir"},
      {"STRATA_CHECKPOINT_EVERY", "checkpoint-every"},
      {"STRATA_CHECKPOINT_WRITE", "checkpoint-write"},
      {"STRATA_RESUME", "resume"},
      {"STRATA_RECORD", "record"},
      {"STRATA_REPLAY", "replay"}};
  for (auto [var, key] : kVars)
    if (const char* v = std::getenv(var)) apply_option(o, key, var, v);
  return o;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

bool g_runtime_alive = false;

// Filled during static initialisation, read by Runtime constructors.
std::vector<const ServiceKind*>& started_kinds() {
  static std::vector<const ServiceKind*> kinds;
  return kinds;
}

}  // namespace

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(var)) return true;
  return false;
}

RuntimeOptions parse_runtime_options(int& argc, char** argv, RuntimeOptions defaults) {
  RuntimeOptions o = read_environment(defaults);
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with("--strata-")) {
      argv[out++] = argv[i];
      continue;
    }
    std::string_view body = arg.substr(9), value;
    std::string shown(arg);
    if (const auto eq = body.find('='); eq != std::string_view::npos) {
      value = body.substr(eq + 1);
      shown = std::string(arg.substr(0, 9 + eq));
      body = body.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw OptionError(fmt::format("{} needs a value", arg));
    }
    apply_option(o, body, shown, value);
  }
  argc = out;
  argv[argc] = nullptr;
  return o;
}

Runtime::Runtime(int& argc, char** argv, RuntimeOptions defaults) {
  start(parse_runtime_options(argc, argv, defaults));
}

Runtime::Runtime(RuntimeOptions options) {
  int argc = 1;
  char* argv[] = {nullptr, nullptr};
  start(parse_runtime_options(argc, argv, options));
}

void Runtime::start(RuntimeOptions options) {
  if (g_runtime_alive) throw Error("only one strata::Runtime may exist in a process");
  if (options.threads > kMaxThreadsPerRank)
    throw OptionError(fmt::format("RuntimeOptions::threads: {} is above the most threads per rank, {}", options.threads,
                                  kMaxThreadsPerRank));
  options_ = options;
  CommOptions comm_options{options.timeout_seconds};
  uses_mpi_ = launched_by_mpi();
  if (uses_mpi_) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      // The communication thread of the parameter server and the executors' transfer
      // threads call MPI concurrently with each other.
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        throw CommError("MPI_Init_thread", -1, "MPI could not start");
    }
    comm_ = make_mpi_comm(comm_options);
    ranks_on_host_ = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", env_int("MPI_LOCALNRANKS", 0));
    if (ranks_on_host_ <= 0) {
      MPI_Comm local;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
      MPI_Comm_size(local, &ranks_on_host_);
      MPI_Comm_free(&local);
    }
  } else {
    comm_ = make_self_comm(comm_options);
    ranks_on_host_ = 1;
  }
  logger_ = std::make_unique<Logger>(comm_->rank(), comm_->size(), options.log_level);
  // Threads beyond the CPUs the process is bound to take turns on them: the default
  // stays within the mask, and an explicit count above it is run but warned about,
  // since a rank bound to one core (Open MPI's default for up to two ranks) runs its
  // threads one at a time.
  const int allowed = cpus_allowed();
  int threads = options.threads;
  if (threads <= 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max(1, cores / std::max(1, ranks_on_host_));
    if (allowed > 0) threads = std::min(threads, allowed);
  } else if (allowed > 0 && threads > allowed) {
    logger_->log(LogLevel::warn,
                 "{} threads asked for, but this process may run on {} CPU{} only (its affinity mask): the threads "
                 "will take turns; under mpirun pass --bind-to none or --map-by slot:PE={}",
                 threads, allowed, allowed == 1 ? "" : "s", threads);
  }
  options_.threads = threads;
  pool_ = std::make_unique<ThreadPool>(threads);
  for (const ServiceKind* kind : started_kinds()) service(*kind);
  if (uses_mpi_) detail::report_launcher_stops(comm_->rank());
  g_runtime_alive = true;
}

RuntimeService& Runtime::service(const ServiceKind& kind) {
  for (auto& [k, s] : services_)
    if (k == &kind) return *s;
  services_.emplace_back(&kind, kind.make(*this));
  return *services_.back().second;
}

namespace detail {
void start_with_every_runtime(const ServiceKind& kind) { started_kinds().push_back(&kind); }
}  // namespace detail

Runtime::~Runtime() {
  if (std::uncaught_exceptions() == 0 && !(comm_ && comm_->broken()))
    for (auto it = services_.rbegin(); it != services_.rend(); ++it) it->second->finish();
  while (!services_.empty()) services_.pop_back();
  pool_.reset();
  bool broken = comm_ && comm_->broken();
  if (uses_mpi_ && !broken && comm_->size() > 1 && std::uncaught_exceptions() > 0) {
    // Unwinding from an error. If every rank raised it (collective errors such as a
    // parse error do), all meet here and finish cleanly; if only this one did, the
    // others never arrive and the job is aborted after a short wait.
    try {
      comm_->set_timeout(std::min(comm_->timeout(), 10.0));
      comm_->barrier();
    } catch (const Error&) {
      broken = true;
    }
  }
  if (uses_mpi_ && broken) {
    // A peer may be stuck in a collective we will never join: finalising would hang.
    logger_->write(LogLevel::error, "aborting the job: communication cannot continue");
    comm_->abort(1);
  }
  comm_.reset();
  if (uses_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  g_runtime_alive = false;
}

}  // namespace strata
