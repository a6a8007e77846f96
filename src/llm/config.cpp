#include "llm/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "support/fs.h"
#include "support/text_scan.h"
#include "task/toml_text.h"

namespace kf::llm {

const char* role_name(LlmRole r) {
  switch (r) {
    case LlmRole::planner:
      return "planner";
    case LlmRole::implementer:
      return "implementer";
    case LlmRole::debugger:
      return "debugger";
  }
  return "?";
}

std::optional<std::string> process_env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string display_url(const std::string& url) {
  std::string u = url;
  const size_t q = u.find_first_of("?#");
  if (q != std::string::npos) u.resize(q);
  const size_t scheme = u.find("://");
  const size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t path = u.find('/', host);
  const size_t at = u.rfind('@', path == std::string::npos ? u.size() : path);
  if (at != std::string::npos && at >= host) u.erase(host, at + 1 - host);
  return u;
}

std::string LlmSettings::redacted() const {
  const std::string key =
      api_key.empty() ? "none"
                      : fmt::format("<set from {}>", api_key_source.empty() ? "?" : api_key_source);
  return fmt::format(
      "base_url={} model={} key={} timeout_s={} connect_timeout_s={} max_retries={} "
      "context_tokens={}",
      display_url(base_url), model.empty() ? "(none)" : model, key, timeout_s, connect_timeout_s,
      max_retries, context_tokens == 0 ? std::string("unknown") : std::to_string(context_tokens));
}

Status LlmSettings::validate() const {
  if (base_url.empty())
    return Status::error("no LLM endpoint: set base_url in the [llm] table or OPENAI_BASE_URL");
  if (model.empty()) return Status::error("no LLM model: set model in the [llm] table");
  return ok_status();
}

namespace {

constexpr size_t kMaxUrlBytes = 2048, kMaxModelBytes = 256, kMaxKeyBytes = 4096;

bool printable_ascii(std::string_view s) {
  for (char c : s)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

// A URL kforge will send a key to: http(s), no whitespace or control characters.
Status check_url(const std::string& url, const std::string& where) {
  if (url.size() > kMaxUrlBytes) return Status::error(where + ": over 2048 bytes");
  if (!printable_ascii(url))
    return Status::error(where + ": holds a space, a control or a non-ASCII character");
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return Status::error(fmt::format("{}: '{}' is not an http:// or https:// URL", where,
                                     excerpt(display_url(url))));
  return ok_status();
}

std::string trim_slash(std::string url) {
  while (url.ends_with('/')) url.pop_back();
  return url;
}

// A key travels in an HTTP header: printable ASCII only (no header injection). Never quoted.
Status check_key(const std::string& key, const std::string& where) {
  if (key.empty() || key.size() > kMaxKeyBytes || !printable_ascii(key))
    return Status::error(where + ": a key is 1 to 4096 printable ASCII characters");
  return ok_status();
}

bool is_var_name(std::string_view s) {
  if (s.empty() || s.size() > 128 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!is_word_char(c)) return false;
  return true;
}

struct Reader {
  std::string file;  // for messages, already excerpted
  const EnvLookup& env;

  std::string at(const std::string& key) const { return fmt::format("{}: {}", file, key); }

  Expected<std::string> string(const toml::node& n, const std::string& key) const {
    const auto* v = n.as_string();
    if (!v) return Status::error(at(key) + " must be a string");
    return v->get();
  }
  Expected<double> number(const toml::node& n, const std::string& key, double lo, double hi,
                          bool open_lo) const {
    double d = 0;
    if (const auto* i = n.as_integer())
      d = static_cast<double>(i->get());
    else if (const auto* f = n.as_floating_point())
      d = f->get();
    else
      return Status::error(at(key) + " must be a number");
    if (!std::isfinite(d) || d > hi || (open_lo ? d <= lo : d < lo))
      return Status::error(fmt::format("{} must be {} {} and at most {}", at(key),
                                       open_lo ? "over" : "at least", lo, hi));
    return d;
  }
  Expected<int64_t> integer(const toml::node& n, const std::string& key, int64_t lo,
                            int64_t hi) const {
    const auto* i = n.as_integer();
    if (!i) return Status::error(at(key) + " must be an integer");
    if (i->get() < lo || i->get() > hi)
      return Status::error(fmt::format("{} must be from {} to {}", at(key), lo, hi));
    return i->get();
  }

  // One endpoint field into `o`; false when `name` is not one.
  Expected<bool> field(const std::string& name, const toml::node& n, const std::string& key,
                       LlmConfig::Overrides& o) const {
    if (name == "base_url" || name == "model" || name == "api_key" || name == "api_key_env") {
      auto s = string(n, key);
      if (!s) return s.error();
      if (name == "base_url") {
        KF_RETURN_IF_ERROR(check_url(*s, at(key)));
        o.base_url = trim_slash(*s);
      } else if (name == "model") {
        if (s->empty() || s->size() > kMaxModelBytes || !printable_ascii(*s))
          return Status::error(at(key) + ": a model is 1 to 256 printable ASCII characters");
        o.model = *s;
      } else if (name == "api_key") {
        if (o.api_key) return Status::error(at(key) + ": both api_key and api_key_env are set");
        KF_RETURN_IF_ERROR(check_key(*s, at(key)));
        o.api_key = *s;
        o.api_key_source = "file";
      } else {
        if (o.api_key) return Status::error(at(key) + ": both api_key and api_key_env are set");
        if (!is_var_name(*s))
          return Status::error(at(key) + " must name an environment variable ([A-Za-z_0-9]+)");
        auto v = env(*s);
        if (!v) return Status::error(fmt::format("{} names {}, which is not set", at(key), *s));
        KF_RETURN_IF_ERROR(check_key(*v, fmt::format("{} (${})", at(key), *s)));
        o.api_key = *v;
        o.api_key_source = "env " + *s;
      }
      return true;
    }
    if (name == "timeout_s" || name == "connect_timeout_s") {
      auto d = number(n, key, 0, name == "timeout_s" ? 86400 : 3600, true);
      if (!d) return d.error();
      (name == "timeout_s" ? o.timeout_s : o.connect_timeout_s) = *d;
      return true;
    }
    if (name == "max_retries") {
      auto i = integer(n, key, 0, 20);
      if (!i) return i.error();
      o.max_retries = static_cast<int>(*i);
      return true;
    }
    if (name == "context_tokens") {
      auto i = integer(n, key, 0, 100'000'000);
      if (!i) return i.error();
      o.context_tokens = *i;
      return true;
    }
    return false;
  }

  Status prices(const toml::node& n, std::map<std::string, ModelPrice>& out) const {
    const auto* t = n.as_table();
    if (!t) return Status::error(at("llm.prices") + " must be a table of models");
    for (const auto& [k, v] : *t) {
      const std::string model(k.str());
      const std::string key = "llm.prices." + excerpt(model);
      const auto* p = v.as_table();
      if (!p) return Status::error(at(key) + " must be a table (input = ..., output = ...)");
      if (model.empty() || model.size() > kMaxModelBytes)
        return Status::error(at(key) + ": a model is 1 to 256 characters");
      ModelPrice price;
      for (const auto& [pk, pv] : *p) {
        const std::string name(pk.str());
        if (name != "input" && name != "output")
          return Status::error(
              fmt::format("{}: unknown key '{}' (input, output)", at(key), excerpt(name)));
        auto d = number(pv, key + "." + name, 0, 1e6, false);
        if (!d) return d.error();
        (name == "input" ? price.input_per_mtok : price.output_per_mtok) = *d;
      }
      out[model] = price;
    }
    return ok_status();
  }
};

void apply(const LlmConfig::Overrides& o, LlmSettings& s) {
  if (o.base_url) s.base_url = *o.base_url;
  if (o.model) s.model = *o.model;
  if (o.api_key) s.api_key = *o.api_key;
  if (o.api_key_source) s.api_key_source = *o.api_key_source;
  if (o.timeout_s) s.timeout_s = *o.timeout_s;
  if (o.connect_timeout_s) s.connect_timeout_s = *o.connect_timeout_s;
  if (o.max_retries) s.max_retries = *o.max_retries;
  if (o.context_tokens) s.context_tokens = *o.context_tokens;
}

std::optional<LlmRole> parse_role(std::string_view s) {
  for (LlmRole r : {LlmRole::planner, LlmRole::implementer, LlmRole::debugger})
    if (s == role_name(r)) return r;
  return std::nullopt;
}

}  // namespace

LlmSettings LlmConfig::settings_for(LlmRole role) const {
  LlmSettings s = defaults;
  auto it = roles.find(role);
  if (it != roles.end()) apply(it->second, s);
  return s;
}

namespace {

// OPENAI_BASE_URL and OPENAI_API_KEY into `s`, each only when asked for.
Status env_defaults(const EnvLookup& env, bool url, bool key, LlmSettings& s) {
  if (auto v = env("OPENAI_BASE_URL"); url && v && !v->empty()) {
    KF_RETURN_IF_ERROR(check_url(*v, "OPENAI_BASE_URL"));
    s.base_url = trim_slash(*v);
  }
  if (auto v = env("OPENAI_API_KEY"); key && v && !v->empty()) {
    KF_RETURN_IF_ERROR(check_key(*v, "OPENAI_API_KEY"));
    s.api_key = *v;
    s.api_key_source = "env OPENAI_API_KEY";
  }
  return ok_status();
}

}  // namespace

Expected<LlmConfig> llm_config_from_env(const EnvLookup& env) {
  LlmConfig c;
  KF_RETURN_IF_ERROR(env_defaults(env, true, true, c.defaults));
  return c;
}

Expected<LlmConfig> parse_llm_config(const std::string& text, const std::filesystem::path& file,
                                     const EnvLookup& env) {
  const std::string where = excerpt(file.string());
  auto parsed = parse_toml_text(text, file.string(), kMaxLlmConfigBytes);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  const Reader rd{where, env};
  LlmConfig::Overrides top;
  LlmConfig c;
  if (const toml::node* llm = root.get("llm")) {
    const auto* t = llm->as_table();
    if (!t) return Status::error(where + ": llm must be a table ([llm])");
    for (const auto& [k, v] : *t) {
      const std::string name(k.str());
      const std::string key = "llm." + excerpt(name);
      auto f = rd.field(name, v, key, top);
      if (!f) return f.error();
      if (*f) continue;
      if (name == "prices") {
        KF_RETURN_IF_ERROR(rd.prices(v, c.prices));
        continue;
      }
      // The folder of prompt templates that replace the built-in ones (relative to the file).
      if (name == "prompts") {
        const auto* dir = v.as_string();
        if (!dir || dir->get().empty() || dir->get().size() > 4096 ||
            dir->get().find('\0') != std::string::npos)
          return Status::error(rd.at(key) + " must be a folder's path (a non-empty string)");
        const std::filesystem::path p = dir->get();
        c.prompts = p.is_absolute() ? p : file.parent_path() / p;
        continue;
      }
      const auto role = parse_role(name);
      if (!role)
        return Status::error(
            fmt::format("{}: unknown key '{}' (base_url, model, api_key, api_key_env, timeout_s, "
                        "connect_timeout_s, max_retries, context_tokens, prices, prompts, planner, "
                        "implementer, debugger)",
                        where, key));
      const auto* rt = v.as_table();
      if (!rt) return Status::error(rd.at(key) + " must be a table ([" + key + "])");
      LlmConfig::Overrides& o = c.roles[*role];
      for (const auto& [rk, rv] : *rt) {
        const std::string rname(rk.str());
        const std::string rkey = key + "." + excerpt(rname);
        auto rf = rd.field(rname, rv, rkey, o);
        if (!rf) return rf.error();
        if (!*rf) return Status::error(fmt::format("{}: unknown key '{}'", where, rkey));
      }
    }
  }
  // The variables fill in only what the [llm] table leaves out.
  KF_RETURN_IF_ERROR(
      env_defaults(env, !top.base_url.has_value(), !top.api_key.has_value(), c.defaults));
  apply(top, c.defaults);
  return c;
}

Expected<LlmConfig> read_llm_config(const std::filesystem::path& file, const EnvLookup& env) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return Status::error(fmt::format("{}: {}", excerpt(file.string()), ec.message()));
  if (size > kMaxLlmConfigBytes)
    return Status::error(
        fmt::format("{}: over {} bytes", excerpt(file.string()), kMaxLlmConfigBytes));
  auto text = read_file(file);
  if (!text) return text.error();
  return parse_llm_config(*text, file, env);
}

}  // namespace kf::llm
