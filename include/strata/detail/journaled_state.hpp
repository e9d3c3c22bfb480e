// State outside DistArrays that a resumed run must see as an uninterrupted run would,
// without running the loop calls a checkpoint covers: accumulators. After every loop
// call the run journals each live instance's bytes; a resumed run that skips the call
// puts them back, so `loss.take()` after a skipped pass returns what it returned then.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "strata/comm.hpp"

namespace strata::detail {

class JournaledState {
 public:
  /// This rank's state as bytes.
  virtual Bytes journal_bytes() const = 0;
  /// Puts back the state a loop call left. `parts[r]` is what journal_bytes returned
  /// on rank r of the run that wrote the journal; `same_layout` says that run had
  /// this run's ranks and threads (otherwise rank 0 takes the combined value).
  virtual void restore_journal(const std::vector<std::span<const std::byte>>& parts, int rank,
                               bool same_layout) = 0;

  /// Every live instance of this process, oldest first: a program creates them in
  /// the same order every time it runs, so the position identifies one.
  static std::vector<JournaledState*> live();

 protected:
  JournaledState();
  JournaledState(const JournaledState&);
  JournaledState& operator=(const JournaledState&) { return *this; }
  ~JournaledState();
};

}  // namespace strata::detail
