// A job in which one rank misbehaves, for the failure-handling tests:
//   failure_probe hang   rank 1 sleeps past the timeout instead of joining a barrier
//   failure_probe die    rank 1 exits abruptly before a collective
// In both cases the job must end, non-zero, with a message naming the rank and the
// operation (hang) or the dead process (die, reported by mpirun).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "strata/error.hpp"
#include "strata/runtime.hpp"

int main(int argc, char** argv) {
  strata::RuntimeOptions defaults;
  defaults.timeout_seconds = 2;
  strata::Runtime rt(argc, argv, defaults);
  const bool hang = argc > 1 && std::strcmp(argv[1], "hang") == 0;
  rt.comm().barrier();  // everyone is up
  try {
    if (rt.rank() == 1) {
      if (hang) std::this_thread::sleep_for(std::chrono::seconds(30));
      else _exit(3);
    }
    rt.comm().barrier();
    std::printf("rank %d: barrier completed\n", rt.rank());
  } catch (const strata::TimeoutError& e) {
    std::fprintf(stderr, "caught TimeoutError: %s\n", e.what());
    return 1;  // the Runtime sees the broken communicator and aborts the job
  }
  return 0;
}
