#include "loop/plan_probe.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "loop/checked.hpp"
#include "loop/iteration_scratch.hpp"
#include "strata/random.hpp"

namespace strata::loop::detail {
namespace {

// Checks every access against the plan, then gives it scratch memory, so the probe
// leaves the arrays as they were (Buffers and Accumulators drop what it adds: the
// observer scope marks the thread as recording).
class ProbeObserver final : public strata::detail::AccessObserver {
 public:
  explicit ProbeObserver(const Plan& plan) : check_(plan, /*check_bounds=*/false, /*check_fits=*/true) {
    check_.as_probe();
  }
  bool failed_on_unseen_site() const { return check_.failed_on_unseen_site(); }
  void begin_iteration(std::span<const std::int64_t> index) {
    check_.begin_iteration(index);
    scratch_.begin_iteration();
  }
  void* on_access(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) override {
    check_.on_access(array, where, mode, index, whole_last, real, bytes);  // throws SpeculationFailed
    return scratch_.for_access(real, bytes, mode);
  }

 private:
  CheckedObserver check_;
  IterationScratch scratch_;
};

// This rank's part of probe_plan.
ProbeOutcome probe_here(const SpaceView& space, const LoopBody& body, const Plan& plan, std::uint64_t call) {
  const std::int64_t n = space.local_nnz;
  if (n == 0) return {};
  const std::int64_t count = std::min(kProbedIterations, n);
  // Evenly spaced, from a start that moves with the call: over calls every iteration
  // comes up (deterministic, so reruns probe alike).
  const auto start = static_cast<std::int64_t>(mix64(call ^ 0x9e3779b97f4a7c15ULL) % static_cast<std::uint64_t>(n));
  ProbeObserver probe(plan);
  ObserverScope scope(&probe, true);
  ElementScratch copy(space.elem_size);
  std::int64_t index[4];
  try {
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t pos = (start + j * (n / count)) % n;
      index_at(space, pos, index);
      // The body's element is a copy: its writes are dropped with the probe.
      std::memcpy(copy.data(), space.values + static_cast<std::size_t>(pos) * space.elem_size, space.elem_size);
      probe.begin_iteration(std::span<const std::int64_t>(index, static_cast<std::size_t>(space.dims)));
      body.visit(body.body, index, copy.data());
    }
  } catch (const SpeculationFailed& e) {
    return {e.what(), probe.failed_on_unseen_site()};
  } catch (const std::exception& e) {
    return {fmt::format("the body threw while probed: {}", e.what())};
  } catch (abi::__forced_unwind&) {  // a cancelled thread must go on unwinding
    throw;
  } catch (...) {
    return {"the body threw while probed"};
  }
  return {};
}

}  // namespace

ProbeOutcome probe_plan(const SpaceView& space, const LoopBody& body, const Plan& plan, std::uint64_t call) {
  Runtime& rt = *space.rt;
  ProbeOutcome here = probe_here(space, body, plan, call);
  if (rt.size() == 1) return here;
  const bool fits = here.why.empty();
  const std::int64_t first = rt.comm().allreduce(std::int64_t{fits ? rt.size() : rt.rank()}, ReduceOp::min);
  if (first == rt.size()) return {};
  // Every rank reports the same outcome (explain and LoopReport::probe_failure): the
  // first byte says whether the site was unseen, the rest is the reason.
  std::vector<char> text;
  text.push_back(here.unseen_site ? '1' : '0');
  text.insert(text.end(), here.why.begin(), here.why.end());
  rt.comm().broadcast_vector(text, static_cast<int>(first));
  return {fmt::format("rank {}: {}", first, std::string_view(text.data() + 1, text.size() - 1)), text[0] == '1'};
}

}  // namespace strata::loop::detail
