// Profile::to_json() and Profile::from_json() (declared in profiler.h): the Profile message as it
// is stored and as an LLM brain reads it. One object per stage, named as the struct members.
#include <fmt/format.h>

#include <type_traits>

#include "agents/profiler.h"

namespace kf::agents {
namespace {

using json = nlohmann::json;

// Reads the fields of one JSON object; the first failure sticks and names "section.field".
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object())
      status_ = Status::error(fmt::format("profile: '{}' must be an object", path_));
  }
  template <typename T>
  Reader& operator()(const char* key, T& out) {
    if (!status_.ok()) return *this;
    const std::string name = path_.empty() ? key : path_ + "." + key;
    auto it = j_.find(key);
    if (it == j_.end()) {
      status_ = Status::error(fmt::format("profile: missing field '{}'", name));
      return *this;
    }
    if (!fits<T>(*it)) {
      status_ = Status::error(fmt::format("profile: field '{}' has the wrong type: {}", name,
                                          it->dump().substr(0, 60)));
      return *this;
    }
    out = it->get<T>();
    return *this;
  }
  // A nested object, read by `read(Reader&)`.
  template <typename F>
  Reader& object(const char* key, F read) {
    if (!status_.ok()) return *this;
    const std::string name = path_.empty() ? key : path_ + "." + key;
    auto it = j_.find(key);
    if (it == j_.end()) {
      status_ = Status::error(fmt::format("profile: missing field '{}'", name));
      return *this;
    }
    Reader sub(*it, name);
    read(sub);
    status_ = sub.status_;
    return *this;
  }
  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }
  const Status& status() const { return status_; }
  void fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }

 private:
  template <typename T>
  static bool fits(const json& v) {
    if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
    if constexpr (std::is_same_v<T, std::string>) return v.is_string();
    if constexpr (std::is_same_v<T, double>) return v.is_number();
    if constexpr (std::is_same_v<T, int>) return v.is_number_integer();
    if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (!v.is_array()) return false;
      for (const auto& e : v)
        if (!e.is_string()) return false;
      return true;
    }
    if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) return false;
      for (const auto& e : v)
        if (!e.is_number_integer()) return false;
      return true;
    }
    return false;
  }

  const json& j_;
  std::string path_;
  Status status_;
};

void read_missed(Reader& r, const char* key, std::vector<MissedLoop>& out) {
  auto it = r.raw().find(key);
  if (it == r.raw().end() || !it->is_array()) {
    r.fail(Status::error(fmt::format("profile: field '{}.{}' must be an array", r.path(), key)));
    return;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    MissedLoop m;
    Reader e((*it)[i], fmt::format("{}.{}[{}]", r.path(), key, i));
    e("line", m.line)("source", m.source)("reason", m.reason)("reason_line", m.reason_line);
    if (!e.status().ok()) return r.fail(e.status());
    out.push_back(std::move(m));
  }
}

json stage_times_json(const StageTimes& st) {
  json stages = json::array();
  for (const StageTime& t : st.stages)
    stages.push_back({{"stage", t.stage}, {"seconds", t.seconds}, {"share", t.share}});
  return {{"known", st.known},
          {"unavailable", st.unavailable},
          {"calls", st.calls},
          {"stages", stages}};
}

// Optional: profiles stored before stage 8 existed have no "stage_times".
void read_stage_times(Reader& r, StageTimes& st) {
  auto it = r.raw().find("stage_times");
  if (it == r.raw().end()) return;
  Reader s(*it, "stage_times");
  s("known", st.known)("unavailable", st.unavailable)("calls", st.calls);
  auto arr = it->find("stages");
  if (s.status().ok() && (arr == it->end() || !arr->is_array()))
    s.fail(Status::error("profile: field 'stage_times.stages' must be an array"));
  for (size_t i = 0; s.status().ok() && i < arr->size(); ++i) {
    StageTime t;
    Reader e((*arr)[i], fmt::format("stage_times.stages[{}]", i));
    e("stage", t.stage)("seconds", t.seconds)("share", t.share);
    if (!e.status().ok()) s.fail(e.status());
    st.stages.push_back(std::move(t));
  }
  if (!s.status().ok()) r.fail(s.status());
}

json counts_json(const InstructionCounts& c) {
  return {{"total", c.total},
          {"fma_zmm", c.fma_zmm},
          {"fma_ymm", c.fma_ymm},
          {"fma_xmm", c.fma_xmm},
          {"fma_scalar", c.fma_scalar},
          {"packed_arith", c.packed_arith},
          {"scalar_arith", c.scalar_arith},
          {"loads", c.loads},
          {"stores", c.stores},
          {"gathers", c.gathers},
          {"scatters", c.scatters}};
}

void read_counts(Reader& r, InstructionCounts& c) {
  r("total", c.total)("fma_zmm", c.fma_zmm)("fma_ymm", c.fma_ymm)("fma_xmm", c.fma_xmm)(
      "fma_scalar", c.fma_scalar)("packed_arith", c.packed_arith)("scalar_arith", c.scalar_arith)(
      "loads", c.loads)("stores", c.stores)("gathers", c.gathers)("scatters", c.scatters);
}

}  // namespace

json Profile::to_json() const {
  const RooflinePosition& r = roofline;
  const WorkingSet& w = working_set;
  const VectorizationReport& v = vectorization;
  const InstructionMix& m = instructions;
  const ThreadUse& u = thread_use;
  auto loops_json = [](const std::vector<MissedLoop>& loops) {
    json out = json::array();
    for (const MissedLoop& l : loops)
      out.push_back({{"line", l.line},
                     {"source", l.source},
                     {"reason", l.reason},
                     {"reason_line", l.reason_line}});
    return out;
  };
  return {
      {"task", task},
      {"shape", shape},
      {"verdict", verdict},
      {"threads", threads},
      {"roofline",
       {{"known", r.known},
        {"bound", r.bound},
        {"gflops", r.gflops},
        {"gbps", r.gbps},
        {"peak_gflops", r.peak_gflops},
        {"peak_gbps", r.peak_gbps},
        {"attainable_gflops", r.attainable_gflops},
        {"fraction", r.fraction},
        {"intensity", r.intensity},
        {"headroom", r.headroom}}},
      {"working_set",
       {{"bytes", w.bytes},
        {"bytes_per_thread", w.bytes_per_thread},
        {"level", w.level},
        {"fits_l1", w.fits_l1},
        {"fits_l2", w.fits_l2},
        {"fits_l3", w.fits_l3},
        {"dram_pass_s", w.dram_pass_s}}},
      {"vectorization",
       {{"available", v.available},
        {"unavailable", v.unavailable},
        {"hot_loops", v.hot_loops},
        {"vectorized", v.vectorized},
        {"explicit_simd", v.explicit_simd},
        {"missed", v.missed},
        {"outer_missed", v.outer_missed},
        {"widest_bytes", v.widest_bytes},
        {"vectorized_lines", v.vectorized_lines},
        {"missed_loops", loops_json(v.missed_loops)},
        {"narrow_loops", loops_json(v.narrow_loops)}}},
      {"instructions",
       {{"available", m.available},
        {"unavailable", m.unavailable},
        {"symbols", m.symbols},
        {"inlined_into_entry", m.inlined_into_entry},
        {"innermost_loops", m.innermost_loops},
        {"all", counts_json(m.all)},
        {"loops", counts_json(m.loops)}}},
      {"thread_use",
       {{"known", u.known},
        {"requested", u.requested},
        {"cpus_busy", u.cpus_busy},
        {"faults_per_call", u.faults_per_call},
        {"major_faults_per_call", u.major_faults_per_call},
        {"context_switches_per_call", u.context_switches_per_call}}},
      {"stage_times", stage_times_json(stage_times)},
      {"tags",
       {{"memory_bound", tags.memory_bound},
        {"compute_bound", tags.compute_bound},
        {"not_vectorized", tags.not_vectorized},
        {"scalar_fma_heavy", tags.scalar_fma_heavy},
        {"scalar_in_loops", tags.scalar_in_loops},
        {"serial_when_parallel_requested", tags.serial_when_parallel_requested},
        {"faults_in_hot_path", tags.faults_in_hot_path},
        {"fits_l1", tags.fits_l1},
        {"fits_l2", tags.fits_l2},
        {"fits_l3", tags.fits_l3}}},
      {"findings", findings},
  };
}

Expected<Profile> Profile::from_json(const json& j) {
  Profile p;
  Reader r(j, "");
  r("task", p.task)("shape", p.shape)("verdict", p.verdict)("threads", p.threads);
  r.object("roofline", [&](Reader& s) {
    RooflinePosition& x = p.roofline;
    s("known", x.known)("bound", x.bound)("gflops", x.gflops)("gbps", x.gbps)(
        "peak_gflops", x.peak_gflops)("peak_gbps", x.peak_gbps)(
        "attainable_gflops", x.attainable_gflops)("fraction", x.fraction)("intensity", x.intensity)(
        "headroom", x.headroom);
  });
  r.object("working_set", [&](Reader& s) {
    WorkingSet& x = p.working_set;
    s("bytes", x.bytes)("bytes_per_thread", x.bytes_per_thread)("level", x.level)(
        "fits_l1", x.fits_l1)("fits_l2", x.fits_l2)("fits_l3", x.fits_l3)("dram_pass_s",
                                                                          x.dram_pass_s);
  });
  r.object("vectorization", [&](Reader& s) {
    VectorizationReport& x = p.vectorization;
    s("available", x.available)("unavailable", x.unavailable)("hot_loops", x.hot_loops)(
        "vectorized", x.vectorized)("explicit_simd", x.explicit_simd)("missed", x.missed)(
        "outer_missed", x.outer_missed)("widest_bytes", x.widest_bytes)("vectorized_lines",
                                                                        x.vectorized_lines);
    if (s.status().ok()) read_missed(s, "missed_loops", x.missed_loops);
    if (s.status().ok()) read_missed(s, "narrow_loops", x.narrow_loops);
  });
  r.object("instructions", [&](Reader& s) {
    InstructionMix& x = p.instructions;
    s("available", x.available)("unavailable", x.unavailable)("symbols", x.symbols)(
        "inlined_into_entry", x.inlined_into_entry)("innermost_loops", x.innermost_loops);
    s.object("all", [&](Reader& c) { read_counts(c, x.all); });
    s.object("loops", [&](Reader& c) { read_counts(c, x.loops); });
  });
  r.object("thread_use", [&](Reader& s) {
    ThreadUse& x = p.thread_use;
    s("known", x.known)("requested", x.requested)("cpus_busy", x.cpus_busy)(
        "faults_per_call", x.faults_per_call)("major_faults_per_call", x.major_faults_per_call)(
        "context_switches_per_call", x.context_switches_per_call);
  });
  read_stage_times(r, p.stage_times);
  r.object("tags", [&](Reader& s) {
    ProfileTags& x = p.tags;
    s("memory_bound", x.memory_bound)("compute_bound", x.compute_bound)(
        "not_vectorized", x.not_vectorized)("scalar_fma_heavy", x.scalar_fma_heavy)(
        "scalar_in_loops", x.scalar_in_loops)("serial_when_parallel_requested",
                                              x.serial_when_parallel_requested)(
        "faults_in_hot_path", x.faults_in_hot_path)("fits_l1", x.fits_l1)("fits_l2", x.fits_l2)(
        "fits_l3", x.fits_l3);
  });
  r("findings", p.findings);
  if (!r.status().ok()) return r.status();
  return p;
}

}  // namespace kf::agents
