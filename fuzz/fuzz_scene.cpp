// Fuzz target: the scene reader (qs::parse_scene). Any input must either give a scene or
// throw the reader's one error type; anything else (another exception, a crash, a
// sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quasistep/core/scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const qs::Scene scene = qs::parse_scene(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)scene;
  } catch (const qs::SceneError&) {
  }
  return 0;
}
