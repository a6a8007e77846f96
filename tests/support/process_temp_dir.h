// A directory of the test program's own (its name holds the process id), made empty on first
// use and removed when the tests end.
//
//   const fs::path db = process_temp_dir("kf_written") / "files.db";
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kf::testing {

// One directory per program: the prefix of the first call names it.
inline const std::filesystem::path& process_temp_dir(const std::string& prefix) {
  static const std::filesystem::path root = [&] {
    namespace fs = std::filesystem;
    const fs::path p = fs::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    // Removed after the last test (the environment owns nothing else).
    class Remove : public ::testing::Environment {
     public:
      explicit Remove(fs::path p) : p_(std::move(p)) {}
      void TearDown() override { fs::remove_all(p_); }

     private:
      fs::path p_;
    };
    ::testing::AddGlobalTestEnvironment(new Remove(p));
    return p;
  }();
  return root;
}

}  // namespace kf::testing
