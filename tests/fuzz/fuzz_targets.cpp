#include "fuzz_targets.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "codegen/codegen_cpp.h"
#include "lower/lower.h"
#include "schedule/trace.h"
#include "support/fs.h"
#include "support/hash.h"
#include "task/inputs.h"
#include "te/compile.h"

namespace kf::fuzz {
namespace {

namespace fs = std::filesystem;

// Above these sizes the target skips work that is linear in the data (input generation): the
// fuzzer looks for crashes and hangs in the parsers, not for slow but bounded generation.
constexpr size_t kMaxGeneratedElements = size_t{1} << 16;
constexpr int64_t kMaxPartitionTotal = int64_t{1} << 20;
constexpr size_t kMaxInputBytes = size_t{1} << 20;

const char* const kTaskHeader = "# task: ";

std::vector<fs::path> task_dirs(const fs::path& source_dir) {
  std::vector<fs::path> dirs;
  for (const char* root : {"bench/jaxbench", "examples/tasks", "tests/golden/tasks"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(source_dir / root, ec))
      if (fs::exists(e.path() / "task.toml")) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The task named by the input's first line, and the text after it.
const SeedTask* task_of(const std::string& text, const Context& ctx, std::string_view* body) {
  *body = text;
  std::string name = ctx.first;
  if (text.rfind(kTaskHeader, 0) == 0) {
    const size_t eol = text.find('\n');
    name = text.substr(8, eol == std::string::npos ? std::string::npos : eol - 8);
    *body = eol == std::string::npos ? std::string_view() : std::string_view(text).substr(eol + 1);
  }
  auto it = ctx.tasks.find(name);
  if (it == ctx.tasks.end()) it = ctx.tasks.find(ctx.first);
  return it == ctx.tasks.end() ? nullptr : &it->second;
}

void lower_and_generate(const Task& task, const te::Program& program,
                        const sched::Schedule& schedule) {
  auto f = lower(task, program, schedule, {});
  if (f) (void)codegen_cpp(*f, CodegenTarget::avx512);
}

bool run_formula(const std::string& text) {
  auto f = Formula::parse(text);
  if (!f) return false;
  const std::set<std::string> names = f->names();
  for (double v : {0.0, 1.0, 7.0, -3.0, 1e9, 9007199254740993.0, 1e300}) {
    Bindings env;
    for (const auto& n : names) env[n] = v;
    (void)f->eval(env);
    (void)f->eval_int(env);
  }
  return true;
}

void generate_inputs(const Task& task, const ShapeInstance& inst) {
  size_t total = 0;
  for (size_t e : inst.elements) total += std::min(e, kMaxGeneratedElements + 1);
  if (total > kMaxGeneratedElements) return;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const Distribution& d = task.inputs[i].dist;
    if (d.bound) {
      auto b = d.bound->eval_int(inst.env);
      if (b && (*b > kMaxPartitionTotal || *b < -kMaxPartitionTotal)) return;
    }
  }
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    std::vector<char> buf(inst.elements[i] * dtype_size(task.inputs[i].dtype) + 8);
    (void)generate_input(task, inst, i, 7, buf.data());
  }
}

bool run_task(const std::string& text) {
  auto t = parse_task(text, "fuzz/task.toml");
  if (!t) return false;
  (void)t->content_hash();
  std::vector<ShapePoint> points = t->tests;
  points.push_back(t->bench);
  for (const ShapePoint& p : points) {
    auto inst = t->instantiate(p);
    if (inst) generate_inputs(*t, *inst);
  }
  if (t->te_spec.empty()) return true;
  auto program = te::compile_spec(*t);
  if (program) lower_and_generate(*t, *program, {});
  return true;
}

// The oracle at the first test shape, on inputs 0.5 (floating) or 1 (integer).
void interpret_at_first_test(const Task& task, const te::Program& program) {
  auto inst = task.instantiate(task.tests.front());
  if (!inst) return;
  std::vector<std::vector<double>> in(task.inputs.size()), out(task.outputs.size());
  std::vector<const double*> in_ptr;
  std::vector<double*> out_ptr;
  for (size_t i = 0; i < task.tensor_count(); ++i)
    if (inst->elements[i] > kMaxGeneratedElements) return;
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].assign(inst->elements[i], is_floating(task.inputs[i].dtype) ? 0.5 : 1.0);
    in_ptr.push_back(in[i].data());
  }
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].assign(inst->elements[task.inputs.size() + o], 0.0);
    out_ptr.push_back(out[o].data());
  }
  (void)te::interpret(program, task, *inst, in_ptr, out_ptr);
}

bool run_te(const std::string& text, const Context& ctx) {
  std::string_view body;
  const SeedTask* st = task_of(text, ctx, &body);
  const std::string file = "fuzz/task.toml";
  auto ast = te::parse(body, file, 1);
  if (!ast) return false;
  (void)te::to_string(*ast);
  if (!st) return true;
  auto program = te::check(*ast, st->task, file);
  if (!program) return true;
  (void)te::to_string(*program);
  lower_and_generate(st->task, *program, {});
  if (ctx.interpret) interpret_at_first_test(st->task, *program);
  return true;
}

bool run_schedule(const std::string& text, const Context& ctx) {
  std::string_view body;
  const SeedTask* st = task_of(text, ctx, &body);
  auto s = sched::parse_schedule(body, "fuzz.sched");
  if (!s) return false;
  (void)s->hash();
  if (st && st->has_program) lower_and_generate(st->task, st->program, *s);
  return true;
}

// Tokens that parsers of each language trip on: nesting, number forms at the edges of double
// and int64, non-UTF-8 bytes, the language's keywords.
const std::vector<std::string>& dictionary(Target t) {
  static const std::vector<std::string> common = {"(",
                                                  ")",
                                                  "-",
                                                  "*",
                                                  "/",
                                                  "%",
                                                  ".",
                                                  "..",
                                                  "1e999",
                                                  "1e-999",
                                                  "1e308",
                                                  "0",
                                                  "-1",
                                                  "9223372036854775807",
                                                  "18446744073709551616",
                                                  "99999999999999999999",
                                                  "nan",
                                                  "inf",
                                                  "\xff",
                                                  "\xc3",
                                                  "\xed\xa0\x80",
                                                  "\n",
                                                  " ",
                                                  "\t",
                                                  "#",
                                                  ",",
                                                  "0x10",
                                                  "4294967296"};
  static const std::map<Target, std::vector<std::string>> extra = {
      {Target::formula, {"min(", "max(", "ceildiv(", "M", "N", "K", "2*", "+", "e", "E5"}},
      {Target::te, {"[",       "]",    "sum(k: ",    "max(d: ", "exp(",    "select(", " else ",
                    " in 0..", "!",    "&&",         "||",      "==",      ":",       "=",
                    "f32(",    "i64(", "logsumexp(", "argmax(", "A[i, k]", "+",       "1.5e"}},
      {Target::task,
       {"[", "]", "\"", "\"\"\"", "=", "{", "}", "'", "\"M * N * K\"", "[shapes]", "1099511627776",
        "dist = { kind = \"partition\", total = \"M\" }", "dtype = \"i32\"", "true", "1e10",
        "\"(((((M)))))\"", "[[signature.inputs]]", "-inf", "+nan"}},
      {Target::schedule,
       {"split ", "reorder ", "compute_inline ", "cache_read ", "compute_at ", "vectorize ",
        "unroll ", "fuse ", "tile ", "rfactor ", "parallel ", "C", "C.i", ".", "999999999999",
        "-999999999999", "hoist ", "phase_split ", "online_softmax "}}};
  static std::map<Target, std::vector<std::string>> all;
  auto& d = all[t];
  if (d.empty()) {
    d = common;
    for (const auto& s : extra.at(t)) d.push_back(s);
  }
  return d;
}

// A count from 1 to `max`, log-uniform, so large repeats (deep nesting) are tried as often as
// small ones.
size_t repeat_count(Rng& rng, size_t max) {
  const size_t bits = 1 + rng.below(64 - static_cast<size_t>(__builtin_clzll(max)));
  return 1 + rng.below(std::min(max, size_t{1} << bits));
}

// Appends a chain of splits that each split the inner loop of the one before, starting from the
// inner loop of the input's last split (or C.i): `split C.x y0 z0 2`, `split C.z0 y1 z1 2`, ...
void append_split_chain(std::string& s, Rng& rng) {
  std::string stage = "C", loop = "i";
  const size_t at = s.rfind("split ");
  if (at != std::string::npos) {
    std::istringstream words(s.substr(at, s.find('\n', at) - at));
    std::string w, ref, outer, inner;
    words >> w >> ref >> outer >> inner;
    const size_t dot = ref.find('.');
    if (dot != std::string::npos && !inner.empty()) {
      stage = ref.substr(0, dot);
      loop = inner;
    }
  }
  const size_t n = repeat_count(rng, 3000);
  for (size_t k = 0; k < n; ++k) {
    const std::string next = "z" + std::to_string(k);
    s += "\nsplit " + stage + "." + loop + " y" + std::to_string(k) + " " + next + " 2";
    loop = next;
  }
  s += "\n";
}

void replace_number(std::string& s, Rng& rng, const std::vector<std::string>& dict) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(s[i])) &&
        (i == 0 || !std::isdigit(static_cast<unsigned char>(s[i - 1]))))
      starts.push_back(i);
  if (starts.empty()) return;
  const size_t b = starts[rng.below(starts.size())];
  size_t e = b;
  while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
  static const std::array<const char*, 9> numbers = {"1e999",
                                                     "99999999999999999999",
                                                     "9223372036854775807",
                                                     "4294967296",
                                                     "0",
                                                     "1099511627776",
                                                     "65536",
                                                     "3037000500",
                                                     "1e-999"};
  std::string repl = numbers[rng.below(numbers.size())];
  if (rng.below(4) == 0) repl = dict[rng.below(dict.size())];
  s.replace(b, e - b, repl);
}

void mutate_once(std::string& s, Target t, const std::vector<Input>& corpus, Rng& rng) {
  const auto& dict = dictionary(t);
  const size_t pos = rng.below(s.size() + 1);
  switch (rng.below(9)) {
    case 0:
      if (!s.empty()) s[rng.below(s.size())] = static_cast<char>(rng.below(256));
      break;
    case 1:
      s.insert(pos, 1, static_cast<char>(rng.below(256)));
      break;
    case 2:
      s.erase(pos, 1 + rng.below(16));
      break;
    case 3:
      s.insert(pos, dict[rng.below(dict.size())]);
      break;
    case 4: {  // one token repeated: deep nesting, long chains
      const std::string& tok = dict[rng.below(dict.size())];
      const size_t n = repeat_count(rng, 20000);
      std::string rep;
      for (size_t k = 0; k < n; ++k) rep += tok;
      s.insert(pos, rep);
      break;
    }
    case 5: {  // a chunk of the input repeated
      if (s.empty()) break;
      const size_t b = rng.below(s.size()), len = 1 + rng.below(std::min<size_t>(64, s.size() - b));
      const std::string chunk = s.substr(b, len);
      const size_t n = repeat_count(rng, 5000);
      std::string rep;
      for (size_t k = 0; k < n; ++k) rep += chunk;
      s.insert(b, rep);
      break;
    }
    case 6:
      replace_number(s, rng, dict);
      break;
    case 7: {  // splice from another input of the same target
      const Input& other = corpus[rng.below(corpus.size())];
      if (other.text.empty()) break;
      const size_t b = rng.below(other.text.size());
      s.insert(pos, other.text.substr(b, 1 + rng.below(256)));
      break;
    }
    case 8:
      if (t == Target::schedule) {
        append_split_chain(s, rng);
      } else {  // wrap a range in k parentheses
        const size_t end = pos + rng.below(s.size() - pos + 1), n = repeat_count(rng, 20000);
        s.insert(end, std::string(n, ')'));
        s.insert(pos, std::string(n, '('));
      }
      break;
  }
}

}  // namespace

std::string target_name(Target t) {
  switch (t) {
    case Target::task:
      return "task";
    case Target::te:
      return "te";
    case Target::formula:
      return "formula";
    case Target::schedule:
      return "schedule";
  }
  return "?";
}

bool parse_target(const std::string& name, Target* out) {
  for (Target t : kTargets)
    if (target_name(t) == name) {
      *out = t;
      return true;
    }
  return false;
}

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Context load_context(const fs::path& source_dir) {
  Context ctx;
  for (const fs::path& dir : task_dirs(source_dir)) {
    auto t = load_task(dir);
    if (!t) continue;
    SeedTask st{*t, {}, false};
    if (!t->te_spec.empty()) {
      auto p = te::compile_spec(*t);
      if (p) {
        st.program = *p;
        st.has_program = true;
      }
    }
    const std::string name = dir.filename().string();
    if (ctx.first.empty() && st.has_program) ctx.first = name;
    ctx.tasks.emplace(name, std::move(st));
  }
  return ctx;
}

std::vector<Input> load_seeds(Target t, const fs::path& source_dir, const Context& ctx) {
  std::vector<Input> out;
  auto add = [&](std::string text) { out.push_back({t, std::move(text)}); };
  switch (t) {
    case Target::task:
      for (const fs::path& dir : task_dirs(source_dir))
        if (auto text = read_file(dir / "task.toml")) add(*text);
      break;
    case Target::te:
      for (const auto& [name, st] : ctx.tasks)
        if (!st.task.te_spec.empty()) add(kTaskHeader + name + "\n" + st.task.te_spec);
      break;
    case Target::formula:
      for (const auto& [name, st] : ctx.tasks) {
        const Task& task = st.task;
        add(task.flops.text());
        if (task.bytes) add(task.bytes->text());
        for (const auto& [n, f] : task.derived) add(f.text());
        for (size_t i = 0; i < task.tensor_count(); ++i) {
          for (const Formula& f : task.tensor(i).shape) add(f.text());
          if (i < task.inputs.size() && task.inputs[i].dist.bound)
            add(task.inputs[i].dist.bound->text());
        }
      }
      std::sort(out.begin(), out.end(),
                [](const Input& a, const Input& b) { return a.text < b.text; });
      out.erase(std::unique(out.begin(), out.end(),
                            [](const Input& a, const Input& b) { return a.text == b.text; }),
                out.end());
      break;
    case Target::schedule: {
      std::vector<fs::path> files;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(source_dir / "examples/schedules", ec))
        if (e.path().extension() == ".sched") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files)
        if (auto text = read_file(f)) add(kTaskHeader + f.stem().string() + "\n" + *text);
      break;
    }
  }
  return out;
}

Input mutate(const Input& in, const std::vector<Input>& corpus, Rng& rng) {
  Input out = in;
  const size_t n = 1 + rng.below(4);
  for (size_t k = 0; k < n; ++k) mutate_once(out.text, in.target, corpus, rng);
  if (out.text.size() > kMaxInputBytes) out.text.resize(kMaxInputBytes);
  return out;
}

bool run_input(const Input& in, const Context& ctx) {
  switch (in.target) {
    case Target::task:
      return run_task(in.text);
    case Target::te:
      return run_te(in.text, ctx);
    case Target::formula:
      return run_formula(in.text);
    case Target::schedule:
      return run_schedule(in.text, ctx);
  }
  return false;
}

std::string regression_name(const Input& in) {
  return content_hash(in.text).substr(0, 16);
}

}  // namespace kf::fuzz
