#include "agents/profile_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kf::agents {
namespace {

std::string percent(double f) {
  return fmt::format("{:.0f}%", 100 * f);
}

std::string shorten(const std::string& s, size_t n = 60) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

bool has_avx512(const MachineInfo& m) {
  return std::find(m.isa.begin(), m.isa.end(), "avx512f") != m.isa.end();
}

void roofline_findings(const Profile& p, std::vector<std::string>& out) {
  const RooflinePosition& r = p.roofline;
  if (!r.known) {
    out.push_back(
        "no roofline position: the result has no timing at the bench shape or no "
        "machine limits");
    return;
  }
  const std::string headroom =
      r.headroom > 0 ? fmt::format(": up to {}x headroom", format_number(r.headroom)) : "";
  if (r.bound == "memory") {
    const double of_dram = r.peak_gbps > 0 ? r.gbps / r.peak_gbps : r.fraction;
    if (of_dram > 1.05) {
      out.push_back(fmt::format(
          "memory-bound by the DRAM roofline, yet at {} of DRAM bandwidth ({} of {} GB/s): the "
          "data is served from cache ({})",
          percent(of_dram), format_number(r.gbps), format_number(r.peak_gbps),
          p.working_set.level == "DRAM" ? "input rotation leaves part of it warm"
                                        : "working set fits " + p.working_set.level));
      return;
    }
    std::string s = fmt::format(
        "memory-bound at {} of DRAM bandwidth ({} of {} GB/s, {} FLOP/byte)", percent(of_dram),
        format_number(r.gbps), format_number(r.peak_gbps), format_number(r.intensity));
    if (r.fraction >= 0.8)
      s += ": near the memory roofline; more speed needs less traffic (fuse passes, reuse data "
           "in cache, narrower types)";
    else
      s += headroom;
    out.push_back(s);
    return;
  }
  std::string s = fmt::format(
      "compute-bound at {} of the FMA peak ({} of {} GFLOP/s, {} FLOP/byte)", percent(r.fraction),
      format_number(r.gflops), format_number(r.peak_gflops), format_number(r.intensity));
  s += r.fraction >= 0.8 ? ": near the compute roofline" : headroom;
  out.push_back(s);
}

void thread_findings(const Profile& p, std::vector<std::string>& out) {
  const ThreadUse& t = p.thread_use;
  if (!t.known || t.requested < 2) return;
  if (p.tags.serial_when_parallel_requested) {
    out.push_back(fmt::format("threads: {} of {} CPUs busy: the kernel runs serially",
                              format_number(t.cpus_busy), t.requested));
    return;
  }
  if (t.cpus_busy < 0.85) {
    out.push_back(fmt::format(
        "threads: {} of {} CPUs busy, less than one: the kernel sleeps or waits (locks, page "
        "faults), or other work shares the machine; measure again before parallelizing",
        format_number(t.cpus_busy), t.requested));
    return;
  }
  if (t.cpus_busy < 0.8 * t.requested)
    out.push_back(fmt::format(
        "threads: {} of {} CPUs busy: part of each call is serial, imbalanced or waiting",
        format_number(t.cpus_busy), t.requested));
}

void vectorization_findings(const VectorizationReport& v, std::vector<std::string>& out) {
  if (!v.available) return;
  if (!v.narrow_loops.empty()) {
    std::string s = fmt::format("{} hot loop(s) vectorized with only 8-byte vectors (two floats)",
                                v.narrow_loops.size());
    for (size_t i = 0; i < std::min<size_t>(3, v.narrow_loops.size()); ++i)
      s += fmt::format("{} line {} `{}`", i == 0 ? ":" : ";", v.narrow_loops[i].line,
                       shorten(v.narrow_loops[i].source));
    out.push_back(s +
                  ": a strided access GCC could only pair up; make the innermost loop walk "
                  "memory contiguously");
  }
  if (v.missed == 0) return;
  std::string s = fmt::format("{} of {} hot loops not vectorized", v.missed, v.hot_loops);
  const size_t shown = std::min<size_t>(3, v.missed_loops.size());
  for (size_t i = 0; i < shown; ++i) {
    const MissedLoop& m = v.missed_loops[i];
    s +=
        fmt::format("{} line {} `{}`: {}", i == 0 ? ":" : ";", m.line, shorten(m.source), m.reason);
  }
  const int rest = v.missed - static_cast<int>(shown);
  if (rest > 0) s += fmt::format("; {} more", rest);
  out.push_back(s);
}

void fma_findings(const Profile& p, bool avx512, std::vector<std::string>& out) {
  const InstructionMix& m = p.instructions;
  if (!m.available) return;
  const InstructionCounts& c = m.hot();
  const char* where = m.innermost_loops > 0 ? "in the innermost loops" : "in the kernel";
  const int n = c.fmas();
  if (p.tags.scalar_fma_heavy)
    out.push_back(
        fmt::format("scalar FMAs dominate {}: {} of {} FMAs are scalar (vfmadd..ss/sd): "
                    "the arithmetic runs one element at a time",
                    where, c.fma_scalar, n));
  if (n > 0 && avx512 && c.fma_zmm == 0)
    out.push_back(
        fmt::format("no 512-bit FMAs: 0 of {} FMAs {} are packed zmm ({} ymm, {} xmm, "
                    "{} scalar)",
                    n, where, c.fma_ymm, c.fma_xmm, c.fma_scalar));
  else if (n > 0 && avx512 && c.zmm_fma_share() < 0.5)
    out.push_back(
        fmt::format("only {} of {} FMAs {} are packed zmm (512-bit)", c.fma_zmm, n, where));
  if (p.tags.scalar_in_loops)
    out.push_back(fmt::format(
        "the innermost loops hold {} scalar vs {} packed floating-point instructions: an in-order "
        "reduction (one lane at a time), a scalar remainder or fallback loop, or a loop left "
        "scalar",
        m.loops.scalar_fp(), m.loops.packed_fp()));
  if (n == 0 && p.tags.compute_bound)
    out.push_back(
        fmt::format("no FMA instructions {}, though the kernel is compute-bound: "
                    "multiplies and adds are separate or the arithmetic is not "
                    "multiply-add shaped",
                    where));
  if (c.gathers > 0)
    out.push_back(
        fmt::format("{} gather instructions {}: indexed loads fetch about one element "
                    "per cycle; make the access unit-stride (transpose or pack)",
                    c.gathers, where));
}

void memory_findings(const Profile& p, std::vector<std::string>& out) {
  const ThreadUse& t = p.thread_use;
  if (p.tags.faults_in_hot_path)
    out.push_back(fmt::format(
        "{} page faults per call: memory is allocated or first touched inside the timed call "
        "(~{} newly mapped per call at 4 KiB pages); allocate once and reuse",
        format_number(t.faults_per_call), format_bytes(4096 * t.faults_per_call)));
  const WorkingSet& w = p.working_set;
  if (w.bytes <= 0 || w.level == "unknown") return;
  if (w.level == "DRAM") {
    std::string s = fmt::format("working set {}: DRAM-resident", format_bytes(w.bytes));
    if (w.dram_pass_s > 0)
      s += fmt::format("; each pass over it costs >= {} at {} GB/s", format_seconds(w.dram_pass_s),
                       format_number(w.bytes / w.dram_pass_s * 1e-9));
    out.push_back(s);
    return;
  }
  out.push_back(fmt::format("working set {} ({} per thread): fits in {}", format_bytes(w.bytes),
                            format_bytes(w.bytes_per_thread), w.level));
}

void info_findings(const Profile& p, bool avx512, std::vector<std::string>& out) {
  const ThreadUse& t = p.thread_use;
  if (t.known && t.context_switches_per_call >= 1)
    out.push_back(
        fmt::format("{} context switches per call: threads block and wake inside the "
                    "call (thread start-up, locks or sleeping barriers)",
                    format_number(t.context_switches_per_call)));
  const VectorizationReport& v = p.vectorization;
  if (v.available && v.hot_loops > 0 && v.missed == 0 && v.narrow_loops.empty()) {
    std::string s = fmt::format("all {} hot loops vectorized", v.hot_loops);
    if (v.explicit_simd > 0) s += fmt::format(" ({} with explicit vector code)", v.explicit_simd);
    if (v.widest_bytes > 0) s += fmt::format("; widest vectors {} bytes", v.widest_bytes);
    if (avx512 && v.widest_bytes > 0 && v.widest_bytes < 64) s += " (AVX-512 has 64)";
    out.push_back(s);
  }
  const InstructionMix& m = p.instructions;
  if (m.available) {
    auto counts = [](const InstructionCounts& c) {
      return fmt::format(
          "{} instructions; FMAs {} zmm, {} ymm, {} xmm, {} scalar; {} other packed "
          "and {} scalar FP ops; {} loads, {} stores, {} gathers",
          c.total, c.fma_zmm, c.fma_ymm, c.fma_xmm, c.fma_scalar, c.packed_arith, c.scalar_arith,
          c.loads, c.stores, c.gathers);
    };
    out.push_back(fmt::format(
        "static instruction mix (instructions in the code, not executed counts) of {} "
        "function(s){}: {}; in {} innermost loop(s): {}",
        m.symbols.size(), m.inlined_into_entry ? " (the kernel is inlined into kf_entry)" : "",
        counts(m.all), m.innermost_loops, counts(m.loops)));
  }
  if (!v.available && !v.unavailable.empty())
    out.push_back("vectorization report unavailable: " + v.unavailable);
  if (!m.available && !m.unavailable.empty())
    out.push_back("instruction mix unavailable: " + m.unavailable);
}

}  // namespace

std::string format_number(double x) {
  if (!std::isfinite(x)) return fmt::format("{}", x);
  const double a = std::fabs(x);
  std::string s = a >= 100  ? fmt::format("{:.0f}", x)
                  : a >= 10 ? fmt::format("{:.1f}", x)
                  : a >= 1  ? fmt::format("{:.2f}", x)
                            : fmt::format("{:.2g}", x);
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return format_number(bytes) + " " + units[u];
}

std::string format_seconds(double s) {
  if (s >= 1) return format_number(s) + " s";
  if (s >= 1e-3) return format_number(s * 1e3) + " ms";
  if (s >= 1e-6) return format_number(s * 1e6) + " us";
  return format_number(s * 1e9) + " ns";
}

// Stage 8: where the time goes, largest stage first.
void stage_findings(const StageTimes& st, std::vector<std::string>& out) {
  if (!st.known) {
    if (!st.unavailable.empty()) out.push_back("time per stage unavailable: " + st.unavailable);
    return;
  }
  std::vector<StageTime> by_time = st.stages;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const StageTime& a, const StageTime& b) { return a.seconds > b.seconds; });
  std::string parts;
  for (const StageTime& t : by_time)
    parts += fmt::format("{}{} {:.0f}% ({})", parts.empty() ? "" : ", ", t.stage, 100 * t.share,
                         format_seconds(t.seconds));
  out.push_back(fmt::format("time per stage (instrumented build, {} call{}): {}", st.calls,
                            st.calls == 1 ? "" : "s", parts));
}

std::vector<std::string> profile_findings(const Profile& p, const MachineInfo& machine) {
  std::vector<std::string> out;
  const bool avx512 = has_avx512(machine);
  if (p.verdict != "ok" && !p.verdict.empty())
    out.push_back(
        fmt::format("verdict {}: the timing figures are missing or not trustworthy", p.verdict));
  roofline_findings(p, out);
  thread_findings(p, out);
  stage_findings(p.stage_times, out);
  vectorization_findings(p.vectorization, out);
  fma_findings(p, avx512, out);
  memory_findings(p, out);
  info_findings(p, avx512, out);
  return out;
}

}  // namespace kf::agents
