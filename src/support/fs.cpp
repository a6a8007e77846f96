#include "support/fs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace kf {

Expected<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file_atomic(const fs::path& path, std::string_view contents) {
  std::error_code ec;
  // Only a regular file is replaced: renaming over `-o /dev/null` or a FIFO would put a regular
  // file in its place (as root, /dev/null itself). Those are written in place.
  if (const fs::file_status st = fs::status(path, ec); fs::exists(st) && !fs::is_regular_file(st)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) return Status::error(path.string() + ": cannot write: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) return Status::error(path.string() + ": write failed");
    return ok_status();
  }
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::error(path.string() + ": cannot create directory: " + ec.message());
  std::random_device rd;
  fs::path tmp = path;
  tmp += ".tmp" + std::to_string(rd()) + "." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::error(tmp.string() + ": cannot write: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) return Status::error(tmp.string() + ": write failed");
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::error(path.string() + ": rename failed");
  }
  return ok_status();
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  char* made = mkdtemp(tmpl.data());
  KF_CHECK(made != nullptr) << "mkdtemp failed: " << std::strerror(errno);
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path cache_dir() {
  fs::path dir;
  if (const char* d = std::getenv("KFORGE_CACHE_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "kforge";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".cache" / "kforge";
  } else {
    dir = fs::temp_directory_path() / "kforge-cache";
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

fs::path data_dir() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return fs::path(x) / "kforge";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".local" / "share" / "kforge";
  return {};
}

fs::path default_output_dir(const std::string& run_id) {
  if (const char* o = std::getenv("KFORGE_OUT"); o && *o) return fs::path(o) / run_id;
  const fs::path data = data_dir();
  return (data.empty() ? fs::current_path() / "kforge-out" : data / "runs") / run_id;
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  KF_CHECK(!ec) << "cannot read /proc/self/exe";
  return exe.parent_path();
}

}  // namespace kf
