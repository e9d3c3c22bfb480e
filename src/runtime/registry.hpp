// A process-wide list of the live objects of one kind, in the order they enrolled,
// optionally by key: arrays by id (planning finds every array a loop touches), Buffers
// by the id of their array, the states a loop call journals or undoes. One
// implementation, so each kind's constructor and destructor only enrol and withdraw.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace strata::detail {

class Registry {
 public:
  /// Enrols `object`, under `key` unless it is 0. False (and nothing enrolled) when
  /// another object holds the key.
  bool enroll(void* object, std::uint64_t key = 0);
  /// Points `key` at `object`, replacing whatever held it (an array moved into takes
  /// its source's id). Keyed this way only: the object is not in live().
  void replace(void* object, std::uint64_t key);
  /// Removes `object`; its key is freed only if it still holds it.
  void withdraw(void* object, std::uint64_t key = 0);
  void* find(std::uint64_t key) const;
  /// The lowest key held, or 0 when none is.
  std::uint64_t lowest_key() const;
  /// Every live object, oldest first.
  std::vector<void*> live() const;

 private:
  mutable std::mutex mu_;
  std::vector<void*> order_;
  std::unordered_map<std::uint64_t, void*> by_key_;
};

/// The typed face of a Registry of T.
template <class T>
class RegistryOf {
 public:
  bool enroll(T* object, std::uint64_t key = 0) { return registry_.enroll(object, key); }
  void replace(T* object, std::uint64_t key) { registry_.replace(object, key); }
  void withdraw(T* object, std::uint64_t key = 0) { registry_.withdraw(object, key); }
  T* find(std::uint64_t key) const { return static_cast<T*>(registry_.find(key)); }
  std::uint64_t lowest_key() const { return registry_.lowest_key(); }
  std::vector<T*> live() const {
    std::vector<T*> out;
    for (void* p : registry_.live()) out.push_back(static_cast<T*>(p));
    return out;
  }

 private:
  Registry registry_;
};

/// The process's registry of T, created on first use (so it outlives every static
/// object that enrols).
template <class T>
RegistryOf<T>& registry_of() {
  static RegistryOf<T> registry;
  return registry;
}

}  // namespace strata::detail
