// decode_entry, whole and for a load, on arbitrary bytes (compiler/cache/disk_cache.h): it
// returns a status and never crashes, reads out of bounds or allocates what a lying header
// announces. Forged input almost never carries valid tags and checksum, so each input is
// also decoded "sealed": its tags and checksum recomputed with the fuzzer's key, as the
// writer would, which lets the payload parser see every byte string. An Ok entry must
// encode back to an entry that decodes to the same fields, and load with them.
#include <sodium.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/ir/stable_hash.h"

namespace {

using namespace lsjit::compiler;
using lsjit::fuzz::broken;

constexpr size_t kChecksumSize = 16;
constexpr size_t kHeaderSize = 28;  // magic, version, payload size, IR size

AuthKey fuzz_key() {
  AuthKey k{};
  k.fill(0x42);
  return k;
}

void append_tag(std::string& out, std::string_view covered, const AuthKey& key) {
  unsigned char tag[kAuthTagSize];
  crypto_generichash(tag, sizeof tag, reinterpret_cast<const unsigned char*>(covered.data()),
                     covered.size(), key.data(), key.size());
  out.append(reinterpret_cast<const char*>(tag), sizeof tag);
}

// The bytes with valid tags and checksum, as the writer would make them: the load tag
// after the payload the header announces (when it fits), and the last 48 bytes replaced
// by the checksum and tag over the rest.
std::string sealed(std::string_view bytes, const AuthKey& key) {
  if (bytes.size() < kChecksumSize + kAuthTagSize) return std::string(bytes);
  std::string out(bytes.substr(0, bytes.size() - kChecksumSize - kAuthTagSize));
  if (out.size() >= kHeaderSize) {
    uint64_t payload = 0;
    for (int i = 0; i < 8; ++i) payload |= uint64_t{static_cast<unsigned char>(out[12 + i])} << (8 * i);
    if (payload <= out.size() - kHeaderSize && out.size() - kHeaderSize - payload >= kAuthTagSize) {
      const size_t end = kHeaderSize + payload;
      std::string tag;
      append_tag(tag, std::string_view(out).substr(0, end), key);
      out.replace(end, kAuthTagSize, tag);
    }
  }
  lsjit::StableHasher h;
  h.add(std::string_view(out));
  const lsjit::Hash128 sum = h.finish();
  for (uint64_t v : {sum.hi, sum.lo})
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  const std::string covered = out;
  append_tag(out, covered, key);
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
  // What a whole decode accepts, a load accepts, with the same fields but the IR text.
  const DecodeResult load = decode_entry(bytes, &key, DecodeScope::Load);
  if (load.status != EntryStatus::Ok || !load.entry) broken("a whole entry did not load");
  if (!(load.entry->key == a.key) || load.entry->symbol != a.symbol ||
      load.entry->object_code != a.object_code || !load.entry->ir_text.empty())
    broken("a load decoded other fields than the whole decode");
}

// A load never reads past the bytes, nor accepts an entry without its key.
void check_load(std::string_view bytes, const AuthKey& key) {
  const DecodeResult r = decode_entry(bytes, &key, DecodeScope::Load);
  if (r.status != EntryStatus::Ok) {
    if (r.entry) broken("a bad load came with an entry");
    if (r.message.empty()) broken("a bad load without a reason");
    return;
  }
  if (!r.entry) broken("a load Ok without an entry");
  if (decode_entry(bytes, nullptr, DecodeScope::Load).status == EntryStatus::Ok) broken("a load Ok without a key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (sodium_init() < 0) broken("libsodium failed to initialize");
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const AuthKey key = fuzz_key();
  lsjit::fuzz::expect_only_lsjit_errors([&] {
    check(bytes, key);
    check_load(bytes, key);
    const std::string sealed_bytes = sealed(bytes, key);
    check(sealed_bytes, key);
    check_load(sealed_bytes, key);
  });
  return 0;
}
