#include "agents/llm/prompt.h"

#include <fmt/format.h>

#include <cctype>
#include <system_error>

#include "harness/shim.h"
#include "support/fs.h"
#include "support/text_scan.h"

#ifndef KFORGE_PROMPTS_DIR
#error "KFORGE_PROMPTS_DIR must name the built-in prompts folder"
#endif

namespace kf::agents::llm_brain {

namespace fs = std::filesystem;

fs::path builtin_prompts_dir() {
  return KFORGE_PROMPTS_DIR;
}

namespace {

Expected<std::string> read_template(const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) return Status::error(fmt::format("{}: {}", excerpt(file.string()), ec.message()));
  if (size > kMaxTemplateBytes)
    return Status::error(
        fmt::format("{}: over {} bytes", excerpt(file.string()), kMaxTemplateBytes));
  return read_file(file);
}

std::string bounded(std::string s) {
  if (s.size() > kMaxVarBytes) {
    s.resize(kMaxVarBytes);
    s += "\n[... cut at " + std::to_string(kMaxVarBytes) + " bytes]";
  }
  return s;
}

}  // namespace

Expected<std::string> load_prompt(const fs::path& override_dir, const std::string& name) {
  std::error_code ec;
  if (!override_dir.empty() && fs::is_regular_file(override_dir / (name + ".md"), ec))
    return read_template(override_dir / (name + ".md"));
  return read_template(builtin_prompts_dir() / (name + ".md"));
}

std::string render_template(std::string_view tmpl, const PromptVars& vars) {
  std::string out;
  out.reserve(tmpl.size());
  size_t i = 0;
  while (i < tmpl.size()) {
    const size_t open = tmpl.find("{{", i);
    if (open == std::string_view::npos) break;
    out.append(tmpl.substr(i, open - i));
    size_t j = open + 2;
    while (j < tmpl.size() && j - open - 2 < 40 &&
           (std::islower(static_cast<unsigned char>(tmpl[j])) || tmpl[j] == '_'))
      ++j;
    const std::string name(tmpl.substr(open + 2, j - open - 2));
    auto it = vars.find(name);
    if (!name.empty() && tmpl.substr(j, 2) == "}}" && it != vars.end()) {
      out += it->second.size() > kMaxVarBytes ? it->second.substr(0, kMaxVarBytes) : it->second;
      i = j + 2;
      continue;
    }
    out.push_back('{');  // not a name: the text stays, and a name may start one later
    i = open + 1;
  }
  if (i < tmpl.size()) out.append(tmpl.substr(i));
  return out;
}

Rendered render_pruned(std::string_view tmpl, PromptVars vars,
                       const std::vector<std::string>& history, size_t max_chars) {
  Rendered r;
  // Entries from the newest back, as many as fit; the note says how many were left out.
  const auto with = [&](size_t keep) {
    std::string h;
    for (size_t k = history.size() - keep; k < history.size(); ++k) h += history[k] + "\n";
    vars["history"] = h.empty() ? "(no attempts yet)\n" : h;
    const size_t dropped = history.size() - keep;
    vars["history_note"] =
        dropped == 0
            ? ""
            : fmt::format("({} older attempt(s) left out to fit the model's context.)\n", dropped);
    return render_template(tmpl, vars);
  };
  size_t keep = history.size();
  std::string text = with(keep);
  if (text.size() > max_chars) {
    // The prompt without history, plus the newest entries that fit in what is left (the note
    // is already counted: it is in the text rendered with none kept).
    const size_t fixed = with(0).size();
    size_t room = max_chars > fixed ? max_chars - fixed : 0;
    keep = 0;
    while (keep < history.size() && history[history.size() - 1 - keep].size() + 1 <= room) {
      room -= history[history.size() - 1 - keep].size() + 1;
      ++keep;
    }
    text = with(keep);
  }
  r.text = std::move(text);
  r.history_kept = static_cast<int>(keep);
  r.history_dropped = static_cast<int>(history.size() - keep);
  return r;
}

PromptVars task_vars(const CompiledTask& ct, const MoveContext& ctx) {
  const Task& t = ct.task;
  PromptVars v;
  v["task_name"] = t.name;
  v["task_description"] = bounded(t.description);
  v["signature"] = candidate_signature(t);
  v["function"] = t.function;
  v["te_spec"] = t.te_spec.empty() ? "(this task has no TE spec: the reference below defines it)"
                                   : bounded(t.te_spec);
  v["reference"] = bounded(t.reference_source);
  v["threads"] = std::to_string(ctx.threads);
  std::string m = "(not probed)";
  if (const MachineInfo* mi = ctx.machine) {
    std::string isa;
    for (const std::string& f : mi->isa)
      if (f.starts_with("avx") || f == "fma" || f.starts_with("amx") || f == "f16c")
        isa += (isa.empty() ? "" : " ") + f;
    m = fmt::format(
        "- CPU: {}\n- ISA: {}\n- cores: {}; kernels run on {} thread(s)\n- caches: L1d {} KiB, "
        "L2 {} KiB, L3 {} KiB\n- peak fp32 FMA: {:.0f} GFLOP/s on 1 thread, {:.0f} on all cores\n"
        "- DRAM bandwidth: {:.1f} GB/s on 1 thread, {:.1f} on all cores",
        mi->cpu_model, isa.empty() ? "(none beyond SSE)" : isa, mi->cores, ctx.threads,
        mi->l1d_bytes / 1024, mi->l2_bytes / 1024, mi->l3_bytes / 1024, mi->peak_gflops_1t,
        mi->peak_gflops_all, mi->dram_gbps_1t, mi->dram_gbps_all);
  }
  v["machine"] = m;
  std::string s;
  for (const Strategy& st : strategy_catalog()) {
    std::string knobs;
    for (const Knob& k : st.knobs) knobs += fmt::format(" {}={}", k.name, k.initial);
    s += fmt::format("- `{}`{}: {}. {}\n", st.id, knobs, st.name, st.description);
  }
  v["strategies"] = bounded(s);
  return v;
}

void add_best(PromptVars& v, const CandidateMsg* best) {
  v["best_label"] = best ? best->describe() : "none yet";
  v["best_source"] = best ? bounded(best->source) : "(none yet)";
}

std::string describe_evidence(const Evidence& e) {
  std::string out;
  if (!e.bound.empty())
    out += fmt::format(
        "- {}-bound at {:.0f}% of the attainable roofline ({:.1f} GFLOP/s, {:.1f} "
        "GB/s)\n",
        e.bound, 100 * e.fraction, e.gflops, e.gbps);
  if (e.not_vectorized) out += "- the compiler left hot loops unvectorized\n";
  if (e.faults_in_hot_path) out += "- page faults in the timed calls\n";
  for (const std::string& f : e.findings) out += "- " + excerpt(f, 400) + "\n";
  return out.empty() ? "(no measurements yet)\n" : out;
}

}  // namespace kf::agents::llm_brain
