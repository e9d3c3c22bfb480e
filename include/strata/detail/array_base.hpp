// How a running loop sees array accesses.
//
// Loop bodies access DistArrays through ordinary accessors (W.row(i), A(i, j),
// v[k], at(index)). Each accessor remembers its call site (std::source_location, via
// the At argument type) and, while a loop analysis or a checked execution is active
// on the calling thread, reports the access to that thread's AccessObserver. Outside
// such phases the cost is one thread-local load and a predictable branch.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "strata/detail/cache_view.hpp"
#include "strata/partition.hpp"

namespace strata {

/// A subscript argument that remembers where in the user's code it was written; it
/// converts implicitly from any integer, so `W.row(u)` just works.
struct At {
  std::int64_t value;
  std::source_location where;
  template <std::integral I>
  At(I v, std::source_location w = std::source_location::current())  // NOLINT: implicit by design
      : value(static_cast<std::int64_t>(v)), where(w) {}
};

namespace detail {

struct CheckpointSnapshot;  // strata/io/checkpoint_format.hpp
struct LentUnit;            // strata/detail/array_movement.hpp

/// While a re-validating run claims its accesses (src/loop/ownership.hpp): where an
/// array's accessors take the common claims in place instead of calling
/// `t_claims`. A unit is a row (`by_row`) or an element of the whole array, numbered in
/// row-major order, `stride` entries from the next.
///  * `marks` (one worker a rank: nothing can conflict): a byte per unit, whose bits
///    the accessor sets.
///  * `states` (several workers): the unit's claim word; an access its worker already
///    holds as it needs (the word's low 16 bits: the worker's tag t_claim_tag after a
///    read by it alone, `shared` after reads by several, `written_by | tag` after its
///    write) goes on; every other case calls the claims.
///  * `absent` (a mark bit): the unit is not held by this rank for the call (a spread
///    plan's rank holds its part and the units its groups touch); any access to it
///    calls the claims, which refuse it before it reads.
///  A write goes on in place only where the unit's mark already says written: the
///  first write of a unit in a run calls the claims, which save its old bytes for an
///  undo (loop/write_log.hpp) or refuse it (an array the loop only reads).
///  * neither (a run that logs writes only: src/loop/wavefront_ranks.hpp): reads, and
///    writes to units below `claims_from`, go on; other writes call the claims.
struct ClaimView {
  static constexpr std::uint8_t touched = 1, written = 2, absent = 4;
  static constexpr std::uint64_t shared = 0x3fff, written_by = 0x8000, state_bits = 0xffff;
  /// The bits a mark of an access sets.
  static constexpr std::uint8_t mark_of(bool write) { return write ? touched | written : touched; }
  /// Whether the worker of `tag` already holds a unit whose claim word is `word` as an
  /// access that writes (or only reads) needs: the claim then changes nothing.
  static constexpr bool holds(std::uint64_t word, std::uint64_t tag, bool write) {
    const std::uint64_t state = word & state_bits;
    return state == (written_by | tag) || (!write && (state == tag || state == shared));
  }
  std::uint8_t* marks = nullptr;
  const std::atomic<std::uint64_t>* states = nullptr;
  std::size_t stride = 1;
  bool by_row = false;
  std::size_t claims_from = 0;  ///< without marks or states: the first unit whose writes are claimed
};
/// The claim tag (worker + 1) of the run on this thread (see ClaimView).
inline thread_local std::uint64_t t_claim_tag = 0;

/// buffered: a delta written through a Buffer, which never creates dependences.
enum class AccessMode : std::uint8_t { read, write, read_write, buffered };

/// While the verifying first run of a partitioned plan lets the accessors pass in place
/// what no other worker can touch at the time (src/loop/windows.hpp): indices of
/// dimension `dim` inside the running thread's window [bounds[2 t], bounds[2 t + 1])
/// (t = t_worker), or anywhere when `dim` is negative; writes only where `writes`.
/// Everything else goes to the run's observer, which checks it against the plan.
struct WindowView {
  int dim = -1;
  bool writes = false;
  const std::int64_t* bounds = nullptr;
};

/// The type-erased face of a DistArray that loop machinery needs.
class ArrayBase {
 public:
  virtual ~ArrayBase() { withdraw(); }
  /// Identity of the array within the job: arrays are created in the same order on
  /// every rank (SPMD), so ids agree across ranks.
  std::uint64_t array_id() const { return id_; }
  const std::string& name() const { return name_; }
  /// During a relaxed run without checks: the rank's cache of this array, which the
  /// accessors read directly (detail/cache_view.hpp); nullptr otherwise.
  const CacheView* cache_view() const { return cache_view_; }
  void set_cache_view(const CacheView* view) { cache_view_ = view; }
  /// While a run claims this array's units in place (see ClaimView); nullptr
  /// otherwise. The array's storage then holds the whole array.
  const ClaimView* claim_view() const { return claim_view_; }
  void set_claim_view(const ClaimView* view) { claim_view_ = view; }
  /// During a verifying run that checks this array's accesses in place (WindowView);
  /// nullptr otherwise.
  const WindowView* window_view() const { return window_view_; }
  void set_window_view(const WindowView* view) { window_view_ = view; }
  /// The number of dimensions (N of DistArray<T, N>).
  virtual int dimension_count() const = 0;
  virtual std::vector<std::int64_t> shape_vector() const = 0;
  virtual bool is_sparse_array() const = 0;
  virtual const Distribution& distribution_of() const = 0;
  virtual void repartition_to(const Partition& p) = 0;
  virtual std::size_t element_size() const = 0;
  /// The local values as bytes (dense: box order; sparse: key order).
  virtual std::span<std::byte> local_bytes() = 0;
  /// Collective, dense arrays: every rank's storage becomes the whole array (gathered),
  /// so blocks of rows along dimension 0 can travel between ranks during a loop.
  virtual void travel_begin() = 0;
  /// Collective, dense arrays, for conflict groups spread over the ranks: the storage
  /// addresses the whole array and holds this rank's part and the units in `needed`
  /// (ascending; `unit_elems` consecutive row-major elements each) from their owners;
  /// the rest costs no memory and reads as zeros (where it shares no page with the
  /// part: storage a previous call left is reused). travel_drop ends it.
  /// `lent` (when given) gets the units other ranks asked for whose first element is
  /// in this rank's part.
  virtual void travel_begin_units(std::span<const std::uint64_t> needed, std::size_t unit_elems,
                                  std::vector<LentUnit>* lent) = 0;
  /// Collective, dense arrays, for the time blocks of a 2-D plan (block b is rows
  /// [rows[b], rows[b+1]) along dimension 0; home_rank[b] is the rank it starts and ends
  /// a journey on): the storage addresses the whole array, but holds only the rows of
  /// this rank's home blocks; the rest costs no memory until a block arrives
  /// (DenseStorage), and a block that leaves is released again. Where the array's part
  /// is exactly its home blocks (2-D plans lay it out so), nothing moves.
  virtual void travel_begin(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) = 0;
  /// Collective: back to the partition held before travel_begin, every block b on rank
  /// home_rank[b] again. Where the part is the home blocks, the storage keeps them in
  /// place and gives the rest back (no communication).
  virtual void travel_end(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) = 0;
  /// After travel_begin on an array the loop only read (every rank holds the same
  /// whole array), or after travel_begin_units: back to the partition held before,
  /// keeping this rank's part (in place where it is a range of rows). Local, no
  /// communication.
  virtual void travel_drop() = 0;
  /// Local: a copy of this rank's part of the array, with its checkpoint manifest
  /// (strata/io/checkpoint.hpp), for automatic checkpoints to write in the background.
  /// The copy goes into `storage` (an earlier snapshot's, to spare the allocation).
  virtual CheckpointSnapshot checkpoint_snapshot(std::vector<std::byte> storage) const = 0;
  /// Collective: reads and verifies the checkpoint in `dir`, which must hold an array
  /// of this one's element type and shape, and returns the step that puts its values
  /// in place (keeping this array's identity). Nothing changes before that step runs,
  /// so a caller can verify several arrays before changing any. Throws
  /// CheckpointError on every rank if the checkpoint does not fit.
  virtual std::function<void()> stage_load(const std::filesystem::path& dir) = 0;
  /// The element type as checkpoints name it ("f32", "i32[3]", ...).
  virtual std::string type_tag() const = 0;
  /// Collective: a 64-bit fingerprint of the array's indices and values that does not
  /// depend on how it is partitioned (a sum of per-element hashes). Replays compare it.
  virtual std::uint64_t content_fingerprint() const = 0;

 /// The live array with this id on this rank, or nullptr.
  static ArrayBase* find_array(std::uint64_t id);
  /// The ids handed out before the oldest live array's (all of them when none is
  /// live). A run's checkpoints number its arrays from there (id - ids_before_live()
  /// at the run's start), so a process that runs one program after another (the
  /// Python module's calls) resumes each as a process of its own would.
  static std::uint64_t ids_before_live();
  /// Bumped by every change of the array's structure (partition, keys, shape).
  std::uint64_t structure_version() const { return version_; }

 protected:
  ArrayBase() : id_(t_anonymous ? 0 : next_id()) { enroll(); }
  ArrayBase(const ArrayBase& o) : id_(t_anonymous ? 0 : next_id()), name_(o.name_) { enroll(); }
  ArrayBase(ArrayBase&& o) noexcept : id_(o.id_), name_(std::move(o.name_)), version_(o.version_) {
    o.id_ = 0;
    enroll();
  }
  ArrayBase& operator=(const ArrayBase& o) {
    name_ = o.name_;
    ++version_;
    return *this;
  }
  // Assigning a new value keeps this array's identity (a plan cached for `W` stays
  // keyed to W after `W = other`; its structure version changes).
  ArrayBase& operator=(ArrayBase&& o) noexcept {
    if (!o.name_.empty()) name_ = std::move(o.name_);
    ++version_;
    return *this;
  }
  void rename(std::string n) { name_ = std::move(n); }

  /// Set while the library builds a temporary array that only carries data into an
  /// existing one (repartitioning, loading a checkpoint): such arrays take no id, so
  /// the ids of the user's arrays depend only on the order the program creates them,
  /// not on which loops ran before (a resumed run skips some), and checkpoints can
  /// name arrays by id.
  static inline thread_local bool t_anonymous = false;
  friend class AnonymousArrays;
  void touch_structure() { ++version_; }
  /// After data movement that ends in the structure the array had at version `v`
  /// (a 2-D loop's travelling rows going home): plans built for it stay valid.
  void restore_structure_version(std::uint64_t v) { version_ = v; }

 private:
  static std::uint64_t next_id();
  void enroll();
  void withdraw();
  std::uint64_t id_;
  std::string name_;
  std::uint64_t version_ = 0;
  const CacheView* cache_view_ = nullptr;
  const ClaimView* claim_view_ = nullptr;
  const WindowView* window_view_ = nullptr;
};

/// Receives the accesses of the loop running on this thread.
class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  /// `index` holds all N subscripts (the last is 0 for a row access, whole_last set).
  /// `real` points at the local element or row (nullptr when not local), `bytes` is
  /// its size. Returns the memory the accessor should hand out instead (scratch
  /// during analysis), or nullptr to use `real`.
  virtual void* on_access(ArrayBase& array, const std::source_location& where, AccessMode mode,
                          std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) = 0;
};

/// While alive, arrays created on this thread are temporaries without an id (see
/// ArrayBase::t_anonymous).
class AnonymousArrays {
 public:
  AnonymousArrays() : before_(ArrayBase::t_anonymous) { ArrayBase::t_anonymous = true; }
  ~AnonymousArrays() { ArrayBase::t_anonymous = before_; }
  AnonymousArrays(const AnonymousArrays&) = delete;
  AnonymousArrays& operator=(const AnonymousArrays&) = delete;

 private:
  bool before_;
};

/// "file.cpp:42:17": how plans, explain output and errors name an access site.
std::string site_label(const std::source_location& where);

/// Whether two source_locations name the same call site. Equal bytes (one pointer in
/// libstdc++) certainly do, which is the check hot paths make first.
inline bool identical_site(const std::source_location& a, const std::source_location& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_site(const std::source_location& a, const std::source_location& b);

/// "W", or "array#3" for an unnamed array: how plans and messages name arrays.
std::string array_label(const ArrayBase& array);
/// The same for the array with this id, or "#id" when no such array exists.
std::string array_label(std::uint64_t array_id);

/// The observer of the loop running on this thread, if any.
inline thread_local AccessObserver* t_observer = nullptr;

/// Claims every access of a run before it touches memory, and throws to stop the
/// run when a claim conflicts: how a conflict-groups plan is re-validated at full
/// speed (src/loop/ownership.hpp). Never set together with an observer.
class AccessClaims {
 public:
  virtual void claim(const ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
                     AccessMode mode) = 0;

 protected:
  ~AccessClaims() = default;
};
inline thread_local AccessClaims* t_claims = nullptr;

}  // namespace detail
}  // namespace strata
