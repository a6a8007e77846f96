// What the commands print about failures, and their `--json` documents. Messages may quote
// untrusted text (a task file, a schedule, a candidate's diagnostics), so they go through
// terminal_text: valid UTF-8, and no control character that a terminal would act on.
//
//   print_error("no task at " + dir);             // "error: no task at ..." on stderr
//   print_json(kEvalSchema, result.to_json());    // {"schema": "kforge-eval/1", ...} on stdout
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "store/sqlite_store.h"
#include "store/store.h"
#include "support/check.h"
#include "support/json_text.h"

namespace kf {

// The help of the options every command that reads or writes runs has (support/fs.h says
// where the defaults come from).
inline constexpr const char* kStoreHelp =
    "Run store (default $KFORGE_STORE, else $XDG_DATA_HOME/kforge/runs.db: "
    "~/.local/share/kforge/runs.db; `kforge --here`: .kforge/runs.db)";
inline constexpr const char* kOutHelp =
    "Output directory (default $KFORGE_OUT/RUN, else $XDG_DATA_HOME/kforge/runs/RUN: "
    "~/.local/share/kforge/runs/RUN; `kforge --here`: kforge-out/RUN)";

// "error: MESSAGE" on stderr.
inline void print_error(std::string_view message) {
  fmt::print(stderr, "error: {}\n", terminal_text(message));
}

// A command's `--json` output: `doc` (an object) as one JSON document on stdout, with a
// "schema" field naming its format and version ("kforge-eval/1"); versioned_json adds the field
// for a document written elsewhere (bench --json-file). Each schema is documented in
// docs/json.md and a JSON Schema file; a field is added or changed only with a new version, so
// a program that reads "kforge-eval/1" can rely on what that version says. Invalid UTF-8 in
// untrusted text is written as U+FFFD (dump_json), so the document always parses.
inline nlohmann::json versioned_json(std::string_view schema, nlohmann::json doc) {
  KF_CHECK(doc.is_object()) << "a --json document is an object";
  doc["schema"] = schema;
  return doc;
}

inline void print_json(std::string_view schema, nlohmann::json doc) {
  fmt::print("{}\n", dump_json(versioned_json(schema, std::move(doc)), 2));
  std::fflush(stdout);
}

// What continues a run that stopped before its end, for the text a command prints on stdout:
// "\nnot finished (interrupted): `kforge optimize --resume ID` continues it\n"; "" for a run
// that cannot be resumed (finished, failed) or is not in the store.
inline std::string resume_hint(Store& store, const std::string& run_id) {
  auto run = store.get_run(run_id);
  if (!run || !resumable_state(run->state)) return "";
  return fmt::format("\nnot finished ({}): `kforge {} --resume {}` continues it\n", run->state,
                     run->mode, run->id);
}

// The store a command that reads runs opens: `path`, or the default one; an error naming it
// when it does not exist (a reader never creates an empty store).
inline Expected<std::unique_ptr<SqliteStore>> open_existing_store(const std::string& path) {
  const std::filesystem::path db =
      path.empty() ? default_store_path() : std::filesystem::path(path);
  if (!std::filesystem::exists(db))
    return Status::error(
        fmt::format("no run store at {} (--store or $KFORGE_STORE names another)", db.string()));
  return SqliteStore::open(db);
}

}  // namespace kf
