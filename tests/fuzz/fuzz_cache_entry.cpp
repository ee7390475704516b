// decode_entry on arbitrary bytes (compiler/disk_cache.h): it returns a status and never
// crashes, reads out of bounds or allocates what a lying header announces. Forged input
// almost never carries a valid checksum and tag, so each input is also decoded a second
// time "sealed": its checksum and tag recomputed with the fuzzer's key, as the writer would,
// which lets the payload parser see every byte string. An Ok entry must encode back to an
// entry that decodes to the same fields.
#include <sodium.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lsjit/compiler/disk_cache.h"
#include "lsjit/ir/stable_hash.h"

namespace {

using namespace lsjit::compiler;
using lsjit::fuzz::broken;

constexpr size_t kChecksumSize = 16;

AuthKey fuzz_key() {
  AuthKey k{};
  k.fill(0x42);
  return k;
}

// The bytes with their last 48 replaced by a valid checksum and tag over the rest.
std::string sealed(std::string_view bytes, const AuthKey& key) {
  if (bytes.size() < kChecksumSize + kAuthTagSize) return std::string(bytes);
  std::string out(bytes.substr(0, bytes.size() - kChecksumSize - kAuthTagSize));
  lsjit::StableHasher h;
  h.add(std::string_view(out));
  const lsjit::Hash128 sum = h.finish();
  for (uint64_t v : {sum.hi, sum.lo})
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  unsigned char tag[kAuthTagSize];
  crypto_generichash(tag, sizeof tag, reinterpret_cast<const unsigned char*>(out.data()), out.size(),
                     key.data(), key.size());
  out.append(reinterpret_cast<const char*>(tag), sizeof tag);
  return out;
}

void check(std::string_view bytes, const AuthKey& key) {
  const DecodeResult r = decode_entry(bytes, &key);
  if (r.status != EntryStatus::Ok) {
    if (r.entry) broken("a bad entry came with an entry");
    if (r.message.empty()) broken("a bad entry without a reason");
    return;
  }
  if (!r.entry) broken("Ok without an entry");
  const DecodeResult again = decode_entry(encode_entry(*r.entry, key), &key);
  if (again.status != EntryStatus::Ok) broken("an Ok entry did not survive encode -> decode");
  const DiskEntry& a = *r.entry;
  const DiskEntry& b = *again.entry;
  if (!(a.key == b.key) || a.symbol != b.symbol || a.ir_text != b.ir_text || a.object_code != b.object_code)
    broken("encode -> decode changed an entry");
  if (decode_entry(bytes, nullptr).status == EntryStatus::Ok) broken("Ok without a key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (sodium_init() < 0) broken("libsodium failed to initialize");
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const AuthKey key = fuzz_key();
  lsjit::fuzz::expect_only_lsjit_errors([&] {
    check(bytes, key);
    check(sealed(bytes, key), key);
  });
  return 0;
}
