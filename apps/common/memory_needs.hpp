// What a run will allocate for sizes the user gave (the --synthetic keys), checked
// against the machine's memory before anything is allocated: a size far too large is
// an OptionError naming the option, not std::bad_alloc or a process the kernel kills
// after it has grown for minutes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::apps {

class MemoryNeeds {
 public:
  /// `count` items of about `bytes_each` bytes, for the size the user gave as `what`
  /// ("--synthetic ratings=1000000000000"). Estimates: what the app allocates for
  /// them at its peak, not less.
  MemoryNeeds& add(std::string what, double count, double bytes_each);

  /// OptionError naming the largest need when all of them together exceed the
  /// machine's memory.
  void check() const;

 private:
  struct Need {
    std::string what;
    double bytes;
  };
  std::vector<Need> needs_;
};

}  // namespace strata::apps
