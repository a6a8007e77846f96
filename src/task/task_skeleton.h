// The task.toml that `kforge new` writes from a kernel's signature, and what `kforge check` says is
// still missing in one.
//
//   std::string toml = skeleton_toml(sig, {.name = "scale_add", .dtype = DType::f32,
//                                          .origin = "scale_add.cpp (function scale_add)"});
//   for (const MissingField& m : missing_fields(toml, reference)) print(m.text());
//   // task.toml:14: [signature] input 'x': no shape yet (...)
//   // task.toml:30: [shapes] bench: no value yet for n (...)
//
// A skeleton holds everything the signature tells: the function, dims, inputs with a default
// distribution, outputs, scalars with defaults, the tolerance for the dtype; every field also has
// a comment saying what it does. What only the user knows (each tensor's shape, the bench and test
// shapes, the FLOP and byte formulas, an integer input's bound) is the placeholder "TODO": a string
// where the loader wants a number or a list, so a skeleton never loads by accident, and
// missing_fields names each one. `[te]` and `[baseline]` are optional and appear as comments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "task/dtype.h"
#include "task/signature_parse.h"

namespace kf {

// The value of a field the user must fill in.
inline constexpr std::string_view kPlaceholder = "TODO";

struct SkeletonOptions {
  std::string name;          // the task's name
  DType dtype = DType::f32;  // the task's floating dtype
  std::string origin;        // where the signature came from, for comments: "k.cpp (function f)"
};

// task.toml for the kernel `sig`, in the kernel ABI's order (inputs, outputs, dims, scalars).
std::string skeleton_toml(const ParsedSignature& sig, const SkeletonOptions& options);

// The tolerance kforge new writes for a dtype: the suite's usual values.
std::string default_tolerance(DType dtype);

struct MissingField {
  std::string file;  // "task.toml" or "reference.cpp"
  int line = 0;
  std::string what;          // "[shapes] bench: no value yet for n (the timed shape: ...)"
  std::string text() const;  // "task.toml:30: [shapes] bench: ..."
};

// The placeholders left in a task's files, in file and line order: every "TODO" value of
// task.toml (the bench shape's on one line, the test shapes' on one line, one line per other
// field) and every line of reference.cpp holding TODO(kforge). Empty when there is none, and for
// task.toml text that is not TOML (the loader says what is wrong with that). At most
// kMaxMissingFields entries, the last saying how many more there are.
std::vector<MissingField> missing_fields(std::string_view toml_text,
                                         std::string_view reference_text);
inline constexpr size_t kMaxMissingFields = 64;

}  // namespace kf
