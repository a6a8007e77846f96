// The page `kforge serve` serves, compiled into the binary from src/serve/web/ (the build embeds
// each file: web_assets.cpp.in): it works with no network and no files beside the binary.
#pragma once

#include <string_view>
#include <vector>

namespace kf::serve {

struct Asset {
  const char* path;  // "/", "/app.js", "/style.css"
  const char* type;  // its Content-Type
  std::string_view content;
};

const std::vector<Asset>& web_assets();

}  // namespace kf::serve
