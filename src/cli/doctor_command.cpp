// `kforge doctor` (see doctor_command.h): a thin view over harness/machine.h.
#include "cli/doctor_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_output.h"
#include "harness/backend.h"
#include "harness/jail.h"
#include "harness/machine.h"
#include "support/fs.h"
#include "support/json_text.h"

namespace kf {
namespace {

// `kforge doctor --json`: the machine's description and measurements, its sandbox and backends
// (docs/schemas/doctor.schema.json).
constexpr const char* kDoctorSchema = "kforge-doctor/1";

struct DoctorOptions {
  bool refresh = false;
  bool json = false;
};

std::string format_bytes(int64_t bytes) {
  if (bytes <= 0) return "unknown";
  if (bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % (1 << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string or_absent(const std::string& s) {
  return s.empty() ? "(not found)" : s;
}

// Whether `machine` runs backend `b` (why_not empty) and its widest target there.
struct BackendStatus {
  std::string widest, why_not;
};

BackendStatus status_of(const Backend& b, const MachineInfo& machine) {
  if (const Status ok = b.supports(machine); !ok.ok()) return {"", ok.message()};
  auto widest = b.target("", machine);
  if (!widest) return {"", widest.error().message()};
  return {widest->name, ""};
}

void print_report(const MachineInfo& m, const std::string& cache_file) {
  auto row = [](const char* label, const std::string& value) {
    fmt::print("  {:<13}{}\n", label, value);
  };
  const int n = m.cores;
  fmt::print("kforge doctor\n");
  row("cpu", m.cpu_model.empty() ? "unknown" : m.cpu_model);
  row("isa", m.isa.empty() ? "(none detected)" : fmt::format("{}", fmt::join(m.isa, " ")));
  row("cores", fmt::format("{} usable by this process", n));
  row("caches", fmt::format("L1d {} and L2 {} per core, L3 {}", format_bytes(m.l1d_bytes),
                            format_bytes(m.l2_bytes), format_bytes(m.l3_bytes)));
  row("c++", or_absent(m.cxx_version));
  row("clang++", or_absent(m.clang_version));
  row("fp32 peak", fmt::format("{:.1f} GFLOP/s (1 thread), {:.1f} GFLOP/s ({} threads)",
                               m.peak_gflops_1t, m.peak_gflops_all, n));
  row("DRAM triad", fmt::format("{:.1f} GB/s (1 thread), {:.1f} GB/s ({} threads)", m.dram_gbps_1t,
                                m.dram_gbps_all, n));
  row("L2 triad", fmt::format("{:.1f} GB/s (1 thread, 256 KiB working set)", m.cache_gbps_1t));
  row("balance",
      fmt::format("{:.1f} FLOP/byte (1 thread), {:.1f} FLOP/byte ({} threads): "
                  "kernels below this intensity are memory-bound",
                  m.peak_gflops_1t / m.dram_gbps_1t, m.peak_gflops_all / m.dram_gbps_all, n));
  row("fingerprint", m.fingerprint);
  row("measured", fmt::format("{} (kforge doctor --refresh to measure again)", m.probed_at));
  row("cache", cache_file);
  const SandboxSupport& sb = sandbox_support();
  row("sandbox",
      sb.complete()
          ? fmt::format("complete: namespaces, Landlock ABI {}, seccomp notification{}",
                        sb.landlock_abi, sb.as_root ? ", candidates run as uid 65534" : "")
          : "INCOMPLETE: untrusted candidates are refused unless --unsafe-sandbox is given");
  for (const auto& m : sb.missing) row("", "missing: " + m);
  for (const Backend* b : backends()) {
    const BackendStatus st = status_of(*b, m);
    row(b == backends().front() ? "backends" : "",
        st.why_not.empty()
            ? fmt::format("{}: {} (targets {}; widest here {})", b->name, b->description,
                          fmt::join(b->target_names(), ", "), st.widest)
            : fmt::format("{}: not usable here: {}", b->name, st.why_not));
  }
}

// Each backend: whether this machine runs it, and its targets.
nlohmann::json backends_json(const MachineInfo& m) {
  nlohmann::json list = nlohmann::json::array();
  for (const Backend* b : backends()) {
    const BackendStatus st = status_of(*b, m);
    list.push_back({{"name", b->name},
                    {"targets", b->target_names()},
                    {"supported", st.why_not.empty()},
                    {"widest_target", st.widest},
                    {"why_not", st.why_not}});
  }
  return list;
}

nlohmann::json sandbox_json() {
  const SandboxSupport& sb = sandbox_support();
  return {{"complete", sb.complete()},
          {"namespaces", sb.namespaces},
          {"landlock", sb.landlock},
          {"landlock_abi", sb.landlock_abi},
          {"seccomp_notify", sb.seccomp_notify},
          {"as_root", sb.as_root},
          {"missing", sb.missing},
          {"unsafe_sandbox", unsafe_sandbox()}};
}

int run_doctor(const DoctorOptions& o) {
  ProbeOptions probe;
  probe.refresh = o.refresh;
  MachineInfo facts = describe_machine(probe.cxx);
  std::string cache_file = machine_cache_file(facts.fingerprint).string();
  std::error_code ec;
  if (!o.json && (o.refresh || !fs::exists(cache_file, ec)))
    fmt::print(stderr,
               "measuring this machine (about {:.0f} s, more the first time: the probe "
               "is compiled)...\n",
               probe.seconds);
  auto m = probe_machine(probe);
  if (!m) {
    fmt::print(stderr, "kforge doctor: {}\n", m.error().message());
    return 1;
  }
  cache_file = machine_cache_file(m->fingerprint).string();
  if (o.json) {
    nlohmann::json j = m->to_json();
    j["cache_file"] = cache_file;
    j["sandbox"] = sandbox_json();
    j["backends"] = backends_json(*m);
    print_json(kDoctorSchema, std::move(j));
    return 0;
  }
  print_report(*m, cache_file);
  return 0;
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Describe this machine and measure its fp32 peak and memory bandwidth");
  cmd->add_flag("--refresh", options->refresh, "Measure again instead of using the cached figures");
  cmd->add_flag("--json", options->json,
                fmt::format("Print the machine description as one JSON document (schema "
                            "\"{}\", docs/json.md)",
                            kDoctorSchema));
  cmd->callback([options] {
    int rc = run_doctor(*options);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace kf
