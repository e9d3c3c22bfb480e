// Typed errors. Every error a user can cause names what went wrong and where
// (file and line, option, array, rank and operation), so a failed run is
// diagnosable from its one-line message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace strata {

/// Base of every error Strata raises.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A communication operation failed (MPI returned an error).
class CommError : public Error {
 public:
  CommError(std::string op, int rank, const std::string& detail);
  const std::string& operation() const { return op_; }
  int rank() const { return rank_; }

 private:
  std::string op_;
  int rank_;
};

/// A blocking wait exceeded its deadline; names what was waited for.
class TimeoutError : public Error {
 public:
  TimeoutError(std::string op, int rank, double seconds);
  const std::string& operation() const { return op_; }
  int rank() const { return rank_; }

 private:
  std::string op_;
  int rank_;
};

/// A malformed input record: names the file, the 1-based line number and the text.
class ParseError : public Error {
 public:
  ParseError(std::string file, std::int64_t line, std::string text, const std::string& reason);
  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }
  const std::string& text() const { return text_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string text_;
  std::string reason_;
};

/// A file could not be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

/// A checkpoint is missing, truncated, corrupted or does not fit the request.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

/// A replay (RuntimeOptions::replay_dir) does not follow its record: another loop
/// site, or an array that came out different after a loop call.
class ReplayError : public Error {
 public:
  using Error::Error;
};

/// Shapes, indices or partitions do not fit together.
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// A bad option value (names the option).
class OptionError : public Error {
 public:
  using Error::Error;
};

/// An internal invariant was broken: a bug in Strata, reported with file:line.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// `text` made safe to print in a one-line message: control characters (terminal
/// escape sequences among them), C1 controls and bytes that are not UTF-8 are written
/// as \xNN, and the result is cut after about `max` characters ("...").
std::string printable(std::string_view text, std::size_t max = 200);

namespace detail {
[[noreturn]] void fail_check(const char* expr, const char* file, int line, const std::string& msg);
}  // namespace detail

}  // namespace strata

/// Checks an invariant; on failure throws InternalError naming file:line and the expression.
#define STRATA_CHECK(cond, msg)                                                   \
  do {                                                                            \
    if (!(cond)) ::strata::detail::fail_check(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
