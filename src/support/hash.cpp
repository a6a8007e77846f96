#include "support/hash.h"

#include <xxhash.h>

#include <cstdint>
#include <cstdio>

#include "support/check.h"

namespace kf {

Hasher::Hasher() : state_(XXH3_createState()) {
  KF_CHECK(state_ != nullptr);
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Hasher::~Hasher() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

Hasher& Hasher::add(std::string_view data) {
  auto* st = static_cast<XXH3_state_t*>(state_);
  uint64_t n = data.size();
  XXH3_128bits_update(st, &n, sizeof n);
  XXH3_128bits_update(st, data.data(), data.size());
  return *this;
}

std::string Hasher::hex() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string content_hash(std::string_view data) {
  Hasher h;
  h.add(data);
  return h.hex();
}

}  // namespace kf
