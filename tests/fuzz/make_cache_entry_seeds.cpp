// Writes the seed entries of fuzz_cache_entry into the directory given as its argument
// (tests/fuzz/corpus/cache_entry), signed with the fuzzer's key. Not built by default:
//   g++ -std=c++20 -I<dir with lsjit -> source root> -I/usr/include/eigen3 \
//       tests/fuzz/make_cache_entry_seeds.cpp build/liblsjit_compiler.a build/liblsjit_ir.a -lsodium
// tests/compiler/cache_test.cpp checks that the committed seeds still decode.
#include <fstream>
#include "lsjit/compiler/cache/disk_cache.h"
using namespace lsjit::compiler;
int main(int, char** argv) {
  AuthKey key{}; key.fill(0x42);  // fuzz_cache_entry.cpp's key
  DiskEntry e;
  e.key.parts = {{"cost", "seed"}, {"mode", "residual"}};
  e.key.hash = hash_key_parts(e.key.parts);
  e.symbol = kernel_symbol(e.key);
  e.times = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  e.ir_text = "lsjit.ir 1\n";
  e.object_code = "\x7f" "ELF";
  std::ofstream(std::string(argv[1]) + "/valid.lsjitk", std::ios::binary) << encode_entry(e, key);
  e.key.parts.clear(); e.symbol.clear(); e.ir_text.clear(); e.object_code.clear();
  e.key.hash = hash_key_parts(e.key.parts);
  std::ofstream(std::string(argv[1]) + "/empty_fields.lsjitk", std::ios::binary) << encode_entry(e, key);
  AuthKey other{}; other.fill(1);
  std::ofstream(std::string(argv[1]) + "/bad_other_key.lsjitk", std::ios::binary) << encode_entry(e, other);
}
