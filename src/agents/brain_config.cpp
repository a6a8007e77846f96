#include "agents/brain_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <system_error>

#include "support/fs.h"
#include "support/text_scan.h"
#include "task/toml_text.h"

namespace kf::agents {

Expected<BrainConfig> parse_brain_config(const std::string& text,
                                         const std::filesystem::path& file) {
  const std::string where = excerpt(file.string());
  auto parsed = parse_toml_text(text, file.string(), kMaxBrainConfigBytes);
  if (!parsed) return parsed.error();
  toml::table& root = *parsed;
  // The LLM brain's settings ([llm], llm/config.h) may share the file; they are read there.
  for (const auto& [k, v] : root)
    if (k.str() != "brain" && k.str() != "llm")
      return Status::error(fmt::format(
          "{}: unknown table '{}' (a team file holds a [brain] table and, for the LLM brain, "
          "an [llm] table)",
          where, excerpt(k.str())));
  const toml::table* brain = root["brain"].as_table();
  if (!brain) return Status::error(where + ": no [brain] table");
  BrainConfig c;
  std::string roles;
  for (const auto& [k, v] : *brain) {
    const std::string key(k.str());
    const auto* value = v.as_string();
    if (!value)
      return Status::error(fmt::format("{}: brain.{} must be a string", where, excerpt(key)));
    // One brain per key: a value may not smuggle in more pairs.
    if (value->get().find_first_of(",=") != std::string::npos)
      return Status::error(fmt::format("{}: brain.{} must name one brain", where, excerpt(key)));
    if (key == "sources") {
      const std::filesystem::path p = value->get();
      c.options.sources = p.is_absolute() ? p : file.parent_path() / p;
      continue;
    }
    roles += fmt::format("{}{}={}", roles.empty() ? "" : ",", key, value->get());
  }
  if (roles.empty()) return Status::error(where + ": [brain] names no role and no default");
  // The roles and brains are checked as --brain's are.
  auto team = parse_team(roles);
  if (!team) return team.error().with_context(where);
  c.spec = team_name(*team);  // every role spelled out, in the registry's order
  return c;
}

Expected<BrainConfig> read_brain_config(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return Status::error(fmt::format("{}: {}", excerpt(file.string()), ec.message()));
  if (size > kMaxBrainConfigBytes)
    return Status::error(
        fmt::format("{}: over {} bytes", excerpt(file.string()), kMaxBrainConfigBytes));
  auto text = read_file(file);
  if (!text) return text.error();
  return parse_brain_config(*text, file);
}

}  // namespace kf::agents
