#include "common/run_binding.hpp"

#include <fmt/format.h>

#include "strata/io/checkpoint_format.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/recovery.hpp"

namespace strata::apps {

std::string file_fingerprint(const std::string& path) {
  const io::MappedFile file(path);
  const std::string_view text = file.text();
  return fmt::format("bytes {} xxh3 {:016x}", text.size(),
                     detail::checkpoint_checksum(text));
}

void bind_run_to_checkpoints(Runtime& rt, const AppInfo& app, const RunConfig& config) {
  const RuntimeOptions& o = rt.options();
  if (o.checkpoint_dir.empty() && o.resume_dir.empty()) return;
  recovery::bind_checkpoints(rt, "app", app.name);
  recovery::bind_checkpoints(rt, "--seed", std::to_string(config.seed));
  recovery::bind_checkpoints(rt, "--plan", config.plan ? analysis::to_string(*config.plan) : "auto");
  recovery::bind_checkpoints(rt, "--serial", config.serial ? "yes" : "no");
  for (const auto& e : config.options.entries()) recovery::bind_checkpoints(rt, "--" + e.name, e.value);
  if (config.data_path.empty()) recovery::bind_checkpoints(rt, "--synthetic", config.synthetic.describe());
  else recovery::bind_checkpoints(rt, "--data", file_fingerprint(config.data_path));
}

}  // namespace strata::apps
