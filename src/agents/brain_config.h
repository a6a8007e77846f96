// A team of brains written in a file, for `kforge optimize --config FILE`: the same team --brain
// names, and the brains' options.
//
//   # team.toml
//   [brain]
//   planner = "builtin"
//   implementer = "files"
//   default = "builtin"          # the roles not named (builtin when absent)
//   sources = "by_strategy"      # the files brain's folder, relative to this file
//
//   Expected<BrainConfig> c = read_brain_config("team.toml");
//   make_brain(c->spec, c->options);
//
// A file is untrusted text: at most 64 KiB, only the keys above, each a string.
#pragma once

#include <filesystem>
#include <string>

#include "agents/roles.h"
#include "support/status.h"

namespace kf::agents {

struct BrainConfig {
  // As --brain takes it, every role spelled out: "planner=builtin,implementer=files,..."
  std::string spec;
  BrainOptions options;
};

inline constexpr size_t kMaxBrainConfigBytes = 64 * 1024;

// Fails, naming the file and the key, on a syntax error, an unknown key or role, a brain not in
// the registry, or a value that is not a string.
Expected<BrainConfig> read_brain_config(const std::filesystem::path& file);
// The same from text (`file` names it in errors; relative paths resolve against its folder).
Expected<BrainConfig> parse_brain_config(const std::string& text,
                                         const std::filesystem::path& file);

}  // namespace kf::agents
