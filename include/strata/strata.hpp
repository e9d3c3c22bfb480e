// Strata's public API in one include: what a training program needs.
//
//   #include "strata/strata.hpp"
//
// The runtime (ranks and threads), distributed arrays and their loaders and
// checkpoints, the two loops (parallel_for keeps the serial loop's dependences;
// sync_for runs mini-batches on copies of dense models), accumulators, the
// parameter-server path for relaxed arrays (Buffer, consistency models, apply
// functions), and what a program may ask of automatic checkpoints and resuming
// (recovery.hpp). Finer headers stay usable on their own; everything under detail/
// and every name in a `detail` namespace is the engine's, not the API.
#pragma once

#include "strata/apply.hpp"
#include "strata/array_reader.hpp"
#include "strata/buffer.hpp"
#include "strata/buffer_writer.hpp"
#include "strata/dist_array.hpp"
#include "strata/error.hpp"
#include "strata/index.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/load.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "strata/random.hpp"
#include "strata/recovery.hpp"
#include "strata/relaxed.hpp"
#include "strata/runtime.hpp"
#include "strata/sync_for.hpp"
