// Where kforge's LLM roles send their requests: the endpoint, model, key, timeouts, retries and
// prices, read from the [llm] table of a TOML file (kforge.toml) and the usual variables.
//
//   # kforge.toml
//   [llm]
//   base_url = "http://127.0.0.1:8080/v1"   # or OPENAI_BASE_URL when left out
//   model = "qwen2.5-coder-32b"
//   api_key_env = "MY_KEY"                  # or api_key = "..."; or OPENAI_API_KEY when left out
//   timeout_s = 300                         # the whole request
//   [llm.prices."gpt-4o"]                   # US dollars per million tokens
//   input = 2.5
//   output = 10.0
//   prompts = "my_prompts"                  # planner.md etc. replacing prompts/*.md
//   [llm.planner]                           # overrides any field above for one role
//   model = "o3"
//
//   Expected<LlmConfig> c = read_llm_config("kforge.toml");
//   LlmSettings s = c->settings_for(LlmRole::planner);
//   log(s.redacted());                       // never prints the key
//
// Precedence, highest first: the role's table, the [llm] table, the variables OPENAI_BASE_URL
// and OPENAI_API_KEY (read only for base_url and the key, and only when no table sets them),
// the defaults below. `api_key_env = "NAME"` reads the key from $NAME; naming a variable that is
// not set is an error. The file is untrusted text: at most 256 KiB, only the keys above, each
// of its type and within bounds; an error names the file and the key and never quotes a key.
// Tables other than [llm] belong to other parts of kforge and are ignored here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "support/status.h"

namespace kf::llm {

enum class LlmRole { planner, implementer, debugger };
const char* role_name(LlmRole r);

// US dollars per million tokens.
struct ModelPrice {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

// One role's resolved endpoint.
struct LlmSettings {
  std::string base_url;        // e.g. "http://127.0.0.1:8080/v1", no trailing '/'
  std::string model;           // as the endpoint names it
  std::string api_key;         // empty: no Authorization header (local servers)
  std::string api_key_source;  // "file", "env NAME" or "" (no key): for redacted()
  double timeout_s = 300;      // the whole request, per attempt
  double connect_timeout_s = 10;
  int max_retries = 4;         // attempts after the first
  int64_t context_tokens = 0;  // the model's context as configured; 0: unknown

  // "base_url=... model=... key=<set from env OPENAI_API_KEY> timeout_s=..." without the key,
  // and with any user:password or query string cut from the URL.
  std::string redacted() const;
  // Fails when base_url or model is missing.
  Status validate() const;
};

// base_url as it may be shown: "http://user:pw@host/v1?api-key=x" -> "http://host/v1".
std::string display_url(const std::string& url);

struct LlmConfig {
  LlmSettings defaults;  // [llm] over the variables over the built-in defaults
  // A role's table, applied over `defaults` (each field set only when the table names it).
  struct Overrides {
    std::optional<std::string> base_url, model, api_key, api_key_source;
    std::optional<double> timeout_s, connect_timeout_s;
    std::optional<int> max_retries;
    std::optional<int64_t> context_tokens;
  };
  std::map<LlmRole, Overrides> roles;
  std::map<std::string, ModelPrice> prices;  // model -> price; "*" prices any other model
  // `prompts = "DIR"`: templates that replace the built-in prompts/*.md (relative paths resolve
  // against the file's folder); empty: the built-in ones.
  std::filesystem::path prompts;

  LlmSettings settings_for(LlmRole role) const;
};

inline constexpr size_t kMaxLlmConfigBytes = 256 * 1024;

// Looks a variable up; the default reads the process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_env(const std::string& name);

// Fails, naming the file and the key, on a syntax error, an unknown key, a value of the wrong
// type or out of bounds, both api_key and api_key_env in one table, or api_key_env naming a
// variable that is not set.
Expected<LlmConfig> read_llm_config(const std::filesystem::path& file,
                                    const EnvLookup& env = process_env);
// The same from text (`file` names it in errors).
Expected<LlmConfig> parse_llm_config(const std::string& text, const std::filesystem::path& file,
                                     const EnvLookup& env = process_env);
// No file: the variables and the defaults only. Fails on a malformed variable's value.
Expected<LlmConfig> llm_config_from_env(const EnvLookup& env = process_env);

}  // namespace kf::llm
