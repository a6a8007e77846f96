#include "harness/toolchain.h"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <system_error>

#include "harness/compiler_jail.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/json_text.h"
#include "support/subprocess.h"

namespace kf {
namespace {

// Bumped whenever what a cache key stands for changes (v2: the shim is its own unit).
constexpr const char* kCacheFormat = "kforge-object-v2";

// C-library functions a kernel has no reason to define: defining one is an attempt to change
// how the judge's clock or process control behave.
const std::vector<std::string> kInterposable = {
    "clock_gettime", "gettimeofday", "time", "clock", "times", "getrusage", "timespec_get",
    "clock_getres", "nanosleep", "usleep", "sleep", "fork", "vfork", "execve", "system", "dlopen",
    "dlsym", "exit", "_exit", "abort", "kill", "raise", "sigaction", "signal", "pthread_create",
    "sched_yield", "__libc_start_main",
    // std::chrono::steady_clock::now() and system_clock::now()
    "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv"};

// What the compiler may print before its output counts as too large.
constexpr size_t kMaxCompilerOutput = size_t{1} << 20;

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

bool is_clang(const std::string& cxx) {
  return cxx.find("clang") != std::string::npos;
}

std::string mib(size_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

// kforge/kernel.h, the one kforge header a solution may include: copied into every build
// directory, so the compiler needs no access to kforge's own tree.
const std::string& kernel_header() {
  static const std::string text = [] {
    auto t = read_file(fs::path(KFORGE_RUNTIME_DIR) / "kforge" / "kernel.h");
    KF_CHECK(t.has_value()) << "kforge/kernel.h is missing from " << KFORGE_RUNTIME_DIR;
    return *t;
  }();
  return text;
}

CompilerLimits limits_of(const CompileOptions& o) {
  return {.timeout_s = o.timeout_s,
          .memory_limit = o.memory_limit,
          .max_file_bytes = o.max_file_bytes,
          .max_output = kMaxCompilerOutput};
}

Diagnostic kforge_error(std::string message) {
  return {"", 0, 0, "error", std::move(message)};
}

// The limit a failed compile ran into, if any: each is a compile error with its own words
// ("timed out", "too large", "memory") so the author knows what to change.
std::optional<Diagnostic> limit_hit(const ProcessResult& r, const std::string& raw,
                                    const CompileOptions& o) {
  const bool too_much = r.err.size() >= kMaxCompilerOutput || r.out.size() >= kMaxCompilerOutput;
  if (r.ok() && !too_much) return std::nullopt;
  auto has = [&](const char* s) { return raw.find(s) != std::string::npos; };
  if (r.timed_out)
    return kforge_error(
        fmt::format("compilation timed out after {:g} s (the compiler's limit)", o.timeout_s));
  if (r.signal == SIGXCPU || has("CPU time limit exceeded"))
    return kforge_error(fmt::format(
        "compilation timed out: the compiler used its {:g} s of CPU time", o.timeout_s));
  if (r.signal == SIGXFSZ || has("File size limit exceeded"))
    return kforge_error(
        fmt::format("the compiler's output is too large: a file it wrote passed the {} limit",
                    mib(o.max_file_bytes)));
  if (has("out of memory") || has("virtual memory exhausted") || has("std::bad_alloc") ||
      has("Cannot allocate memory") || r.signal == SIGKILL || has("Killed signal"))
    return kforge_error(
        fmt::format("the compiler ran out of memory (limit {})", mib(o.memory_limit)));
  if (too_much)
    return kforge_error(
        fmt::format("the compiler's messages are too large (over {})", mib(kMaxCompilerOutput)));
  if (r.signal) return kforge_error(fmt::format("the compiler was killed by signal {}", r.signal));
  return std::nullopt;
}

// A failure at the judge's entry: the bind text did not compile or the link found no function
// with the task's exact types (or a second kf_entry).
bool entry_failed(const CompileInfo& info, const EntryShim& shim) {
  if (info.log.find("In file included from kforge_bind.cpp") != std::string::npos) return true;
  for (const auto& d : info.diagnostics) {
    if (d.severity != "error") continue;
    if (d.file == "kforge_bind.cpp" || d.file == "kforge_entry.cpp") return true;
    if (d.file.empty() && !shim.function.empty() &&
        (d.message.find(kBindName) != std::string::npos ||
         d.message.find("`" + shim.function + "(") != std::string::npos ||
         d.message.find("kf_entry") != std::string::npos))
      return true;
  }
  return false;
}

// An include the compiler could not open (no such file, or the jail's file-system rules), spelled
// as a path outside the include set: the same refusal as for one it opened.
std::optional<std::string> unopened_include_outside(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags) {
    if (d.severity != "error") continue;
    for (std::string_view why : {": No such file or directory", ": Permission denied"}) {
      std::string_view m = d.message;
      if (m.size() <= why.size() || m.substr(m.size() - why.size()) != why) continue;
      std::string_view path = m.substr(0, m.size() - why.size());
      if (include_path_outside(path)) return std::string(path);
    }
  }
  return std::nullopt;
}

// Every defined function of a built object, hidden ones included, that is on the C-library list.
std::vector<std::string> interposed_symbols(const fs::path& so, const fs::path& dir,
                                            const CompileOptions& o) {
  std::vector<std::string> out;
  CompilerLimits lim = limits_of(o);
  lim.max_output = size_t{16} << 20;
  auto nm = run_compiler({resolve_program("nm"), "--defined-only", so.string()}, dir, lim);
  if (!nm || !nm->ok()) return out;
  std::istringstream in(nm->out);
  std::string addr, type, name;
  while (in >> addr >> type >> name) {
    name = name.substr(0, name.find('@'));
    bool code = type == "T" || type == "t" || type == "W" || type == "w" || type == "i";
    if (code && std::find(kInterposable.begin(), kInterposable.end(), name) != kInterposable.end())
      out.push_back(name);
  }
  return out;
}

nlohmann::json diagnostics_json(const std::vector<Diagnostic>& diags) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& d : diags)
    a.push_back({{"file", d.file},
                 {"line", d.line},
                 {"column", d.column},
                 {"severity", d.severity},
                 {"message", d.message}});
  return a;
}

// A stored result, or false when there is none (or it is damaged: compile again).
bool read_cached(const fs::path& meta_path, const fs::path& so, const CompileOptions& o,
                 CompiledObject& obj) {
  auto meta = read_file(meta_path);
  if (!meta) return false;
  try {
    auto j = nlohmann::json::parse(*meta);
    CompileInfo& info = obj.info;
    info.ok = j.at("ok").get<bool>();
    std::error_code ec;
    if (info.ok && (!fs::exists(so) || fs::file_size(so, ec) > o.max_object_bytes)) return false;
    info.cached = true;
    info.seconds = j.at("seconds").get<double>();
    info.command = j.at("command").get<std::string>();
    info.log = j.at("log").get<std::string>();
    obj.interposed_symbols = j.at("interposed").get<std::vector<std::string>>();
    info.diagnostics.clear();
    for (const auto& d : j.at("diagnostics"))
      info.diagnostics.push_back({d.at("file").get<std::string>(), d.at("line").get<int>(),
                                  d.at("column").get<int>(), d.at("severity").get<std::string>(),
                                  d.at("message").get<std::string>()});
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace

// clang-format off
std::vector<std::string> base_flags() {
  return {"-std=c++20", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared",
          "-fvisibility=hidden", "-Wl,-z,defs", "-Wl,--no-undefined", "-I" KFORGE_RUNTIME_DIR};
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
// clang-format on

Expected<std::vector<std::string>> requested_flags(const std::string& source) {
  std::vector<std::string> flags;
  std::istringstream in(source);
  std::string line;
  for (int n = 0; n < 5 && std::getline(in, line); ++n) {
    // `^\s*//\s*kforge:\s*flags\s+(.*)$`, scanned by hand: linear on any line.
    std::string_view s = line;
    auto skip_space = [&] {
      size_t i = 0;
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      s.remove_prefix(i);
      return i;
    };
    auto eat = [&](std::string_view word) {
      if (s.substr(0, word.size()) != word) return false;
      s.remove_prefix(word.size());
      return true;
    };
    skip_space();
    if (!eat("//")) continue;
    skip_space();
    if (!eat("kforge:")) continue;
    skip_space();
    if (!eat("flags") || skip_space() == 0) continue;
    std::istringstream words{std::string(s)};
    std::string w;
    while (words >> w) {
      const auto& ok = allowed_extra_flags();
      if (std::find(ok.begin(), ok.end(), w) == ok.end())
        return Status::error(
            valid_utf8(fmt::format("line {}: compiler flag '{}' is not allowed (allowed: {})",
                                   n + 1, w.size() > 80 ? w.substr(0, 80) + "..." : w, join(ok))));
      flags.push_back(w);
    }
  }
  return flags;
}

Expected<fs::path> write_kernel_header(const fs::path& build_dir) {
  const fs::path include = build_dir / "include";
  KF_RETURN_IF_ERROR(write_file_atomic(include / "kforge" / "kernel.h", kernel_header()));
  return include;
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
  if (is_clang(cxx)) return {"libomp.so.5"};
  return {};
}

CompiledObject compile_solution(const std::string& source, const std::string& entry_unit,
                                const CompileOptions& options) {
  return compile_solution(source, EntryShim{.entry = entry_unit}, options);
}

namespace {

// The flags of one compile: the base flags without kforge's -I (the build directory has its own
// copy of kforge/kernel.h), then the options' and the source's extra flags; or the message
// refusing a flag.
Expected<std::vector<std::string>> solution_flags(const std::string& source,
                                                  const CompileOptions& options) {
  auto requested = requested_flags(source);
  if (!requested) return requested.error();
  std::vector<std::string> flags;
  for (const auto& f : base_flags())
    if (f.rfind("-I", 0) != 0) flags.push_back(f);
  for (const auto& f : options.extra_flags) {
    const auto& ok = allowed_extra_flags();
    if (std::find(ok.begin(), ok.end(), f) == ok.end())
      return Status::error(valid_utf8(fmt::format("compiler flag '{}' is not allowed", f)));
    flags.push_back(f);
  }
  flags.insert(flags.end(), requested->begin(), requested->end());
  return flags;
}

// Writes the build directory: the solution's unit (its text, then the bind text) and
// kforge/kernel.h. The jail's id reads them; only it writes there afterwards.
Status write_sources(const fs::path& dir, const std::string& source, const EntryShim& shim) {
  std::string unit = "#line 1 \"candidate.cpp\"\n" + source + "\n";
  if (!shim.bind.empty()) unit += "#line 1 \"kforge_bind.cpp\"\n" + shim.bind;
  KF_RETURN_IF_ERROR(write_file_atomic(dir / "candidate.cpp", unit));
  auto include = write_kernel_header(dir);
  return include ? ok_status() : include.error();
}

void refuse(CompileInfo& info, Diagnostic d) {
  info.ok = false;
  info.log = "kforge: error: " + d.message + "\n";
  info.diagnostics = {std::move(d)};
}

std::string include_refusal(const std::string& path) {
  return fmt::format(
      "#include \"{}\" is not allowed: includes are limited to the standard and system headers "
      "and kforge/kernel.h",
      path);
}

// The entry unit's object, compiled once per (text, compiler) with the base flags and kept in
// the cache (it is the judge's own text, so it may be shared by every solution of a task), then
// copied into the build directory as kforge_entry.o. Fails only when the compiler cannot build
// the judge's own code.
Expected<fs::path> entry_object(const EntryShim& shim, const fs::path& dir,
                                const CompileOptions& options) {
  std::vector<std::string> argv = {resolve_program(options.cxx)};
  for (const auto& f : base_flags())
    if (f != "-shared" && f.rfind("-Wl,", 0) != 0 && f.rfind("-I", 0) != 0) argv.push_back(f);
  Hasher h;
  h.add(kCacheFormat).add(shim.entry).add(join(argv)).add(toolchain_identity(options.cxx));
  h.add(kernel_header());
  const fs::path cached = cache_dir() / "objects" / ("entry-" + h.hex() + ".o");
  const fs::path local = dir / "kforge_entry.o";
  std::error_code ec;
  if (fs::copy_file(cached, local, ec)) return local;
  KF_RETURN_IF_ERROR(write_file_atomic(dir / "kforge_entry.cpp", shim.entry));
  argv.insert(argv.end(), {"-I" + (dir / "include").string(), "-c", "kforge_entry.cpp", "-o",
                           "kforge_entry.o"});
  auto r = run_compiler(argv, dir, limits_of(options));
  if (!r) return r.error();
  if (!r->ok())
    return Status::error("the judge's entry shim does not compile:\n" + valid_utf8(r->err));
  fs::create_directories(cached.parent_path(), ec);
  fs::path staged = cached;
  staged += fmt::format(".tmp{}", getpid());
  fs::copy_file(local, staged, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(staged, cached, ec);
  return local;  // a cache that cannot be written only costs the next compile this step
}

// Turns the compiler's run into info: the sanitized log and its diagnostics, or a refusal (an
// include outside the allowed set), the limit it hit, an object too large, or the signature the
// entry expected. Returns whether the result may be stored (a limit hit depends on the load).
bool judge_run(const ProcessResult& r, const fs::path& dir, const EntryShim& shim,
               const CompileOptions& options, CompileInfo& info) {
  info.seconds = r.seconds;
  const std::string raw = r.err + r.out;
  SanitizedLog log = sanitize_compiler_log(
      raw, {.allowed_dirs = system_include_dirs(options.cxx), .build_dir = dir});
  info.log = log.log;
  info.diagnostics = parse_diagnostics(info.log);
  std::optional<std::string> outside;
  if (!log.refused_includes.empty()) outside = log.refused_includes.front();
  if (!outside) outside = unopened_include_outside(info.diagnostics);
  if (outside) {  // nothing the compiler said about that file is kept, nor its object
    refuse(info, {"candidate.cpp", 0, 0, "error", include_refusal(*outside)});
    return true;
  }
  std::optional<Diagnostic> why = limit_hit(r, raw, options);
  const bool storable = !why;
  info.ok = r.ok() && !why;
  std::error_code ec;
  const uintmax_t bytes = info.ok ? fs::file_size(dir / "solution.so", ec) : 0;
  if (info.ok && (ec || bytes > options.max_object_bytes)) {
    info.ok = false;
    why = kforge_error(ec ? "the compiler produced no object: " + ec.message()
                          : fmt::format("the compiled object is too large: {} (limit {})",
                                        mib(bytes), mib(options.max_object_bytes)));
  }
  if (!info.ok && !why && info.log.find("multiple definition of `kf_entry'") != std::string::npos)
    why = kforge_error(fmt::format(
        "the solution may not define kf_entry: the judge's entry shim, compiled apart, defines it "
        "and calls `{}`",
        shim.signature));
  if (!info.ok && !why && entry_failed(info, shim))
    why = kforge_error(fmt::format(
        "the solution must define `{}` (exactly these parameter types; a function template is "
        "instantiated at them)",
        shim.signature));
  if (why) {
    info.log = "kforge: error: " + why->message + "\n" + info.log;
    info.diagnostics.insert(info.diagnostics.begin(), *why);
  }
  return storable;
}

}  // namespace

CompiledObject compile_solution(const std::string& source, const EntryShim& shim,
                                const CompileOptions& options) {
  CompiledObject obj;
  CompileInfo& info = obj.info;
  auto flags = solution_flags(source, options);
  if (!flags) {
    refuse(info, {"candidate.cpp", 0, 0, "error", flags.error().message()});
    return obj;
  }
  Hasher h;
  h.add(kCacheFormat).add(source).add(shim.bind).add(shim.entry).add(join(*flags));
  h.add(join(options.libs)).add(toolchain_identity(options.cxx)).add(kernel_header());
  info.key = h.hex();
  if (auto path = literal_include_outside(source)) {
    refuse(info, {"candidate.cpp", 0, 0, "error", include_refusal(*path)});
    return obj;
  }
  const fs::path cache = cache_dir() / "objects";
  const fs::path so = cache / (info.key + ".so");
  const fs::path meta_path = cache / (info.key + ".json");
  obj.so_path = so.string();
  if (options.use_cache && read_cached(meta_path, so, options, obj)) return obj;

  auto build = BuildDir::make();
  if (!build) {
    refuse(info, kforge_error("cannot make the build directory: " + build.error().message()));
    return obj;
  }
  const fs::path& dir = (*build)->path();
  if (Status st = write_sources(dir, source, shim); !st.ok()) {
    refuse(info, kforge_error(st.message()));
    return obj;
  }
  std::vector<std::string> argv = {resolve_program(options.cxx)};
  argv.insert(argv.end(), flags->begin(), flags->end());
  argv.insert(argv.end(),
              {"-I" + (dir / "include").string(), "-H", "-fdiagnostics-color=never",
               is_clang(options.cxx) ? "-ferror-limit=30" : "-fmax-errors=30", "candidate.cpp"});
  if (!shim.entry.empty()) {
    auto entry = entry_object(shim, dir, options);
    if (!entry) {
      refuse(info, kforge_error(entry.error().message()));
      return obj;
    }
    argv.push_back(entry->filename().string());
  }
  for (const auto& l : options.libs) argv.push_back("-l" + l);
  argv.insert(argv.end(), {"-o", "solution.so"});
  info.command = join(argv);
  auto r = run_compiler(argv, dir, limits_of(options));
  if (!r) {
    refuse(info, kforge_error("cannot run the compiler: " + r.error().message()));
    return obj;
  }
  const bool storable = judge_run(*r, dir, shim, options, info);
  std::error_code ec;
  if (info.ok) {
    obj.interposed_symbols = interposed_symbols(dir / "solution.so", dir, options);
    fs::create_directories(cache, ec);
    fs::path staged = so;
    staged += fmt::format(".tmp{}", getpid());
    fs::copy_file(dir / "solution.so", staged, fs::copy_options::overwrite_existing, ec);
    // Stored only where no object is: another judge that compiled the same key (the same
    // source, flags and toolchain) may have stored it meanwhile and be running it, and a worker
    // is allowed its object by path: replacing the file under it would leave that worker's
    // descriptor on a file its sandbox no longer grants.
    if (!ec && ::link(staged.c_str(), so.c_str()) != 0 && errno != EEXIST)
      ec = std::error_code(errno, std::generic_category());
    std::error_code removed;
    fs::remove(staged, removed);
    if (ec) {
      refuse(info, kforge_error("cannot store the object in the cache: " + ec.message()));
      return obj;
    }
  }
  if (options.use_cache && storable) {
    nlohmann::json meta = {{"ok", info.ok},
                           {"seconds", info.seconds},
                           {"command", info.command},
                           {"log", info.log},
                           {"interposed", obj.interposed_symbols},
                           {"diagnostics", diagnostics_json(info.diagnostics)}};
    (void)write_file_atomic(meta_path, dump_json(meta));
  }
  return obj;
}

}  // namespace kf
