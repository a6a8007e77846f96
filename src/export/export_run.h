// `kforge export`: a run's best kernel as files a C++ project builds (export_files.h), read
// from the run store.
//
//   auto store = SqliteStore::open(default_store_path());
//   Expected<ExportResult> r = export_run(**store, {.run = "r20261206-2159", .target = "avx2",
//                                                   .ns = "fast", .out_dir = "exported"});
//   if (!r) print_error(r.error().message());        // one line: what is missing and where
//
// What it exports. The run's best candidate (RunRecord::best_candidate) with the task's
// signature from the task folder the run names (or `task_dir`). The target decides the source
// and the flags:
//   ""       the kernel as the run judged it: the stored source, -march=native plus the run's
//            target flags, as the judge compiled it (for the CPU family of the building machine)
//   avx512   -march=x86-64-v4; avx2: -march=x86-64-v3; scalar: no -march (x86-64 baseline);
//   native   the widest target of this machine, -march=native.
// A named target regenerates a generated candidate from its stored schedule for that target's
// vector ISA (the same schedule lowered again: the code differs, the result does not); for
// written source only the flags change, and the result says so.
//
// Failures (all an error Status with one line, nothing written): an unknown target, a namespace
// that is not a C++ name, no run with that id or id prefix (or several), a run without a best
// candidate, a candidate missing from the store, a task folder that does not load, a schedule
// that no longer lowers, and an output directory that cannot be created or written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "store/store.h"
#include "support/status.h"

namespace kf {

struct ExportOptions {
  std::string run;     // a run id, or a prefix of exactly one run's id
  std::string target;  // "", "native", "avx512", "avx2", "scalar"
  std::string ns;      // the function's namespace; "": kforge_ + the task's name
  bool c_linkage = false;
  std::filesystem::path out_dir;
  std::filesystem::path task_dir;  // "": the folder the run was made on
};

struct ExportResult {
  std::string run_id, task, function, candidate_key;
  std::string kind;                   // the candidate's kind: generated, written, edited, imported
  std::string recipe;                 // a generated candidate's recipe, else its origin
  std::string target_note;            // what the target changed: the source, the flags, or nothing
  std::string flags;                  // the compile flags of the library, joined
  std::string call;                   // "ns::fn" or "fn" (C linkage)
  std::vector<std::string> files;     // written, relative to out_dir
  std::vector<std::string> warnings;  // the task folder changed since the run, ...
};

Expected<ExportResult> export_run(Store& store, const ExportOptions& options);

// The names --target accepts, in the order the help lists them.
std::vector<std::string> export_target_names();

}  // namespace kf
