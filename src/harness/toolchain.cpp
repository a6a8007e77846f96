#include "harness/toolchain.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "support/fs.h"
#include "support/hash.h"
#include "support/subprocess.h"

namespace kf {
namespace {

// C-library functions a kernel has no reason to define: defining one is an attempt to change
// how the judge's clock or process control behave.
const std::vector<std::string> kInterposable = {
    "clock_gettime", "gettimeofday", "time",      "clock",  "times",     "getrusage",
    "timespec_get",  "clock_getres", "nanosleep", "usleep", "sleep",     "fork",
    "vfork",         "execve",       "system",    "dlopen", "dlsym",     "exit",
    "_exit",         "abort",        "kill",      "raise",  "sigaction", "signal",
    "pthread_create", "sched_yield", "__libc_start_main",
    // std::chrono::steady_clock::now() and system_clock::now()
    "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv"};

std::string cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line)) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    if (!model.empty() && !flags.empty()) break;
  }
  return model + "|" + content_hash(flags);
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

std::vector<std::string> base_flags() {
  return {"-std=c++20", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared",
          "-fvisibility=hidden", "-Wl,-z,defs", "-I" KFORGE_RUNTIME_DIR};
}

const std::vector<std::string>& allowed_extra_flags() {
  static const std::vector<std::string> flags = {
      "-ffast-math",         "-funroll-loops",        "-fno-math-errno",
      "-fno-trapping-math",  "-ffp-contract=fast",    "-ffp-contract=off",
      "-fno-tree-vectorize", "-mprefer-vector-width=512", "-mprefer-vector-width=256",
      "-O2",                 "-Ofast",                "-fopenmp-simd",
      "-fno-exceptions",     "-fno-rtti",             "-mavx2",
      "-mfma",               "-mavx512f",             "-mavx512bw",
      "-mavx512vl",          "-mavx512bf16",          "-mno-avx512f"};
  return flags;
}

Expected<std::vector<std::string>> requested_flags(const std::string& source) {
  std::vector<std::string> flags;
  std::istringstream in(source);
  std::string line;
  for (int n = 0; n < 5 && std::getline(in, line); ++n) {
    static const std::regex re(R"(^\s*//\s*kforge:\s*flags\s+(.*)$)");
    std::smatch m;
    if (!std::regex_match(line, m, re)) continue;
    std::istringstream words(m[1].str());
    std::string w;
    while (words >> w) {
      const auto& ok = allowed_extra_flags();
      if (std::find(ok.begin(), ok.end(), w) == ok.end())
        return Status::error(fmt::format("line {}: compiler flag '{}' is not allowed (allowed: {})",
                                         n + 1, w, join(ok)));
      flags.push_back(w);
    }
  }
  return flags;
}

std::string toolchain_identity(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  std::lock_guard lock(mu);
  auto it = memo.find(cxx);
  if (it != memo.end()) return it->second;
  std::string id = first_line_of({cxx, "--version"}) + "|" + cpu_identity();
  memo[cxx] = id;
  return id;
}

std::vector<std::string> runtime_preload(const std::string& cxx) {
  if (cxx.find("clang") != std::string::npos) return {"libomp.so.5"};
  return {};
}

std::vector<Diagnostic> parse_diagnostics(const std::string& log) {
  static const std::regex re(R"(^(.*?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  std::vector<Diagnostic> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) {
      // Linker errors: "... undefined reference to `foo'"
      if (line.find("undefined reference") != std::string::npos ||
          line.find("ld returned") != std::string::npos)
        out.push_back({"", 0, 0, "error", line});
      continue;
    }
    std::string sev = m[4].str() == "fatal error" ? "error" : m[4].str();
    out.push_back({m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str()), sev, m[5].str()});
  }
  return out;
}

CompiledObject compile_solution(const std::string& source, const std::string& shim,
                                const CompileOptions& options) {
  CompiledObject obj;
  CompileInfo& info = obj.info;
  auto requested = requested_flags(source);
  if (!requested) {
    info.log = requested.error().message();
    info.diagnostics.push_back({"candidate.cpp", 0, 0, "error", requested.error().message()});
    return obj;
  }
  std::vector<std::string> flags = base_flags();
  for (const auto& f : options.extra_flags) {
    const auto& ok = allowed_extra_flags();
    if (std::find(ok.begin(), ok.end(), f) == ok.end()) {
      info.log = fmt::format("compiler flag '{}' is not allowed", f);
      info.diagnostics.push_back({"", 0, 0, "error", info.log});
      return obj;
    }
    flags.push_back(f);
  }
  flags.insert(flags.end(), requested->begin(), requested->end());
  std::string full = "#line 1 \"candidate.cpp\"\n" + source + "\n#line 1 \"kforge_entry.cpp\"\n" + shim;

  Hasher h;
  h.add(full).add(join(flags)).add(join(options.libs)).add(toolchain_identity(options.cxx));
  info.key = h.hex();
  const fs::path dir = cache_dir() / "objects";
  const fs::path so = dir / (info.key + ".so");
  const fs::path meta_path = dir / (info.key + ".json");
  obj.so_path = so.string();

  if (options.use_cache) {
    if (auto meta = read_file(meta_path)) {
      try {
        auto j = nlohmann::json::parse(*meta);
        info.ok = j.at("ok").get<bool>();
        if (!info.ok || fs::exists(so)) {
          info.cached = true;
          info.seconds = j.at("seconds").get<double>();
          info.command = j.at("command").get<std::string>();
          info.log = j.at("log").get<std::string>();
          obj.interposed_symbols = j.at("interposed").get<std::vector<std::string>>();
          info.diagnostics = parse_diagnostics(info.log);
          return obj;
        }
      } catch (const nlohmann::json::exception&) {
        // A damaged cache entry: compile again and overwrite it.
      }
    }
  }

  TempDir tmp("kforge-compile");
  const fs::path src = tmp.path() / "candidate.cpp";
  if (auto st = write_file_atomic(src, full); !st.ok()) {
    info.log = st.message();
    return obj;
  }
  const fs::path out = tmp.path() / "solution.so";
  std::vector<std::string> argv = {options.cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(src.string());
  for (const auto& l : options.libs) argv.push_back("-l" + l);
  argv.insert(argv.end(), {"-o", out.string()});
  info.command = join(argv);
  auto r = run_process({.argv = argv,
                        .cwd = tmp.path().string(),
                        .timeout_s = options.timeout_s,
                        .max_output = 64 * 1024,
                        .address_space_limit = size_t{3} << 30});
  if (!r) {
    info.log = r.error().message();
    return obj;
  }
  info.seconds = r->seconds;
  info.log = r->err + r->out;
  if (r->timed_out) info.log += fmt::format("\ncompilation timed out after {} s", options.timeout_s);
  if (r->signal) info.log += fmt::format("\nthe compiler was killed by signal {}", r->signal);
  info.diagnostics = parse_diagnostics(info.log);
  info.ok = r->ok();
  if (info.ok) {
    // Every defined function, hidden ones included (the object is built -fvisibility=hidden).
    auto nm = run_process({.argv = {"nm", "--defined-only", out.string()}, .timeout_s = 30});
    if (nm && nm->ok()) {
      std::istringstream in(nm->out);
      std::string addr, type, name;
      while (in >> addr >> type >> name) {
        name = name.substr(0, name.find('@'));
        bool code = type == "T" || type == "t" || type == "W" || type == "w" || type == "i";
        if (code && std::find(kInterposable.begin(), kInterposable.end(), name) != kInterposable.end())
          obj.interposed_symbols.push_back(name);
      }
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::path staged = so;
    staged += fmt::format(".tmp{}", getpid());
    fs::copy_file(out, staged, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(staged, so, ec);
    if (ec) {
      info.ok = false;
      info.log += "\ncannot store the object in the cache: " + ec.message();
      return obj;
    }
  }
  nlohmann::json meta = {{"ok", info.ok},
                         {"seconds", info.seconds},
                         {"command", info.command},
                         {"log", info.log},
                         {"interposed", obj.interposed_symbols}};
  if (options.use_cache && !r->timed_out) (void)write_file_atomic(meta_path, meta.dump());
  return obj;
}

}  // namespace kf
