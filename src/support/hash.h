// Content hashing for identities (candidate keys, cache entries, machine fingerprints).
//
//   Hasher h; h.add("source"); h.add(flags); std::string key = h.hex();  // 32 hex digits
#pragma once

#include <string>
#include <string_view>

namespace kf {

// Incremental 128-bit hash (XXH3-128). Each add() is length-prefixed, so ("ab","c") and
// ("a","bc") hash differently.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  Hasher& add(std::string_view data);
  std::string hex() const;  // 32 lowercase hex digits

 private:
  void* state_;
};

// One-shot hash of a byte string, 32 hex digits.
std::string content_hash(std::string_view data);

}  // namespace kf
