#include "metrics_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>
#include <system_error>

#include "strata/error.hpp"
#include "strata/io/files.hpp"

namespace strata::cli {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = s.find(sep);
    parts.push_back(trim(s.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

// A full field as a double; nan and inf accepted, a leading '+' too.
std::optional<double> to_number(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A metadata value as written: bare when it is one plain word, else in double quotes
// with backslash, quote, newline, carriage return and tab escaped C-style.
std::string quote_value(std::string_view s) {
  const bool plain = !s.empty() && std::none_of(s.begin(), s.end(), [](unsigned char c) {
    return c <= ' ' || c == '"' || c == 0x7f;
  });
  if (plain) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + '"';
}

// "# key=value key=\"quoted value\"": pairs into `meta`. A word without '=' continues
// the previous pair's value (so a hand-written `# run=my label` reads as "my label"),
// or before any pair is free comment text.
void parse_meta(std::string_view line, std::map<std::string, std::string>& meta) {
  std::string* value = nullptr;
  std::size_t i = 1;  // after the '#'
  for (;;) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size()) return;
    std::size_t j = i;
    while (j < line.size() && !is_blank(line[j]) && line[j] != '=') ++j;
    // A word without '=' (or starting with one).
    if (j == i || j == line.size() || line[j] != '=') {
      while (j < line.size() && !is_blank(line[j])) ++j;
      if (value) *value += ' ' + std::string(line.substr(i, j - i));
      i = j;
      continue;
    }
    value = &meta[std::string(line.substr(i, j - i))];
    value->clear();
    i = j + 1;
    if (i < line.size() && line[i] == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        char c = line[i];
        if (c == '\\' && i + 1 < line.size()) {
          c = line[++i];
          c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
        }
        *value += c;
      }
      ++i;  // the closing quote (an unclosed value ends with the line)
    } else {
      while (i < line.size() && !is_blank(line[i])) *value += line[i++];
    }
  }
}

// Why `name` cannot be a column name, or "" when it can.
std::string bad_column_name(std::string_view name) {
  if (name.empty()) return "is empty";
  for (const unsigned char c : name)
    if (c < ' ' || c == 0x7f) return "holds a control character";
  if (name.find(',') != std::string_view::npos) return "holds a ','";
  if (name.front() == '#') return "starts with '#'";
  if (trim(name).size() != name.size()) return "has leading or trailing blanks";
  return "";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<std::size_t> MetricsTable::find_column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return std::nullopt;
}

std::vector<double> MetricsTable::column(const std::string& name) const {
  const auto at = find_column(name);
  if (!at)
    throw OptionError(fmt::format("no column '{}' in {} (columns: {})", name,
                                  source.empty() ? "the metrics table" : "'" + source + "'",
                                  joined(columns)));
  std::vector<double> values;
  values.reserve(rows.size());
  for (const auto& row : rows) values.push_back(row.at(*at));
  return values;
}

std::vector<std::string> MetricsTable::metric_columns() const {
  const auto& standard = standard_metrics_columns();
  std::vector<std::string> out;
  for (const auto& c : columns)
    if (std::find(standard.begin(), standard.end(), c) == standard.end()) out.push_back(c);
  return out;
}

void write_file_atomically(const std::string& path, std::string_view content) {
  detail::write_file_replacing(path, content);
}

void write_metrics_csv(const std::string& path, const MetricsTable& table) {
  std::set<std::string_view> seen;
  for (const auto& c : table.columns) {
    if (const auto why = bad_column_name(c); !why.empty())
      throw OptionError(fmt::format("metrics file '{}': column name '{}' {}", path, c, why));
    if (!seen.insert(c).second)
      throw OptionError(fmt::format("metrics file '{}': column '{}' appears twice", path, c));
  }
  if (!table.find_column("pass"))
    throw OptionError(fmt::format("metrics file '{}': no 'pass' column (columns: {})", path,
                                  joined(table.columns)));
  for (const auto& [key, value] : table.meta) {
    const bool plain = std::none_of(key.begin(), key.end(), [](unsigned char c) {
      return c <= ' ' || c == '=' || c == '"' || c == 0x7f;
    });
    if (key.empty() || !plain)
      throw OptionError(
          fmt::format("metrics file '{}': metadata key '{}' is empty or holds a blank, control "
                      "character, '=' or '\"'",
                      path, key));
  }

  std::string out;
  if (!table.meta.empty()) {
    out += '#';
    for (const auto& [key, value] : table.meta) out += ' ' + key + '=' + quote_value(value);
    out += '\n';
  }
  out += fmt::format("{}\n", fmt::join(table.columns, ","));
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    if (row.size() != table.columns.size())
      throw ShapeError(fmt::format("metrics file '{}': row {} has {} values for {} columns", path,
                                   r, row.size(), table.columns.size()));
    for (std::size_t i = 0; i < row.size(); ++i)
      fmt::format_to(std::back_inserter(out), "{}{}", i ? "," : "", row[i]);
    out += '\n';
  }
  write_file_atomically(path, out);
}

MetricsTable read_metrics_csv(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw IoError(fmt::format("cannot open metrics file '{}': {}", path, std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed)
    throw IoError(fmt::format("cannot read metrics file '{}': {}", path, std::strerror(err)));

  MetricsTable table;
  table.source = path;
  std::int64_t line_no = 0;
  std::string_view rest = text;
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // a UTF-8 byte order mark
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view raw = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      parse_meta(line, table.meta);
      continue;
    }
    const auto fields = split(line, ',');
    auto error = [&](const std::string& reason) {
      return ParseError(path, line_no, std::string(line), reason);
    };
    if (table.columns.empty()) {
      bool all_numbers = true;
      for (const auto f : fields) all_numbers = all_numbers && to_number(f).has_value();
      if (all_numbers)
        throw error(
            "missing header: expected column names (pass,seconds,elapsed,...) before the first "
            "row");
      std::set<std::string_view> seen;
      for (const auto f : fields) {
        if (f.empty()) throw error("empty column name in header");
        if (!seen.insert(f).second)
          throw error(fmt::format("column '{}' appears twice in header", f));
        table.columns.emplace_back(f);
      }
      if (!table.find_column("pass")) throw error("header has no 'pass' column");
      continue;
    }
    if (fields.size() != table.columns.size())
      throw error(fmt::format("expected {} fields ({}) but found {}", table.columns.size(),
                              fmt::join(table.columns, ","), fields.size()));
    std::vector<double> row;
    row.reserve(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const auto v = to_number(fields[i]);
      if (!v)
        throw error(fmt::format("column '{}': '{}' is not a number", table.columns[i], fields[i]));
      row.push_back(*v);
    }
    table.rows.push_back(std::move(row));
  }
  if (table.columns.empty())
    throw ParseError(path, std::max<std::int64_t>(line_no, 1), "",
                     "missing header: the file has no column names (pass,seconds,elapsed,...)");
  return table;
}

}  // namespace strata::cli
