// Replays every input the fuzzer found (tests/fuzz/regressions/<target>/*): each once crashed,
// hung or threw in kforge; each must now be answered (accepted or refused with a Status) without
// an exception and quickly. The seeds themselves must all be accepted, so the fuzzer starts from
// inputs that reach past the first parser.
#include <gtest/gtest.h>

#include <chrono>

#include "fuzz_targets.h"
#include "support/fs.h"

namespace kf::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = KFORGE_TEST_SOURCE_DIR;

const Context& context() {
  static const Context ctx = load_context(kSource);
  return ctx;
}

TEST(FuzzRegressions, EverySavedInputIsAnsweredWithoutCrashing) {
  size_t replayed = 0;
  for (Target t : kTargets) {
    const fs::path dir = kSource / "tests/fuzz/regressions" / target_name(t);
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      auto text = read_file(f);
      ASSERT_TRUE(text) << text.error().message();
      const auto start = std::chrono::steady_clock::now();
      EXPECT_NO_THROW((void)run_input({t, *text}, context())) << f;
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_LT(s, 2.0) << f << " took " << s << " s";
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0u) << "no regression inputs found under tests/fuzz/regressions";
}

TEST(FuzzRegressions, SeedsAreAccepted) {
  ASSERT_FALSE(context().tasks.empty());
  for (Target t : kTargets) {
    const std::vector<Input> seeds = load_seeds(t, kSource, context());
    EXPECT_GT(seeds.size(), 5u) << target_name(t);
    for (const Input& in : seeds)
      EXPECT_TRUE(run_input(in, context())) << target_name(t) << " seed:\n" << in.text;
  }
}

TEST(FuzzRegressions, MutationIsDeterministic) {
  const std::vector<Input> seeds = load_seeds(Target::formula, kSource, context());
  ASSERT_FALSE(seeds.empty());
  Rng a(7), b(7);
  for (int i = 0; i < 50; ++i) {
    const Input x = mutate(seeds[static_cast<size_t>(i) % seeds.size()], seeds, a);
    const Input y = mutate(seeds[static_cast<size_t>(i) % seeds.size()], seeds, b);
    EXPECT_EQ(x.text, y.text);
  }
}

}  // namespace
}  // namespace kf::fuzz
