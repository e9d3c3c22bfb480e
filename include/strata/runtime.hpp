// strata::Runtime: one per process. It starts MPI when the process was launched by
// mpirun (or runs as a lone rank otherwise), owns the rank's thread pool, the
// communicator, the logger and the job's seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/log.hpp"
#include "strata/random.hpp"
#include "strata/thread_pool.hpp"

namespace strata {

class Runtime;

/// A per-run object of a layer above the runtime (the parameter server's postman, the
/// journal of loop calls). The layer that owns it creates it through
/// Runtime::service; the Runtime keeps it, finishes it at a normal end and destroys it
/// before the rank's threads and communicator stop (newest first).
class RuntimeService {
 public:
  virtual ~RuntimeService() = default;
  /// At a normal end of the run (not unwinding, communication intact), before any
  /// service is destroyed; errors are the service's to report. Collective.
  virtual void finish() {}
};

/// A kind of RuntimeService, identified by the address of this object (a constant of
/// the owning layer).
struct ServiceKind {
  const char* name;
  std::unique_ptr<RuntimeService> (*make)(Runtime& rt);
};

/// The most threads one rank's pool may have. The pool is meant to have about one
/// thread per core; far more only oversubscribe the cores, and tens of thousands hit
/// the process's thread and memory limits, where starting them fails (std::thread
/// throws system_error). 1024 is above the core count of any one host Strata runs on.
inline constexpr int kMaxThreadsPerRank = 1024;

struct RuntimeOptions {
  /// Threads of this rank's pool, at most kMaxThreadsPerRank; 0 = cores of the host
  /// divided by ranks on the host, at most the CPUs the process is bound to. A count
  /// above the bound CPUs is logged as a warning (mpirun binds ranks to one core).
  int threads = 0;
  /// Seconds any blocking wait may take before it fails with TimeoutError.
  double timeout_seconds = 60.0;
  /// Root of every random stream of the job.
  std::uint64_t seed = 42;
  LogLevel log_level = LogLevel::info;
  /// Automatic checkpoints (strata/recovery.hpp): the directory ("" = none)
  /// and a checkpoint after every `checkpoint_every`-th loop call that changed arrays.
  std::string checkpoint_dir;
  int checkpoint_every = 1;
  /// Write checkpoints on a background thread from a copy of the arrays, while the
  /// loops go on (the engine's src/recovery/pending_checkpoint.hpp); false writes them before
  /// the loop call returns, without the copy.
  bool checkpoint_in_background = true;
  /// Resume from the newest checkpoint in this directory ("" = start afresh): loop
  /// calls it covers are skipped and what they left is loaded instead.
  std::string resume_dir;
  /// Record the run's execution into this directory ("" = no): per loop call its site,
  /// the serial order of dependence-preserving plans, and fingerprints of the arrays it
  /// changed (the engine's src/recovery/execution_record.hpp).
  std::string record_dir;
  /// Replay a recorded run: on the recorded ranks and threads, or in one process on
  /// one thread (loops run in their recorded serial order); stops with ReplayError at
  /// the first loop call whose arrays differ from the record.
  std::string replay_dir;
};

class Runtime {
 public:
  /// Reads options from the command line and removes them from argv:
  ///   --strata-threads=N  --strata-timeout=SECONDS  --strata-seed=S  --strata-log=LEVEL
  ///   --strata-checkpoint-dir=DIR  --strata-checkpoint-every=N
  ///   --strata-checkpoint-write=background|inline  --strata-resume=DIR
  ///   --strata-record=DIR  --strata-replay=DIR
  /// and from the environment (STRATA_THREADS, STRATA_TIMEOUT, STRATA_SEED, STRATA_LOG,
  /// STRATA_CHECKPOINT_DIR, STRATA_CHECKPOINT_EVERY, STRATA_CHECKPOINT_WRITE,
  /// STRATA_RESUME, STRATA_RECORD, STRATA_REPLAY);
  /// the command line wins over the environment, both over `defaults`.
  Runtime(int& argc, char** argv, RuntimeOptions defaults = {});
  explicit Runtime(RuntimeOptions options = {});
  /// Commits a checkpoint still being written (logging an error if that fails), then
  /// stops the rank's threads and, under MPI, finalises it.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  int threads() const { return pool_->size(); }
  /// Ranks sharing this host (1 for a lone process).
  int ranks_on_host() const { return ranks_on_host_; }
  bool uses_mpi() const { return uses_mpi_; }

  Comm& comm() { return *comm_; }
  ThreadPool& pool() { return *pool_; }
  /// The run's service of `kind`, created by kind.make on first use. Services of the
  /// kinds registered with start_with_every_runtime exist from the start.
  RuntimeService& service(const ServiceKind& kind);
  const Logger& logger() const { return *logger_; }
  const RuntimeOptions& options() const { return options_; }

  std::uint64_t seed() const { return options_.seed; }
  /// The next seed of a deterministic sequence derived from the job seed. Every rank
  /// calls it in the same order (SPMD), so every rank gets the same value.
  std::uint64_t next_seed() { return CounterRng(options_.seed, 0x5EED).bits(seed_counter_++); }
  /// A sequential random stream that is identical on every rank.
  RandomStream random_stream(std::uint64_t stream) const { return RandomStream(options_.seed, stream); }

  /// Logs on every rank, prefixed with the rank.
  template <class... A>
  void log(fmt::format_string<A...> f, A&&... args) const {
    logger_->log(LogLevel::info, f, std::forward<A>(args)...);
  }
  /// Logs once for the job (on rank 0).
  template <class... A>
  void log_once(fmt::format_string<A...> f, A&&... args) const {
    if (rank() == 0) logger_->log(LogLevel::info, f, std::forward<A>(args)...);
  }
  template <class... A>
  void debug(fmt::format_string<A...> f, A&&... args) const {
    logger_->log(LogLevel::debug, f, std::forward<A>(args)...);
  }

 private:
  void start(RuntimeOptions options);

  RuntimeOptions options_;
  bool uses_mpi_ = false;
  int ranks_on_host_ = 1;
  std::uint64_t seed_counter_ = 0;
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<Logger> logger_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::pair<const ServiceKind*, std::unique_ptr<RuntimeService>>> services_;  // oldest first
};

namespace detail {
/// Registers a kind whose service every Runtime creates as it starts, after its
/// threads (kinds in the order registered). Called during static initialisation by
/// the layer that owns the kind, so that a run has it whether or not the program
/// names it (the journal of loop calls: resuming and replaying must see every call).
void start_with_every_runtime(const ServiceKind& kind);
}  // namespace detail

/// Applies STRATA_* environment variables and then --strata-* arguments (removed
/// from argv) to `defaults`. Throws OptionError naming a bad option.
RuntimeOptions parse_runtime_options(int& argc, char** argv, RuntimeOptions defaults = {});

/// True when the process was started by an MPI launcher (mpirun / mpiexec).
bool launched_by_mpi();

}  // namespace strata
