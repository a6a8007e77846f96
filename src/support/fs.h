// Small file-system helpers: whole-file reads and atomic writes, temporary directories, and
// kforge's cache directory.
#pragma once

#include <filesystem>
#include <string>

#include "support/status.h"

namespace kf {

namespace fs = std::filesystem;

Expected<std::string> read_file(const fs::path& path);

// Writes to a temporary file in the same directory and renames it over `path`, so readers
// never see a partial file. Creates parent directories.
Status write_file_atomic(const fs::path& path, std::string_view contents);

// A fresh, empty directory that is removed (recursively) when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kforge");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge. Created on demand.
fs::path cache_dir();

// The user's kforge data folder: $XDG_DATA_HOME/kforge, else ~/.local/share/kforge; "" when
// neither variable is set (then the working directory holds what would go there). Not created.
fs::path data_dir();

// Where a run's outputs go, OUT/RUN_ID: $KFORGE_OUT, else data_dir()/runs, else kforge-out in
// the working directory (`kforge --here` sets $KFORGE_OUT to that).
fs::path default_output_dir(const std::string& run_id);

// The directory holding the running executable (from /proc/self/exe).
fs::path executable_dir();

}  // namespace kf
