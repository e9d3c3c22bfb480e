// LoopCalls as the loop engine sees it (strata/loop/call_hooks.hpp): registration with
// every Runtime, the one-process replay of Buffer writes, and what a record or a
// replay asks of relaxed tables before a run.
#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/relaxed_base.hpp"
#include "recovery/loop_calls.hpp"
#include "recovery/replayed_deltas.hpp"

// Referenced by the link options of `strata` (src/CMakeLists.txt), so that a static
// link keeps this file, and with it the registration below, in every program.
extern "C" {
extern const int strata_recovery_layer;
const int strata_recovery_layer = 1;
}

namespace strata::recovery {
namespace {

const ServiceKind kLoopCalls{"loop calls", [](Runtime& rt) -> std::unique_ptr<RuntimeService> {
                               return std::make_unique<LoopCalls>(rt);
                             }};

[[maybe_unused]] const bool g_provided = (loop::provide_call_hooks(kLoopCalls), true);

}  // namespace

LoopCalls& loop_calls(Runtime& rt) { return static_cast<LoopCalls&>(loop::call_hooks(rt)); }

void LoopCalls::finish() {
  try {
    finish_checkpoints();
  } catch (const Error& e) {
    rt_.logger().write(LogLevel::error, fmt::format("the last checkpoint was not written: {}", e.what()));
  }
}

std::unique_ptr<loop::ReplayedWrites> LoopCalls::replay_writes(const RecordedCall& call, std::int64_t clocks) {
  return std::make_unique<ReplayedDeltas>(*record_, call, clocks);
}

// A replay on the recorded layout: SSP caches take the versions the record holds.
// A record logs the runs whose values depend on timing; a replay on the recorded
// layout cannot make them so again (a one-process replay reads the log instead).
void LoopCalls::before_relaxed_run(std::span<detail::RelaxedBase* const> tables, const std::string& site) {
  const bool replaying = record_->mode() == ExecutionRecord::Mode::replay;
  for (auto* t : tables) {
    if (replaying && values_depend_on_timing(t->consistency()))
      throw ReplayError(fmt::format(
          "replay of loop call {} at {}: its relaxed array {} ran with {}, whose values depend on timing; a replay "
          "on the recorded ranks and threads cannot reproduce them. Replay it in one process with one thread "
          "(--strata-threads=1, no mpirun): that replay reads what the record logged",
          call_, site, detail::array_label(t->array_id()),
          t->consistency().is_managed() ? "managed communication" : "Hybrid consistency"));
    t->log_timing(recording() && values_depend_on_timing(t->consistency()));
    std::vector<std::int64_t> versions;
    if (replaying && records_cache_versions(t->consistency())) {
      const auto recorded = record_->cache_versions(expected(), t->array_id());
      const auto mine = recorded.of_rank(rt_.rank());
      versions.assign(mine.begin(), mine.end());
    }
    t->follow_versions(std::move(versions));
  }
}

}  // namespace strata::recovery
