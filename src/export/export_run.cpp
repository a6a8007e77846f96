#include "export/export_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

#include "export/export_files.h"
#include "harness/shim.h"
#include "harness/target.h"
#include "harness/toolchain.h"
#include "lower/lower.h"
#include "support/fs.h"
#include "support/json_text.h"
#include "task/task_identity.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A field of stored JSON, or nullptr when a step of the path is missing or not an object: a
// summary from another kforge version must not stop an export.
const json* field(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* key : path) {
    if (!p->is_object()) return nullptr;
    auto it = p->find(key);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p;
}
double number_at(const json& j, std::initializer_list<const char*> path) {
  const json* p = field(j, path);
  return p && p->is_number() ? p->get<double>() : 0.0;
}
std::string text_at(const json& j, std::initializer_list<const char*> path) {
  const json* p = field(j, path);
  return p && p->is_string() ? p->get<std::string>() : "";
}

struct TargetChoice {
  bool regenerate = false;  // a named target: generated kernels are lowered again for it
  std::string name;         // "" for the run's own build
  CodegenTarget codegen = CodegenTarget::avx512;
  std::vector<std::string> arch_flags;
  std::string words;  // ExportPlan::target
};

Expected<TargetChoice> choose_target(const std::string& name, const RunRecord& run) {
  if (name.empty()) {
    // The judge compiles with -march=native plus the run's target flags (harness/target.h);
    // a machine with every ISA names any target without refusing it.
    MachineInfo every;
    every.isa = {"avx512f", "avx2", "fma"};
    auto t = target_named(text_at(run.options, {"target"}), every);
    TargetChoice c{.arch_flags = {"-march=native"}};
    if (t)
      c.arch_flags.insert(c.arch_flags.end(), t->compile_flags.begin(), t->compile_flags.end());
    c.words = "the build the run judged (-march=native: the CPU family of the building machine)";
    return c;
  }
  if (name == "native") {
    const Target t = target_for(describe_machine());
    return TargetChoice{true,
                        name,
                        t.codegen,
                        {"-march=native"},
                        fmt::format("native (this machine's widest, {}: -march=native)", t.name)};
  }
  if (name == "avx512")
    return TargetChoice{true,
                        name,
                        CodegenTarget::avx512,
                        {"-march=x86-64-v4"},
                        "avx512 (x86-64-v4: AVX-512 F/BW/CD/DQ/VL, AVX2, FMA)"};
  if (name == "avx2")
    return TargetChoice{true,
                        name,
                        CodegenTarget::avx2,
                        {"-march=x86-64-v3"},
                        "avx2 (x86-64-v3: AVX2 and FMA, no AVX-512)"};
  if (name == "scalar")
    return TargetChoice{
        true, name, CodegenTarget::scalar, {}, "scalar (the x86-64 baseline: no -march)"};
  return Status::error(fmt::format("unknown target '{}': known targets are {}", terminal_text(name),
                                   fmt::join(export_target_names(), ", ")));
}

bool cpp_keyword(std::string_view w) {
  static constexpr std::array<std::string_view, 97> kWords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "std",
      "int64_t",       "final",       "override",
      "main"};
  return std::find(kWords.begin(), kWords.end(), w) != kWords.end();
}

// "a" or "a::b": identifiers that are not keywords, "std" or names reserved to the compiler.
Status check_namespace(const std::string& ns) {
  const Status bad = Status::error(fmt::format(
      "--namespace '{}' is not a C++ namespace name (identifiers joined by ::, no keywords)",
      terminal_text(ns)));
  size_t start = 0;
  while (true) {
    const size_t end = std::min(ns.find("::", start), ns.size());
    const std::string_view part = std::string_view(ns).substr(start, end - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0])) != 0 ||
        cpp_keyword(part) || part.find("__") != std::string_view::npos ||
        (part[0] == '_' && part.size() > 1 && std::isupper(static_cast<unsigned char>(part[1]))))
      return bad;
    for (char c : part)
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return bad;
    if (end == ns.size()) return {};
    start = end + 2;
  }
}

std::string default_namespace(const std::string& task_name) {
  std::string ns = "kforge_";
  for (char c : task_name) ns += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return ns;
}

// One line per parameter of the task's function, for the header and the README.
std::vector<std::string> signature_lines(const Task& task) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < task.tensor_count(); ++i) {
    const TensorSpec& t = task.tensor(i);
    std::vector<std::string> dims;
    for (const Formula& f : t.shape) dims.push_back(f.text());
    lines.push_back(
        fmt::format("{}: {}[{}], {}", t.name, dtype_name(t.dtype), fmt::join(dims, ", "),
                    i < task.inputs.size() ? "input, read only" : "output, every element written"));
  }
  if (!task.dims.empty())
    lines.push_back(fmt::format("{}: sizes (int64_t)", fmt::join(task.dims, ", ")));
  for (const ScalarSpec& s : task.scalars)
    lines.push_back(fmt::format("{}: {} scalar (the task's default {})", s.name,
                                dtype_name(s.dtype), s.default_value));
  lines.emplace_back("Tensors are dense and row-major (the last dimension contiguous).");
  return lines;
}

std::string measured_line(const RunRecord& run, const Task& task, bool regenerated) {
  const json& s = run.summary;
  const double threads = std::max(1.0, number_at(s, {"threads"}));
  auto shape = task.instantiate(task.bench);
  const std::string where =
      fmt::format("{} thread(s), bench shape {}", threads, shape ? shape->text : std::string("?"));
  const std::string build = regenerated ? "; for the build the run judged, not this target" : "";
  if (text_at(s, {"final", "verdict"}) == "ok" && number_at(s, {"final", "median_s"}) > 0)
    return fmt::format(
        "measured by the run ({}): {:.4g} ms median, {:.2f}x the reference "
        "(the final side-by-side run){}",
        where, 1e3 * number_at(s, {"final", "median_s"}),
        number_at(s, {"final", "vs_reference", "median"}), build);
  if (number_at(s, {"best", "median_s"}) > 0)
    return fmt::format(
        "measured by the run ({}): {:.4g} ms median, {:.2f}x the first candidate "
        "({}){}",
        where, 1e3 * number_at(s, {"best", "median_s"}), number_at(s, {"best", "speedup_vs_naive"}),
        text_at(s, {"first_candidate"}), build);
  return "not measured to the end by the run (no summary yet)";
}

// The source to export and what the target did to it.
struct Chosen {
  std::string source, note;
  bool regenerated = false;
};

Expected<Chosen> choose_source(const Task& task, const CandidateRecord& c, const std::string& kind,
                               bool generated, const TargetChoice& t) {
  if (!t.regenerate) return Chosen{c.source, "the source as the run judged it", false};
  if (!generated)
    return Chosen{c.source,
                  fmt::format("{} source: the code as the run judged it; only the compile flags "
                              "follow --target {}",
                              kind, t.name),
                  false};
  auto schedule = sched::parse_schedule(c.schedule, task.function + ".sched");
  if (!schedule) return schedule.error();
  auto src = generate_kernel(task, *schedule, LowerOptions{.target = t.codegen});
  if (!src) return src.error().with_context("regenerating candidate " + c.key + " for " + t.name);
  return Chosen{*src, fmt::format("regenerated from the candidate's schedule for {}", t.name),
                true};
}

Status write_export(const fs::path& dir, const std::vector<ExportFile>& files, bool kernel_h,
                    std::vector<std::string>& written) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return Status::error(fmt::format("cannot create the output directory {}: {}", dir.string(),
                                     ec ? ec.message() : "a file is in the way"));
  for (const ExportFile& f : files) {
    KF_RETURN_IF_ERROR(write_file_atomic(dir / f.name, f.text));
    written.push_back(f.name);
  }
  if (kernel_h) {
    auto include = write_kernel_header(dir);
    if (!include) return include.error();
    written.emplace_back("include/kforge/kernel.h");
  }
  return {};
}

}  // namespace

std::vector<std::string> export_target_names() {
  return {"native", "avx512", "avx2", "scalar"};
}

Expected<ExportResult> export_run(Store& store, const ExportOptions& o) {
  const std::vector<std::string> known = export_target_names();
  if (!o.target.empty() && std::find(known.begin(), known.end(), o.target) == known.end())
    return choose_target(o.target, RunRecord{}).error();  // the unknown name, before anything
  if (!o.ns.empty()) KF_RETURN_IF_ERROR(check_namespace(o.ns));
  auto run = find_run(store, o.run);
  if (!run) return run.error();
  auto target = choose_target(o.target, *run);
  if (!target) return target.error();
  if (run->best_candidate.empty())
    return Status::error(fmt::format("run {} ({}) has no best kernel to export", run->id,
                                     terminal_text(run->state)));
  auto found = store.get_candidate(run->best_candidate);
  if (!found) return found.error();
  if (!found->has_value())
    return Status::error(fmt::format("run {}: its best candidate {} is not in the store", run->id,
                                     run->best_candidate));
  const CandidateRecord& c = **found;
  const fs::path task_dir = o.task_dir.empty() ? fs::path(run->task_dir) : o.task_dir;
  auto task = load_task(task_dir);
  if (!task) return task.error().with_context("the task of run " + run->id);

  ExportResult r{.run_id = run->id,
                 .task = task->name,
                 .function = task->function,
                 .candidate_key = c.key,
                 .kind = text_at(c.provenance, {"kind"})};
  // Written before kinds were stored, a generated kernel still opens with its header line.
  const bool generated =
      r.kind == "generated" || (r.kind.empty() && c.source.starts_with(kGeneratedHeader));
  if (r.kind.empty()) r.kind = generated ? "generated" : "written";
  const json* recipe = field(run->summary, {"best", "recipe"});
  r.recipe = recipe && recipe->is_string() && text_at(run->summary, {"best", "key"}) == c.key
                 ? recipe->get<std::string>()
                 : text_at(c.provenance, {"origin"});
  auto chosen = choose_source(*task, c, r.kind, generated, *target);
  if (!chosen) return chosen.error();
  r.target_note = chosen->note;
  auto source_flags = requested_flags(chosen->source);
  if (!source_flags) return source_flags.error().with_context("candidate " + c.key);

  if (const std::string stored = text_at(run->options, {"task_identity"}); !stored.empty()) {
    auto now = task_identity(*task);
    if (now && now->hash != stored)
      r.warnings.push_back(fmt::format(
          "the task folder {} changed since run {}: the signature is the folder's as it is now",
          task_dir.string(), run->id));
  }
  if (run->state != "finished")
    r.warnings.push_back(fmt::format("run {} is {}: its best kernel so far is exported", run->id,
                                     terminal_text(run->state)));

  ExportPlan plan{.function = task->function,
                  .c_linkage = o.c_linkage,
                  .ns = o.ns.empty() ? default_namespace(task->name) : o.ns,
                  .source = chosen->source,
                  .target = target->words,
                  .arch_flags = target->arch_flags,
                  .source_flags = *source_flags,
                  .signature = signature_lines(*task),
                  .use = scan_source_use(chosen->source)};
  const std::vector<std::string> types = shim_param_types(*task, ShimKind::candidate);
  std::vector<std::string> names;
  for (size_t i = 0; i < task->tensor_count(); ++i) names.push_back(task->tensor(i).name);
  names.insert(names.end(), task->dims.begin(), task->dims.end());
  for (const ScalarSpec& s : task->scalars) names.push_back(s.name);
  for (size_t i = 0; i < types.size() && i < names.size(); ++i)
    plan.params.push_back({types[i], names[i]});
  if (generated)
    plan.schedule = fmt::format("# {}: {}\n{}", task->name, comment_line(r.recipe), c.schedule);
  plan.provenance = {fmt::format("task {} ({}), run {} ({}, brain {}, {})", task->name,
                                 task_dir.string(), run->id, run->mode, run->brain, run->state),
                     fmt::format("candidate {}: {} ({}), {}", c.key, r.kind,
                                 text_at(c.provenance, {"origin"}), r.recipe),
                     fmt::format("target: {}; {}", target->words, chosen->note),
                     measured_line(*run, *task, chosen->regenerated)};

  std::vector<std::string> flags = {"-O3"};
  flags.insert(flags.end(), plan.arch_flags.begin(), plan.arch_flags.end());
  flags.insert(flags.end(), plan.source_flags.begin(), plan.source_flags.end());
  r.flags = fmt::format("{}", fmt::join(flags, " "));
  r.call = o.c_linkage ? plan.function : plan.ns + "::" + plan.function;
  KF_RETURN_IF_ERROR(
      write_export(o.out_dir, export_files(plan), needs_kernel_header(plan), r.files));
  return r;
}

}  // namespace kf
