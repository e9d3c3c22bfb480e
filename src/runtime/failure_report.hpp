// What a rank says when it is stopped from outside. When one rank of an mpirun job
// dies (killed, crashed), the launcher stops the others with SIGTERM; without a word
// from them the user sees only the launcher's note about the dead rank. Each rank
// therefore keeps a short description of what it is doing (the loop call, the
// blocking wait) and prints it when stopped:
//   [strata] rank 0: stopped by signal 15 (from the launcher: another rank has probably
//   failed) during loop call 7 at strata.cpp:57:13, waiting in 2-D block receive
// A rank that stays alive but stops answering is caught by the communicator's
// timeout instead (TimeoutError naming the operation, RuntimeOptions::timeout_seconds).
#pragma once

#include <string_view>

namespace strata::detail {

/// Installs the SIGTERM / SIGINT / SIGHUP handler that prints the line above and then
/// dies by the same signal. Called by the Runtime under mpirun.
void report_launcher_stops(int rank);

/// The loop call this process is in ("" when none), for that line only.
void note_loop_call(std::string_view what);
/// The blocking wait this process is in ("" when none), for that line only.
void note_wait(std::string_view what);

}  // namespace strata::detail
