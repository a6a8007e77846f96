// `kforge strategies`: the catalog as the binary prints it, and the docs' list kept in step with
// it (docs/optimize.md names every strategy, and the counts it states are the catalog's).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "agents/strategy.h"
#include "support/fs.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

TEST(StrategiesCli, JsonListsTheWholeCatalog) {
  auto r = run_process({.argv = {std::getenv("KFORGE_BIN"), "strategies", "--json"}});
  ASSERT_TRUE(r && r->ok()) << (r ? r->err : r.error().message());
  const nlohmann::json doc = nlohmann::json::parse(r->out);
  EXPECT_EQ(doc["schema"], "kforge-strategies/1");
  const auto& catalog = agents::strategy_catalog();
  ASSERT_EQ(doc["strategies"].size(), catalog.size());
  std::set<std::string> ids;
  for (size_t i = 0; i < catalog.size(); ++i) {
    const nlohmann::json& s = doc["strategies"][i];
    EXPECT_EQ(s["id"], catalog[i].id);
    EXPECT_TRUE(ids.insert(s["id"].get<std::string>()).second) << "unique ids";
    EXPECT_FALSE(s["description"].get<std::string>().empty()) << s["id"];
    for (const auto& k : s["knobs"]) {
      const auto values = k["values"].get<std::vector<int64_t>>();
      EXPECT_NE(std::find(values.begin(), values.end(), k["initial"].get<int64_t>()), values.end())
          << s["id"] << "." << k["name"] << ": the initial value is one of its values";
    }
  }
}

TEST(StrategiesCli, TextHasALinePerStrategyAndTheCount) {
  auto r = run_process({.argv = {std::getenv("KFORGE_BIN"), "strategies"}});
  ASSERT_TRUE(r && r->ok());
  const std::string out = "\n" + r->out;
  for (const agents::Strategy& s : agents::strategy_catalog())
    EXPECT_NE(out.find("\n" + s.id + " "), std::string::npos) << s.id;
  EXPECT_NE(r->out.find(std::to_string(agents::strategy_catalog().size()) + " strategies"),
            std::string::npos);
}

TEST(StrategiesCli, TheDocsNameEveryStrategyAndTheCatalogsCounts) {
  auto doc = read_file(testing::source_dir() / "docs/optimize.md");
  ASSERT_TRUE(doc);
  const std::string section = doc->substr(doc->find("## The strategy catalog"));
  int with_moves = 0, tuned = 0, other = 0;
  for (const agents::Strategy& s : agents::strategy_catalog()) {
    EXPECT_NE(section.find(s.id), std::string::npos) << s.id << " is missing from the docs";
    with_moves += s.moves != nullptr;
    tuned += s.moves == nullptr && !s.tuned_knob.empty();
    other += !s.mechanical();
  }
  EXPECT_NE(section.find(std::to_string(agents::strategy_catalog().size()) + " strategies"),
            std::string::npos);
  EXPECT_NE(section.find(std::to_string(with_moves) + " have schedule moves"), std::string::npos);
  EXPECT_NE(section.find(std::to_string(tuned) + "\nare applied by the autotuner"),
            std::string::npos);
  EXPECT_NE(section.find(std::to_string(other) + " have no mechanical form"), std::string::npos);
}

}  // namespace
}  // namespace kf
