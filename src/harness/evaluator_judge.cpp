#include "harness/evaluator_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "harness/te_oracle.h"
#include "harness/toolchain.h"
#include "support/hash.h"
#include "task/inputs.h"

namespace kf {

std::vector<BufferSpec> layout_for(const Task& task, const ShapeInstance& inst, ShimKind kind) {
  std::vector<BufferSpec> out;
  for (size_t t = 0; t < task.tensor_count(); ++t)
    out.push_back({task.tensor(t).name, inst.elements[t] * dtype_size(buffer_dtype(task, t, kind)),
                   t < task.inputs.size()});
  return out;
}

size_t set_bytes(const Task& task, const ShapeInstance& inst, ShimKind kind) {
  size_t n = 0;
  for (const auto& b : layout_for(task, inst, kind)) n += b.bytes;
  return n;
}

Expected<std::unique_ptr<Worker>> start_worker(const Task& task, const ShapeInstance& inst,
                                               const Solution& s, int sets, const EvalOptions& o) {
  WorkerSpec spec{.so = s.so,
                  .layout = layout_for(task, inst, s.kind),
                  .sets = sets,
                  .dims = inst.dims,
                  .scalars = inst.scalars,
                  .threads = o.threads,
                  .start_timeout_s = 60,
                  .memory_limit = o.memory_limit,
                  .cpu_limit_s = o.cpu_limit_s,
                  .preload = s.kind == ShimKind::candidate ? runtime_preload(o.compile.cxx)
                                                           : std::vector<std::string>{}};
  return s.backend->start_worker(spec);
}

Status fill_inputs(const Task& task, const ShapeInstance& inst, Worker& w, int set, uint64_t seed) {
  for (size_t i = 0; i < task.inputs.size(); ++i)
    KF_RETURN_IF_ERROR(generate_input(task, inst, i, seed, w.buffer(set, i)));
  return ok_status();
}

void copy_inputs(const Task& task, const ShapeInstance& inst, const Worker& src, int src_set,
                 Worker& dst, int dst_set, ShimKind dst_kind) {
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const DType from = task.inputs[i].dtype, to = buffer_dtype(task, i, dst_kind);
    if (from == to) {
      std::memcpy(dst.buffer(dst_set, i), src.buffer(src_set, i), src.bytes(i));
      continue;
    }
    for (size_t e = 0; e < inst.elements[i]; ++e)
      store_from_double(dst.buffer(dst_set, i), to, e,
                        load_as_double(src.buffer(src_set, i), from, e));
  }
}

void poison_outputs(const Task& task, const ShapeInstance& inst, Worker& w, int set,
                    ShimKind kind) {
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    poison(w.buffer(set, t), buffer_dtype(task, t, kind), inst.elements[t]);
}

std::string inputs_hash(const Task& task, const Worker& w) {
  Hasher h;
  for (int s = 0; s < w.sets(); ++s)
    for (size_t i = 0; i < task.inputs.size(); ++i)
      h.add(std::string_view(static_cast<const char*>(w.buffer(s, i)), w.bytes(i)));
  return h.hex();
}

namespace {

std::string outputs_snapshot(const Task& task, const Worker& w, int set) {
  std::string s;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    s.append(static_cast<const char*>(w.buffer(set, t)), w.bytes(t));
  return s;
}

}  // namespace

OracleOutputs worker_outputs(const Task& task, const Worker& oracle) {
  OracleOutputs out;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    out.push_back(static_cast<const double*>(oracle.buffer(0, t)));
  return out;
}

CompareResult compare_outputs(const Task& task, const ShapeInstance& inst, const Worker& w, int set,
                              const OracleOutputs& want) {
  CompareResult total;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t) {
    const TensorSpec& spec = task.tensor(t);
    const Tolerance tol = is_floating(spec.dtype) ? task.tolerance_for(spec.dtype) : Tolerance{};
    CompareResult r = compare_output(spec.name, w.buffer(set, t), spec.dtype,
                                     want[t - task.inputs.size()], inst.extents[t], tol);
    total.rel_l2 = std::max(total.rel_l2, r.rel_l2);
    total.max_abs_err = std::max(total.max_abs_err, r.max_abs_err);
    total.worst_ratio = std::max(total.worst_ratio, r.worst_ratio);
    if (total.worst.empty()) total.worst = r.worst;
    if (!r.passed && total.passed) {
      total.passed = false;
      total.detail = r.detail;
      total.worst = r.worst;
    }
  }
  return total;
}

Judge::Judge(const Task& task, const EvalOptions& o, RunResult& res, const te::Program* program)
    : task_(task), o_(o), res_(res), program_(program) {
  seed_ = o.seed ? o.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
}

void Judge::fail(Verdict v, const std::string& message, std::vector<std::string> diags) {
  if (failed_) return;
  failed_ = true;
  res_.verdict = v;
  res_.message = message;
  for (auto& d : diags) res_.diagnostics.push_back(std::move(d));
}

void Judge::record(const ShapeInstance& inst, uint64_t seed, const CompareResult& c, bool timed) {
  res_.checks.push_back({.shape = inst.label(),
                         .seed = seed,
                         .passed = c.passed,
                         .timed = timed,
                         .rel_l2 = c.rel_l2,
                         .max_abs_err = c.max_abs_err,
                         .worst_ratio = c.worst_ratio,
                         .worst = c.worst,
                         .detail = c.detail});
}

void Judge::check_side_effects(Worker& w, const std::string& input_hash, int set, double run_s,
                               const std::string& where) {
  if (failed_) return;
  if (inputs_hash(task_, w) != input_hash)
    return fail(Verdict::forbidden,
                fmt::format("{}: the candidate modified an input buffer", where),
                {"inputs are read-only: every input buffer is hashed before the run and "
                 "compared after it"});
  std::string which;
  if (!w.canaries_intact(&which))
    return fail(
        Verdict::forbidden,
        fmt::format("{}: the candidate wrote outside its outputs (next to '{}')", where, which));
  std::string before = outputs_snapshot(task_, w, set);
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.002 + 2 * run_s, 0.2)));
  if (outputs_snapshot(task_, w, set) != before)
    fail(Verdict::forbidden, fmt::format("{}: outputs changed after the kernel returned", where),
         {"work was left running (e.g. in a background thread) after the call returned; a "
          "kernel must finish before it returns"});
}

Expected<bool> Judge::check_test_shapes(const Solution& cand, const Solution& oracle) {
  for (const ShapePoint& point : task_.tests) {
    auto inst = task_.instantiate(point);
    if (!inst) return inst.error();
    note(fmt::format("checking {}", inst->label()));
    auto cw = start_worker(task_, *inst, cand, 1, o_);
    if (!cw) return cw.error();
    if (auto* f = (*cw)->fault()) {
      fail(f->verdict, f->message);
      return false;
    }
    // Stopped while it is not called: nothing it left running competes with the oracle.
    (*cw)->pause();
    auto ow = start_worker(task_, *inst, oracle, 1, o_);
    if (!ow) return ow.error();
    if (auto* f = (*ow)->fault())
      return Status::error("the task's reference (oracle) " + f->message);
    for (int s = 0; s < std::max(o_.seeds_per_shape, 2); ++s) {
      const uint64_t seed = next_seed();
      KF_RETURN_IF_ERROR(fill_inputs(task_, *inst, **cw, 0, seed));
      copy_inputs(task_, *inst, **cw, 0, **ow, 0, ShimKind::oracle);
      const std::string hash = inputs_hash(task_, **cw);
      poison_outputs(task_, *inst, **cw, 0, ShimKind::candidate);
      poison_outputs(task_, *inst, **ow, 0, ShimKind::oracle);
      // The oracle: the task's TE program, interpreted in f64, when it has one; else the
      // reference at double in its own worker.
      std::vector<std::vector<double>> te_out;
      OracleOutputs want;
      if (program_) {
        auto out = run_te_oracle(*program_, task_, *inst, **ow);
        if (!out) return out.error();
        te_out = std::move(*out);
        for (const auto& o : te_out) want.push_back(o.data());
      } else {
        RunOutcome orc = (*ow)->run(0, 1, o_.oracle_timeout_s);
        (*ow)->pause();
        if (!orc.ok)
          return Status::error(fmt::format("the task's reference (oracle) failed at {}: {}",
                                           inst->label(), orc.message));
        want = worker_outputs(task_, **ow);
      }
      RunOutcome r = (*cw)->run(0, 1, o_.run_timeout_s);
      res_.output_log = (*cw)->output_log();
      if (!r.ok) {
        fail(r.verdict, fmt::format("at {}: {}", inst->label(), r.message));
        return false;
      }
      const std::string where = fmt::format("at {} (input seed {}; --seed {} replays the run)",
                                            inst->label(), seed, seed_);
      check_side_effects(**cw, hash, 0, r.seconds, where);
      (*cw)->pause();
      if (failed_) return false;
      CompareResult c = compare_outputs(task_, *inst, **cw, 0, want);
      record(*inst, seed, c, false);
      if (!c.passed) {
        fail(Verdict::wrong_answer, fmt::format("wrong answer {}: {}", where, c.detail),
             {fmt::format("largest error relative to the tolerance: {}", c.worst)});
        return false;
      }
    }
  }
  return true;
}

}  // namespace kf
