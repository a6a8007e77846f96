// The page `kforge serve` serves and its front-end libraries (CodeMirror, cytoscape, Chart.js,
// from npm), compiled into the binary from src/serve/web/ by the build (src/CMakeLists.txt,
// web_assets.cpp.in): the page works with no network and no files beside the binary.
#pragma once

#include <string_view>
#include <vector>

namespace kf::serve {

struct Asset {
  const char* path;  // "/", "/app.js", "/style.css", "/lib/codemirror.js", ...
  const char* type;  // its Content-Type
  std::string_view content;
};

const std::vector<Asset>& web_assets();

}  // namespace kf::serve
