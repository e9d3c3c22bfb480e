// The public face of the run's loop calls (strata/recovery.hpp): each function asks
// the Runtime's LoopCalls (loop_calls.hpp), which only the engine sees; a run's newest
// checkpoint is read and verified as resuming reads it (run_checkpoint.hpp).
#include "strata/recovery.hpp"

#include <fmt/format.h>

#include "recovery/loop_calls.hpp"
#include "recovery/run_checkpoint.hpp"
#include "strata/error.hpp"

namespace strata::recovery {

std::int64_t loop_calls_made(Runtime& rt) { return loop_calls(rt).calls(); }

std::int64_t loop_calls_skipped(Runtime& rt) { return loop_calls(rt).skipped(); }

void finish_checkpoints(Runtime& rt) { loop_calls(rt).finish_checkpoints(); }

CheckpointTimes checkpoint_times(Runtime& rt) { return loop_calls(rt).checkpoint_times(); }

void bind_checkpoints(Runtime& rt, const std::string& name, const std::string& value) {
  loop_calls(rt).bind(name, value);
}

RunCheckpoint newest_checkpoint(Runtime& rt, const std::filesystem::path& root) {
  std::optional<ResumePoint> p = read_resume_point(rt, root, Origin::any);
  if (!p)
    throw CheckpointError(
        fmt::format("{}: holds no complete checkpoint yet (no '{}' file)", root.string(), kLatestName));
  RunCheckpoint out{p->dir, p->manifest.program, p->manifest.call, {}};
  for (const auto& a : p->manifest.arrays) {
    const std::string dir = saved_array_dir(a.id);
    out.arrays.push_back({a.name.empty() ? dir : a.name, p->dir / dir, a.tag, a.shape});
  }
  return out;
}

}  // namespace strata::recovery
