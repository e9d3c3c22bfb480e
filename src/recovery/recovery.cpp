// The public face of the run's loop calls (strata/recovery.hpp): each function asks
// the Runtime's LoopCalls (loop_calls.hpp), which only the engine sees.
#include "strata/recovery.hpp"

#include "recovery/loop_calls.hpp"

namespace strata::recovery {

std::int64_t loop_calls_made(Runtime& rt) { return loop_calls(rt).calls(); }

std::int64_t loop_calls_skipped(Runtime& rt) { return loop_calls(rt).skipped(); }

void finish_checkpoints(Runtime& rt) { loop_calls(rt).finish_checkpoints(); }

CheckpointTimes checkpoint_times(Runtime& rt) { return loop_calls(rt).checkpoint_times(); }

void bind_checkpoints(Runtime& rt, const std::string& name, const std::string& value) {
  loop_calls(rt).bind(name, value);
}

}  // namespace strata::recovery
