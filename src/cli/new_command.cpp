#include "cli/new_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_output.h"
#include "support/fs.h"
#include "support/json_text.h"
#include "task/cpp_lexer.h"
#include "task/reference_convert.h"
#include "task/signature_parse.h"
#include "task/task_skeleton.h"

namespace kf {
namespace {

// The schema of `kforge new --json`; a change of meaning bumps it.
constexpr const char* kNewSchema = "kforge-new/1";

struct NewArgs {
  std::string dir, from, signature, function, dtype, name;
  bool force = false, json = false;
};

// What `kforge new` makes from its input, before anything is written.
struct Skeleton {
  ParsedSignature sig;
  DType dtype = DType::f32;
  std::string origin, reference;
  std::vector<std::string> changes;
};

// The task's dtype: a plain function's floating tensors fix it; a template takes --dtype (f32 by
// default).
Expected<DType> task_dtype(const ParsedSignature& sig, const std::string& wanted) {
  std::optional<DType> want;
  if (!wanted.empty()) {
    want = parse_dtype(wanted);
    if (!want || !is_floating(*want))
      return Status::error("--dtype must be f32, f64 or bf16 (got '" + wanted + "')");
  }
  if (sig.is_template() || !sig.dtype) return want.value_or(DType::f32);
  if (want && *want != *sig.dtype)
    return Status::error(fmt::format(
        "'{}' has {} tensors: --dtype {} needs a reference that is a template over the element "
        "type (template <typename T> void {}(const T* ...))",
        sig.function, dtype_cpp(*sig.dtype), dtype_name(*want), sig.function));
  return *sig.dtype;
}

Expected<Skeleton> from_file(const NewArgs& a) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(a.from, ec);
  if (ec) return Status::error(a.from + ": cannot read (" + ec.message() + ")");
  if (size > kMaxCppSourceBytes)
    return Status::error(fmt::format("{}: over {} bytes", a.from, kMaxCppSourceBytes));
  auto text = read_file(a.from);
  if (!text) return text.error();
  auto site = find_kernel(*text, a.function);
  if (!site) return Status::error(a.from + ": " + site.error().message());
  Skeleton s;
  s.sig = site->signature;
  auto dtype = task_dtype(s.sig, a.dtype);
  if (!dtype) return dtype.error();
  s.dtype = *dtype;
  const std::string file = std::filesystem::path(a.from).filename().string();
  s.origin = fmt::format("{} (function {})", file, s.sig.function);
  ReferenceDraft d = convert_reference(*text, *site, s.dtype, file);
  s.reference = std::move(d.text);
  s.changes = std::move(d.changes);
  return s;
}

Expected<Skeleton> from_signature(const NewArgs& a) {
  auto sig = parse_signature(a.signature);
  if (!sig) return Status::error("--signature: " + sig.error().message());
  Status ok = check_kernel_signature(*sig);
  if (!ok.ok()) return Status::error("--signature: " + ok.message());
  if (!a.function.empty() && a.function != sig->function)
    return Status::error("--function " + a.function + " does not name the signature's function '" +
                         sig->function + "'");
  Skeleton s;
  s.sig = *sig;
  auto dtype = task_dtype(s.sig, a.dtype);
  if (!dtype) return dtype.error();
  s.dtype = *dtype;
  s.origin = fmt::format("a signature (function {})", s.sig.function);
  s.reference = reference_from_signature(s.sig, a.signature);
  return s;
}

// The task's name: --name, else the folder's name, else the function's.
std::string task_name(const NewArgs& a, const ParsedSignature& sig) {
  if (!a.name.empty()) return a.name;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(a.dir, ec).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  const std::string n = p.filename().string();
  return n.empty() || n == "." || n == ".." ? sig.function : n;
}

std::vector<std::string> names_of(const ParsedSignature& sig, ParamRole r) {
  std::vector<std::string> out;
  for (const SignatureParam& p : sig.params)
    if (p.role == r) out.push_back(p.name);
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void print_text(const NewArgs& a, const Skeleton& s, const std::vector<MissingField>& missing) {
  const std::filesystem::path dir(a.dir);
  fmt::print("wrote {} and {}\n", terminal_text((dir / "task.toml").string()),
             terminal_text((dir / "reference.cpp").string()));
  fmt::print("  function {} ({}): inputs {}; outputs {}; dims {}; scalars {}\n", s.sig.function,
             dtype_name(s.dtype), join(names_of(s.sig, ParamRole::input)),
             join(names_of(s.sig, ParamRole::output)), join(names_of(s.sig, ParamRole::dim)),
             s.sig.count(ParamRole::scalar) ? join(names_of(s.sig, ParamRole::scalar)) : "none");
  if (!s.changes.empty()) {
    fmt::print("reference.cpp, from {}:\n", terminal_text(s.origin));
    for (const std::string& c : s.changes) fmt::print("  {}\n", c);
  }
  fmt::print("still to fill in ({}):\n", missing.size());
  for (const MissingField& m : missing) fmt::print("  {}\n", terminal_text(m.text()));
  fmt::print("then run: kforge check {}\n", terminal_text(a.dir));
}

nlohmann::json to_json(const NewArgs& a, const Skeleton& s,
                       const std::vector<MissingField>& missing) {
  nlohmann::json m = nlohmann::json::array();
  for (const MissingField& f : missing)
    m.push_back({{"file", f.file}, {"line", f.line}, {"what", f.what}});
  return {{"schema", kNewSchema},
          {"dir", a.dir},
          {"files", {"task.toml", "reference.cpp"}},
          {"function", s.sig.function},
          {"dtype", dtype_name(s.dtype)},
          {"template", s.sig.is_template()},
          {"inputs", names_of(s.sig, ParamRole::input)},
          {"outputs", names_of(s.sig, ParamRole::output)},
          {"dims", names_of(s.sig, ParamRole::dim)},
          {"scalars", names_of(s.sig, ParamRole::scalar)},
          {"changes", s.changes},
          {"missing", m}};
}

int run_new(const NewArgs& a) {
  if (a.from.empty() == a.signature.empty()) {
    print_error("give exactly one of --from FILE.cpp and --signature \"void f(...)\"");
    return 2;
  }
  const std::filesystem::path dir(a.dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) {
      print_error(a.dir + " exists and is not a folder");
      return 1;
    }
    if (!std::filesystem::is_empty(dir, ec) && !a.force) {
      print_error(a.dir +
                  " exists and is not empty: kforge new writes a new task folder (--force "
                  "overwrites its task.toml and reference.cpp)");
      return 1;
    }
  }
  auto s = a.from.empty() ? from_signature(a) : from_file(a);
  if (!s) {
    print_error(s.error().message());
    return 1;
  }
  const std::string toml =
      skeleton_toml(s->sig, {.name = task_name(a, s->sig), .dtype = s->dtype, .origin = s->origin});
  const std::string& reference = s->reference;
  for (auto [file, text] : {std::pair{"reference.cpp", &reference}, std::pair{"task.toml", &toml}})
    if (Status w = write_file_atomic(dir / file, *text); !w.ok()) {
      print_error(w.message());
      return 1;
    }
  const std::vector<MissingField> missing = missing_fields(toml, s->reference);
  if (a.json) {
    fmt::print("{}\n", dump_json(to_json(a, *s, missing), 2));
  } else {
    print_text(a, *s, missing);
  }
  return 0;
}

}  // namespace

void add_new_command(CLI::App& app) {
  auto args = std::make_shared<NewArgs>();
  CLI::App* cmd = app.add_subcommand(
      "new",
      "Write a task skeleton (task.toml and reference.cpp) from a kernel's C++ source or "
      "signature; `kforge check` then lists what is still to fill in");
  cmd->add_option("dir", args->dir, "The task folder to write (new, or empty)")->required();
  cmd->add_option("--from", args->from,
                  "A C++ file defining the kernel: a void function over pointers, plain (float) or "
                  "a template over the element type");
  cmd->add_option("--signature", args->signature,
                  "The kernel's signature, when there is no file: \"void f(const float* x, "
                  "float* y, int64_t n)\"");
  cmd->add_option("--function", args->function,
                  "The kernel's name, when the file defines several candidates");
  cmd->add_option("--dtype", args->dtype,
                  "The task's dtype for a template kernel: f32 (default), f64 or bf16");
  cmd->add_option("--name", args->name, "The task's name (default: the folder's name)");
  cmd->add_flag("--force", args->force,
                "Overwrite task.toml and reference.cpp in a folder that is not empty");
  cmd->add_flag("--json", args->json,
                fmt::format("Print one JSON document (schema \"{}\") instead of text", kNewSchema));
  cmd->callback([args] {
    const int rc = run_new(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace kf
