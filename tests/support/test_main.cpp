// The test binaries' main: points kforge at the freshly built worker, and a cache and a data
// folder (the default run store and outputs) of its own inside the build tree (so tests never
// share state with a user's ~/.cache/kforge or ~/.local/share/kforge), then runs GoogleTest.
// Variables already set in the environment win.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/jail.h"

int main(int argc, char** argv) {
  setenv("KFORGE_WORKER", KFORGE_TEST_BINARY_DIR "/bin/kforge-worker", 0);
  setenv("KFORGE_BIN", KFORGE_TEST_BINARY_DIR "/bin/kforge", 0);
  setenv("KFORGE_CACHE_DIR", KFORGE_TEST_BINARY_DIR "/test-cache", 0);
  setenv("KFORGE_SOURCE_DIR", KFORGE_TEST_SOURCE_DIR, 0);
  setenv("XDG_DATA_HOME", KFORGE_TEST_BINARY_DIR "/test-data", 0);
  kf::make_judge_undumpable();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
