#include "recovery/loop_calls.hpp"
#include "recovery/run_checkpoint.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/failure_report.hpp"
#include "strata/detail/stopwatch.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/buffer_base.hpp"
#include "strata/detail/journaled_state.hpp"
#include "strata/runtime.hpp"

namespace strata::recovery {

LoopCalls::LoopCalls(Runtime& rt)
    : rt_(rt),
      checkpoint_dir_(rt.options().checkpoint_dir),
      resume_dir_(rt.options().resume_dir),
      every_(rt.options().checkpoint_every),
      id_base_(detail::ArrayBase::ids_before_live()),
      record_(std::make_unique<ExecutionRecord>(rt)),
      background_(rt.options().checkpoint_in_background) {}

LoopCalls::~LoopCalls() = default;

bool LoopCalls::begin(const std::source_location& where) {
  ++call_;
  site_ = detail::site_label(where);
  detail::note_loop_call(fmt::format("loop call {} at {}", call_, site_));
  if (record_->mode() == ExecutionRecord::Mode::replay || record_->mode() == ExecutionRecord::Mode::serial_replay)
    expected_ = &record_->expect(call_, site_);
  if (!resume_dir_.empty() && !resume_opened_) open_resume_point();
  if (!resume_) return false;
  const RunManifest& m = resume_->manifest;
  const std::string& then = resume_->journals[0][static_cast<std::size_t>(call_ - 1)].site;
  if (then != site_)
    throw CheckpointError(fmt::format("{}: loop call {} of the checkpointed run was at {}, this run's is at {} "
                                      "(another program, or other options?)",
                                      manifest_path(), call_, then, site_));
  restore_states();
  journal_.push_back(record_now());
  ++skipped_;
  if (call_ == m.call) {
    load_arrays();
    changing_calls_ = m.changing_calls;
    for (const auto& a : m.arrays) changed_ever_.push_back(id_base_ + a.id);
    std::sort(changed_ever_.begin(), changed_ever_.end());
    rt_.log_once("resumed from {}: skipped loop calls 1-{}, loaded {} array(s)", resume_->dir.string(), m.call,
                 m.arrays.size());
    resume_.reset();
  }
  detail::note_loop_call("");
  return true;
}

bool LoopCalls::replaying_serially() const {
  const auto mode = record_->mode();
  if (mode == ExecutionRecord::Mode::serial_replay) return true;
  if (mode != ExecutionRecord::Mode::replay || !expected_ || rt_.size() != 1 || rt_.threads() != 1) return false;
  for (const auto id : expected_->relaxed)
    if (const auto* t = detail::BufferBase::relaxed_table(id); t && values_depend_on_timing(t->consistency()))
      return true;
  return false;
}

bool LoopCalls::replaying() const {
  const auto mode = record_->mode();
  return mode == ExecutionRecord::Mode::replay || mode == ExecutionRecord::Mode::serial_replay;
}

void LoopCalls::end(const CallOutcome& outcome) {
  detail::note_loop_call("");
  record_->after_call(call_, site_, outcome);
  const auto& changed = outcome.changed;
  for (const auto id : changed)
    if (!std::binary_search(changed_ever_.begin(), changed_ever_.end(), id))
      changed_ever_.insert(std::upper_bound(changed_ever_.begin(), changed_ever_.end(), id), id);
  journal_.push_back(record_now());
  if (pending_) {
    // On to the next step once every rank's background work is over; the ranks agree
    // on when.
    const auto clock = std::chrono::steady_clock::now();
    if (rt_.comm().allreduce(pending_->ready() ? 1 : 0, ReduceOp::min) == 1) advance_pending();
    times_.commit_seconds += detail::seconds_since(clock);
  }
  if (changed.empty()) return;
  ++changing_calls_;
  if (!checkpoint_dir_.empty() && every_ > 0 && changing_calls_ % every_ == 0) checkpoint();
}

void LoopCalls::finish_checkpoints() {
  if (!pending_) return;
  const auto clock = std::chrono::steady_clock::now();
  commit_pending();
  times_.final_seconds += detail::seconds_since(clock);
}

void LoopCalls::advance_pending() {
  std::unique_ptr<PendingCheckpoint> p = std::move(pending_);
  p->advance();  // on failure p goes, and with it the unfinished checkpoint
  if (!p->done()) {
    pending_ = std::move(p);
    return;
  }
  ++times_.written;
  times_.write_seconds += p->write_seconds();
  storage_ = p->take_storage();
  rt_.debug("checkpoint after loop call {} committed to {} (written in {:.3f} s)", p->call(), checkpoint_dir_,
            p->write_seconds());
}

void LoopCalls::commit_pending() {
  while (pending_) {
    pending_->wait();
    advance_pending();
  }
}

std::string LoopCalls::manifest_path() const { return (resume_->dir / detail::kManifestName).string(); }

void LoopCalls::open_resume_point() {
  resume_opened_ = true;
  resume_ = read_resume_point(rt_, resume_dir_);
  if (!resume_) {
    rt_.log_once("{} holds no checkpoint yet: starting from the beginning", resume_dir_);
    return;
  }
  // Refuse a checkpoint that does not fit before skipping anything.
  resumed_with_ = resume_->manifest.settings;
  resumed_manifest_ = manifest_path();
  for (const auto& b : bound_) check_setting(b);
  check_unbound_settings();
  check_arrays(false);
}

void LoopCalls::bind(const std::string& name, const std::string& value) {
  auto bad = [](std::string_view s, bool spaces) {
    for (const char c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F || (spaces && c == ' ')) return true;
    return false;
  };
  if (name.empty() || bad(name, true))
    throw OptionError(fmt::format("bind_checkpoints: the name '{}' must be one word without control characters",
                                  printable(name, 80)));
  if (bad(value, false))
    throw OptionError(fmt::format("bind_checkpoints: the value of {} must not hold control characters (newlines)",
                                  name));
  for (const auto& b : bound_) {
    if (b.name != name) continue;
    if (b.value != value)
      throw OptionError(fmt::format("bind_checkpoints: {} is bound to '{}' already; it cannot become '{}'", name,
                                    printable(b.value, 80), printable(value, 80)));
    return;
  }
  bound_.push_back({name, value});
  if (resumed_with_) check_setting(bound_.back());  // bound after the resume point was opened
}

// A setting this run binds must have been recorded with the same value.
void LoopCalls::check_setting(const BoundSetting& mine) const {
  for (const auto& then : *resumed_with_) {
    if (then.name != mine.name) continue;
    if (then.value == mine.value) return;
    throw CheckpointError(fmt::format("{}: the checkpoint was written with {} {}; this run has {} {}. Resume with "
                                      "the same {}, or start afresh",
                                      resumed_manifest_, mine.name, printable(then.value, 120), mine.name,
                                      printable(mine.value, 120), mine.name));
  }
  throw CheckpointError(fmt::format("{}: the checkpoint was written by a run that did not set {}; this run has {} {}",
                                    resumed_manifest_, mine.name, mine.name, printable(mine.value, 120)));
}

// A setting the checkpointed run recorded must be bound by this one too, before its
// first loop call.
void LoopCalls::check_unbound_settings() const {
  for (const auto& then : *resumed_with_) {
    auto same_name = [&](const BoundSetting& b) { return b.name == then.name; };
    const bool bound = std::any_of(bound_.begin(), bound_.end(), same_name);
    if (!bound)
      throw CheckpointError(fmt::format("{}: the checkpoint was written with {} {}, which this run does not set "
                                        "(another program, or another version of it?)",
                                        resumed_manifest_, printable(then.name, 80), printable(then.value, 120)));
  }
}

CallRecord LoopCalls::record_now() const {
  CallRecord r{site_, {}};
  for (const auto* s : strata::detail::JournaledState::live()) r.states.push_back(s->journal_bytes());
  return r;
}

void LoopCalls::restore_states() {
  const RunManifest& m = resume_->manifest;
  const auto at = static_cast<std::size_t>(call_ - 1);
  const auto live = strata::detail::JournaledState::live();
  const std::size_t then = resume_->journals[0][at].states.size();
  if (then != live.size())
    throw CheckpointError(fmt::format("{}: after loop call {} the checkpointed run had {} accumulator(s) alive, this "
                                      "run has {} (another program?)",
                                      manifest_path(), call_, then, live.size()));
  const bool same_layout = m.ranks == rt_.size() && m.threads == rt_.threads();
  for (std::size_t i = 0; i < live.size(); ++i) {
    std::vector<std::span<const std::byte>> parts;
    for (const auto& journal : resume_->journals) {
      const auto& states = journal[at].states;
      if (states.size() != then) throw CheckpointError("the ranks' journals disagree (corrupted checkpoint)");
      parts.emplace_back(states[i]);
    }
    live[i]->restore_journal(parts, rt_.rank(), same_layout);
  }
}

// Checks the checkpoint's arrays against this run's: type and shape, and a Buffer
// where owner state was saved. Arrays the program has not created yet are checked
// when they are loaded (`all_exist`).
void LoopCalls::check_arrays(bool all_exist) const {
  const RunManifest& m = resume_->manifest;
  const std::string where = manifest_path();
  for (const auto& a : m.arrays) {
    auto* array = detail::ArrayBase::find_array(id_base_ + a.id);
    const std::string label = a.name.empty() ? fmt::format("array #{}", a.id) : a.name;
    if (!array && !all_exist) continue;
    if (!array)
      throw CheckpointError(fmt::format("{}: {} does not exist in this run at loop call {} (another program?)", where,
                                        label, m.call));
    if (array->type_tag() != a.tag || array->shape_vector() != a.shape)
      throw CheckpointError(fmt::format("{}: {} was checkpointed as {} [{}]; this run's {} is {} [{}] (another "
                                        "program, or other options?)",
                                        where, label, a.tag, fmt::join(a.shape, ", "), detail::array_label(*array),
                                        array->type_tag(), fmt::join(array->shape_vector(), ", ")));
    if (a.owner_state && all_exist) {
      auto* b = detail::BufferBase::find_buffer(id_base_ + a.id);
      if (!b || !b->has_owner_state())
        throw CheckpointError(fmt::format("{}: {} was written through a Buffer with owner state; this run has no such "
                                          "Buffer over it",
                                          where, label));
    }
  }
}

void LoopCalls::load_arrays() {
  const RunManifest& m = resume_->manifest;
  // Every array is checked and read before any is changed: nothing is half-loaded.
  check_arrays(true);
  std::vector<std::function<void()>> puts;
  for (const auto& a : m.arrays) {
    auto* array = detail::ArrayBase::find_array(id_base_ + a.id);
    puts.push_back(array->stage_load(resume_->dir / saved_array_dir(a.id)));
    if (a.owner_state)
      puts.push_back(detail::BufferBase::find_buffer(id_base_ + a.id)->stage_owner_state(
          resume_->dir / saved_state_dir(a.id), a.rounds));
  }
  for (auto& put : puts) put();
}

void LoopCalls::checkpoint() {
  if (pending_) {  // one checkpoint in flight at a time
    const auto clock = std::chrono::steady_clock::now();
    commit_pending();
    times_.commit_seconds += detail::seconds_since(clock);
  }
  const auto clock = std::chrono::steady_clock::now();
  RunManifest m;
  m.program = program_name();
  m.ranks = rt_.size();
  m.threads = rt_.threads();
  m.seed = rt_.seed();
  m.call = call_;
  m.changing_calls = changing_calls_;
  m.site = site_;
  m.settings = bound_;
  pending_ = std::make_unique<PendingCheckpoint>(rt_, checkpoint_dir_, m, changed_ever_, id_base_, journal_,
                                                 background_, std::move(storage_));
  storage_.clear();
  times_.copy_seconds += detail::seconds_since(clock);
  if (!background_) {
    const auto commit_clock = std::chrono::steady_clock::now();
    commit_pending();
    times_.commit_seconds += detail::seconds_since(commit_clock);
  }
}

}  // namespace strata::recovery
