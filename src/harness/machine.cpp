// Machine description and measurement (see machine.h). describe_machine() reads /proc/cpuinfo,
// CPUID and sysfs; probe_machine() compiles the embedded probe program once per compiler and
// machine, runs it, and caches its figures per machine fingerprint.
#include "harness/machine.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include "harness/machine_probe_source.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iterator>
#include <sstream>
#include <thread>
#include <type_traits>

#include "support/fs.h"
#include "support/hash.h"
#include "support/json_text.h"
#include "support/subprocess.h"

namespace kf {
namespace {

using json = nlohmann::json;

// -std=c++17 (not gnu++17) turns GCC's FMA contraction off; the probe needs `a * b + c` fused.
const std::vector<std::string> kProbeFlags = {"-std=c++17", "-O3", "-march=native",
                                              "-ffp-contract=fast", "-fopenmp"};

// ISA extensions worth knowing for kernels, in /proc/cpuinfo's names.
constexpr const char* kIsaFlags =
    "sse4_2 avx avx2 fma f16c avx512f avx512dq avx512cd avx512bw avx512vl avx512ifma avx512vbmi "
    "avx512_vbmi2 avx512_vnni avx512_bf16 avx512_fp16 avx512_vpopcntdq avx512_bitalg avx_vnni "
    "amx_tile amx_bf16 amx_int8";

// Whitespace-separated words.
std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  return {std::istream_iterator<std::string>(in), {}};
}

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The value of the first "key : value" line of /proc/cpuinfo, "" if absent.
std::string cpuinfo_field(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    size_t colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key)
      return trim(line.substr(colon + 1));
  }
  return "";
}

struct Caches {
  int64_t l1d = 0, l2 = 0, l3 = 0;
  bool complete() const { return l1d > 0 && l2 > 0 && l3 > 0; }
  void set(int level, int64_t bytes) {
    int64_t& slot = level == 1 ? l1d : level == 2 ? l2 : l3;
    if (level >= 1 && level <= 3 && slot == 0) slot = bytes;
  }
};

#if defined(__x86_64__) || defined(__i386__)
std::string cpuid_brand() {
  unsigned r[12] = {};
  for (unsigned i = 0; i < 3; ++i)
    if (!__get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]))
      return "";
  char brand[49] = {};
  std::memcpy(brand, r, 48);
  return trim(brand);
}

// Deterministic cache parameters: Intel's leaf 4 and AMD's 0x8000001D share one layout.
void read_cache_leaf(unsigned leaf, Caches& caches) {
  for (unsigned i = 0; i < 16; ++i) {
    unsigned a, b, c, d;
    __cpuid_count(leaf, i, a, b, c, d);
    unsigned type = a & 31;  // 0: no more caches, 1: data, 2: instruction, 3: unified
    if (type == 0) break;
    if (type == 2) continue;
    int64_t ways = (b >> 22) + 1, parts = ((b >> 12) & 1023) + 1, line = (b & 4095) + 1;
    caches.set((a >> 5) & 7, ways * parts * line * (int64_t{c} + 1));
  }
}

Caches cpuid_caches() {
  Caches caches;
  unsigned max_leaf, b, c, d, max_ext, unused;
  if (!__get_cpuid(0, &max_leaf, &b, &c, &d)) return caches;
  bool amd = (b == 0x68747541 && d == 0x69746e65) || b == 0x6f677948;  // AuthenticAMD, Hygon
  __cpuid(0x80000000, max_ext, unused, unused, unused);
  if (!amd && max_leaf >= 4) read_cache_leaf(4, caches);
  if (amd && max_ext >= 0x8000001D) read_cache_leaf(0x8000001D, caches);
  // Legacy AMD leaves. In a VM their L3 may be the host's whole socket (508 MiB on Zen 5 here,
  // where a triad sweep shows ~32 MiB).
  if (amd && !caches.complete() && max_ext >= 0x80000006) {
    unsigned l1[4], l2[4];
    __cpuid(0x80000005, l1[0], l1[1], l1[2], l1[3]);
    __cpuid(0x80000006, l2[0], l2[1], l2[2], l2[3]);
    caches.set(1, int64_t{l1[2] >> 24} << 10);
    caches.set(2, int64_t{l2[2] >> 16} << 10);
    caches.set(3, int64_t{l2[3] >> 18} << 19);
  }
  return caches;
}
#else
std::string cpuid_brand() {
  return "";
}
Caches cpuid_caches() {
  return {};
}
#endif

// Fills what CPUID left unknown from /sys/devices/system/cpu/cpu0/cache (size "48K").
void sysfs_caches(Caches& caches) {
  for (int i = 0; i < 8 && !caches.complete(); ++i) {
    fs::path dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}", i);
    auto level = read_file(dir / "level"), type = read_file(dir / "type");
    auto size = read_file(dir / "size");
    if (!level || !type || !size || trim(*type) == "Instruction") continue;
    int64_t bytes = std::atoll(size->c_str());
    if (size->find('K') != std::string::npos) bytes <<= 10;
    if (size->find('M') != std::string::npos) bytes <<= 20;
    caches.set(std::atoi(level->c_str()), bytes);
  }
}

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

int numa_nodes() {
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/node", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.starts_with("node") &&
        std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      ++n;
  }
  return std::max(1, n);
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <typename T>
const char* kind_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, double>) return "a number";
  if constexpr (std::is_integral_v<T>) return "an integer";
  return "an array of strings";
}

// Reads j[key] into out; the error names the field and the type it must have.
template <typename T>
Status read_field(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::error(fmt::format("machine info: missing field '{}'", key));
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) ok = it->is_string();
  if constexpr (std::is_same_v<T, double>) ok = it->is_number();
  if constexpr (std::is_integral_v<T>) ok = it->is_number_integer();
  if constexpr (std::is_same_v<T, std::vector<std::string>>)
    ok = it->is_array() &&
         std::all_of(it->begin(), it->end(), [](const json& e) { return e.is_string(); });
  if (!ok)
    return Status::error(fmt::format("machine info: field '{}' must be {}, got {}", key,
                                     kind_name<T>(), it->dump().substr(0, 60)));
  out = it->get<T>();
  return ok_status();
}

// The measured figures, shared by from_json() and the probe's output.
Status read_measurements(const json& j, MachineInfo& m) {
  KF_RETURN_IF_ERROR(read_field(j, "peak_gflops_1t", m.peak_gflops_1t));
  KF_RETURN_IF_ERROR(read_field(j, "peak_gflops_all", m.peak_gflops_all));
  KF_RETURN_IF_ERROR(read_field(j, "dram_gbps_1t", m.dram_gbps_1t));
  KF_RETURN_IF_ERROR(read_field(j, "dram_gbps_all", m.dram_gbps_all));
  return read_field(j, "cache_gbps_1t", m.cache_gbps_1t);
}

double interpolate(double one, double all, int threads, int cores) {
  if (threads <= 1) return one;
  if (threads >= cores) return all;
  return one + (all - one) * (threads - 1) / static_cast<double>(cores - 1);
}

std::string describe_failure(const ProcessResult& r) {
  if (r.timed_out) return fmt::format("timed out after {:.0f} s", r.seconds);
  if (r.signal != 0) return fmt::format("killed by signal {}", r.signal);
  return fmt::format("exit code {}", r.exit_code);
}

std::string tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// The compiled probe, from the cache or compiled now (published by an atomic rename).
Expected<fs::path> build_probe(const ProbeOptions& o, const MachineInfo& m) {
  Hasher h;
  h.add(kMachineProbeSource).add(o.cxx).add(m.cxx_version).add(m.fingerprint);
  for (const auto& f : kProbeFlags) h.add(f);
  fs::path binary = cache_dir() / "machine" / ("probe-" + h.hex().substr(0, 16));
  std::error_code ec;
  if (fs::exists(binary, ec)) return binary;
  fs::create_directories(binary.parent_path(), ec);
  if (ec) return Status::error(binary.parent_path().string() + ": cannot create: " + ec.message());

  TempDir tmp("kforge-probe");
  fs::path source = tmp.path() / "probe.cpp";
  KF_RETURN_IF_ERROR(write_file_atomic(source, kMachineProbeSource));
  fs::path staged =
      binary.string() +
      fmt::format(".tmp{}.{}", getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  ProcessOptions p;
  p.argv = {o.cxx};
  p.argv.insert(p.argv.end(), kProbeFlags.begin(), kProbeFlags.end());
  p.argv.insert(p.argv.end(), {source.string(), "-o", staged.string()});
  p.timeout_s = 180;
  auto r = run_process(p);
  if (!r) return r.error().with_context("machine probe: running " + o.cxx);
  if (!r->ok()) {
    fs::remove(staged, ec);
    return Status::error(fmt::format("machine probe: '{} {}' failed to compile the probe ({}):\n{}",
                                     o.cxx, fmt::join(kProbeFlags, " "), describe_failure(*r),
                                     tail(r->err, 2000)));
  }
  fs::rename(staged, binary, ec);
  if (ec) return Status::error(binary.string() + ": cannot save the probe: " + ec.message());
  return binary;
}

// Runs the probe on every usable CPU and fills in m's measurements.
Status run_probe(const fs::path& binary, double seconds, MachineInfo& m) {
  ProcessOptions p;
  p.argv = {binary.string(), fmt::format("{}", seconds)};
  p.env_set = {{"OMP_NUM_THREADS", std::to_string(m.cores)},
               {"OMP_DYNAMIC", "false"},
               {"OMP_PROC_BIND", "false"}};  // the probe pins its threads itself
  p.timeout_s = 30 + 10 * seconds;
  auto r = run_process(p);
  if (!r) return r.error().with_context("machine probe: running " + binary.string());
  if (!r->ok())
    return Status::error(fmt::format("machine probe: {} failed ({}):\n{}", binary.string(),
                                     describe_failure(*r), tail(r->err, 2000)));
  json out = json::parse(r->out, nullptr, false);
  if (out.is_discarded() || !out.is_object())
    return Status::error("machine probe: output is not a JSON object: " + tail(r->out, 300));
  KF_RETURN_IF_ERROR(read_measurements(out, m).with_context("machine probe output"));
  for (double v :
       {m.peak_gflops_1t, m.peak_gflops_all, m.dram_gbps_1t, m.dram_gbps_all, m.cache_gbps_1t})
    if (!std::isfinite(v) || v <= 0)
      return Status::error("machine probe: implausible measurement in " + r->out);
  return ok_status();
}

// The cached measurements for m's fingerprint copied into m; false if absent or unreadable.
// An exclusive flock held for the object's life; a lock that cannot be taken (a read-only cache)
// only loses the serialization, never the probe.
class ProbeLock {
 public:
  explicit ProbeLock(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~ProbeLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  ProbeLock(const ProbeLock&) = delete;
  ProbeLock& operator=(const ProbeLock&) = delete;

 private:
  int fd_ = -1;
};

bool load_cached(const fs::path& file, MachineInfo& m) {
  auto text = read_file(file);
  if (!text) return false;
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) return false;
  auto cached = MachineInfo::from_json(j);
  if (!cached || cached->fingerprint != m.fingerprint || cached->probed_at.empty()) return false;
  MachineInfo facts = m;
  m = *cached;
  m.clang_version = facts.clang_version;  // not part of the fingerprint: report today's
  m.numa_nodes = facts.numa_nodes;
  return true;
}

}  // namespace

json MachineInfo::to_json() const {
  return json{{"cpu_model", cpu_model},
              {"isa", isa},
              {"cores", cores},
              {"numa_nodes", numa_nodes},
              {"l1d_bytes", l1d_bytes},
              {"l2_bytes", l2_bytes},
              {"l3_bytes", l3_bytes},
              {"cxx_version", cxx_version},
              {"clang_version", clang_version},
              {"peak_gflops_1t", peak_gflops_1t},
              {"peak_gflops_all", peak_gflops_all},
              {"dram_gbps_1t", dram_gbps_1t},
              {"dram_gbps_all", dram_gbps_all},
              {"cache_gbps_1t", cache_gbps_1t},
              {"fingerprint", fingerprint},
              {"probed_at", probed_at}};
}

Expected<MachineInfo> MachineInfo::from_json(const json& j) {
  if (!j.is_object()) return Status::error("machine info: expected a JSON object");
  MachineInfo m;
  KF_RETURN_IF_ERROR(read_field(j, "cpu_model", m.cpu_model));
  KF_RETURN_IF_ERROR(read_field(j, "isa", m.isa));
  KF_RETURN_IF_ERROR(read_field(j, "cores", m.cores));
  if (j.contains("numa_nodes"))  // optional: caches written before it existed lack it
    KF_RETURN_IF_ERROR(read_field(j, "numa_nodes", m.numa_nodes));
  KF_RETURN_IF_ERROR(read_field(j, "l1d_bytes", m.l1d_bytes));
  KF_RETURN_IF_ERROR(read_field(j, "l2_bytes", m.l2_bytes));
  KF_RETURN_IF_ERROR(read_field(j, "l3_bytes", m.l3_bytes));
  KF_RETURN_IF_ERROR(read_field(j, "cxx_version", m.cxx_version));
  KF_RETURN_IF_ERROR(read_field(j, "clang_version", m.clang_version));
  KF_RETURN_IF_ERROR(read_measurements(j, m));
  KF_RETURN_IF_ERROR(read_field(j, "fingerprint", m.fingerprint));
  KF_RETURN_IF_ERROR(read_field(j, "probed_at", m.probed_at));
  return m;
}

double MachineInfo::peak_gflops(int threads) const {
  return interpolate(peak_gflops_1t, peak_gflops_all, threads, cores);
}

double MachineInfo::dram_gbps(int threads) const {
  return interpolate(dram_gbps_1t, dram_gbps_all, threads, cores);
}

MachineInfo describe_machine(const std::string& cxx) {
  MachineInfo m;
  auto cpuinfo = read_file("/proc/cpuinfo");
  std::string text = cpuinfo ? *cpuinfo : "";
  m.cpu_model = cpuinfo_field(text, "model name");
  if (m.cpu_model.empty()) m.cpu_model = cpuid_brand();
  std::vector<std::string> present = words(cpuinfo_field(text, "flags"));
  for (const std::string& f : words(kIsaFlags)) {
    if (std::find(present.begin(), present.end(), f) == present.end()) continue;
    if (f == "amx_tile") m.isa.push_back("amx");  // AMX usable at all
    m.isa.push_back(f);
  }
  m.cores = usable_cpus();
  m.numa_nodes = numa_nodes();
  Caches caches = cpuid_caches();
  sysfs_caches(caches);
  m.l1d_bytes = caches.l1d, m.l2_bytes = caches.l2, m.l3_bytes = caches.l3;
  m.cxx_version = first_line_of({cxx, "--version"});
  m.clang_version = first_line_of({"clang++", "--version"});

  Hasher h;
  h.add(m.cpu_model).add(std::to_string(m.isa.size()));
  for (const auto& f : m.isa) h.add(f);
  h.add(fmt::format("{} {} {} {}", m.cores, m.l1d_bytes, m.l2_bytes, m.l3_bytes));
  h.add(m.cxx_version);
  m.fingerprint = h.hex().substr(0, 16);
  return m;
}

fs::path machine_cache_file(const std::string& fingerprint) {
  return cache_dir() / "machine" / (fingerprint + ".json");
}

Expected<MachineInfo> probe_machine(const ProbeOptions& options) {
  MachineInfo m = describe_machine(options.cxx);
  if (m.cxx_version.empty())
    return Status::error(fmt::format(
        "machine probe: cannot run the compiler '{0}' ('{0} --version' failed); is it installed "
        "and on PATH?",
        options.cxx));
  fs::path file = machine_cache_file(m.fingerprint);
  if (!options.refresh && load_cached(file, m)) return m;
  // One probe at a time per cache: a probe that runs beside another measures the ceilings low
  // (each takes cores from the other), and low ceilings make correct kernels "suspicious". A
  // process that waited reads what the one before it measured.
  ProbeLock lock(file.parent_path() / "probe.lock");
  if (!options.refresh && load_cached(file, m)) return m;

  auto binary = build_probe(options, m);
  if (!binary) return binary.error();
  KF_RETURN_IF_ERROR(run_probe(*binary, options.seconds, m));
  m.probed_at = iso_now();
  KF_RETURN_IF_ERROR(write_file_atomic(file, dump_json(m.to_json(), 2) + "\n")
                         .with_context("machine probe: saving the results"));
  return m;
}

}  // namespace kf
