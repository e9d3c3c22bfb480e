// Named string settings with defaults and help: the keys of `--synthetic SPEC` and
// an app's own options. Values stay text until an app asks for them typed, so the
// error for a bad value names the option the user wrote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::apps {

class Settings {
 public:
  struct Entry {
    std::string name, value, help;
  };

  /// `origin` is how users write a key, for messages: "--" for options (--lr),
  /// "--synthetic " for spec keys (--synthetic users).
  explicit Settings(std::string origin = "--") : origin_(std::move(origin)) {}

  /// Adds a key with its default value.
  Settings& declare(std::string name, std::string default_value, std::string help);

  bool has(const std::string& name) const;
  /// Sets a declared key; OptionError naming the known keys for an unknown one.
  void set(const std::string& name, const std::string& value);
  /// Sets every key of "key=value,key=value"; OptionError for a malformed part.
  void parse_spec(const std::string& spec);

  const std::string& text(const std::string& name) const;
  /// Typed getters: OptionError naming the key, the text and the allowed range when it
  /// does not parse or is out of range (values are checked before any narrowing).
  std::int64_t integer(const std::string& name, std::int64_t min, std::int64_t max = INT64_MAX) const;
  double real(const std::string& name, double min, double max) const;
  /// The value, which must be one of `choices`.
  const std::string& choice(const std::string& name, const std::vector<std::string>& choices) const;

  const std::vector<Entry>& entries() const { return entries_; }
  /// "users=50000,items=5000,...": every key with its current value.
  std::string describe() const;

 private:
  const Entry& get(const std::string& name) const;
  std::string origin_;
  std::vector<Entry> entries_;
};

}  // namespace strata::apps
