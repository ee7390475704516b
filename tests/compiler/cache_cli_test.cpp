// `lsjit cache ...` run as a separate process on a cache directory filled by this process.
#include <doctest/doctest.h>

#include "../support/run_cli.h"
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

using Run = lsjit::testing::CliRun;
using lsjit::testing::run;

// Three real kernels: scaled(2) and scaled(3) in residual_jacobian, two_vars in residual.
struct Filled {
  TempDir dir;
  std::ostringstream log;
  std::vector<CacheKey> keys;
  explicit Filled(const std::string& name) : dir(name) {
    KernelCache::Options o;
    o.directory = dir.path;
    o.log = &log;
    KernelCache cache(o);
    keys.push_back(cache.get(trace_scaled(2.0), KernelMode::ResidualJacobian)->key);
    keys.push_back(cache.get(trace_scaled(3.0), KernelMode::ResidualJacobian)->key);
    keys.push_back(cache.get(trace_two_vars(), KernelMode::Residual)->key);
  }
  std::string d() const { return " --dir " + dir.path.string(); }
};

}  // namespace

TEST_CASE("lsjit cache list / stats / show / diff") {
  Filled f("cli_list");
  Run r = run("cache list" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  for (const CacheKey& k : f.keys) CHECK(r.out.find(k.id().substr(0, 12)) != std::string::npos);
  CHECK(r.out.find("scaled") != std::string::npos);
  CHECK(r.out.find("two_vars") != std::string::npos);
  CHECK(r.out.find("residual_jacobian") != std::string::npos);
  CHECK(r.out.find(" ms") != std::string::npos);

  r = run("cache list --json" + f.d());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"id\": \"" + f.keys[0].id() + "\"") != std::string::npos);
  CHECK(r.out.find("\"cost\": \"two_vars\"") != std::string::npos);
  CHECK(r.out.find("\"compile_s\": ") != std::string::npos);

  r = run("cache stats" + f.d());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("entries       3") != std::string::npos);
  CHECK(r.out.find("bad entries   0") != std::string::npos);
  r = run("cache stats --json" + f.d());
  CHECK(r.out.find("\"entries\": 3") != std::string::npos);

  r = run("cache show " + f.keys[2].id().substr(0, 10) + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("id        " + f.keys[2].id()) != std::string::npos);
  CHECK(r.out.find("symbol    lsjit_k_" + f.keys[2].id()) != std::string::npos);
  for (const auto& [name, value] : f.keys[2].parts) CHECK(r.out.find(value) != std::string::npos);
  CHECK(r.out.find("optimize") != std::string::npos);
  CHECK(r.out.find("lsjit.ir 1\ncost two_vars kind=least_squares stage=simplified") != std::string::npos);
  r = run("cache show --json " + f.keys[2].id() + f.d());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"cost\": \"two_vars\"") != std::string::npos);
  CHECK(r.out.find("\"ir\": \"lsjit.ir 1\\ncost two_vars") != std::string::npos);

  r = run("cache diff " + f.keys[0].id().substr(0, 8) + " " + f.keys[1].id().substr(0, 8) + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("structural_hash:\n  a: " + std::string(f.keys[0].part("structural_hash"))) !=
        std::string::npos);
  CHECK(r.out.find("mode") == std::string::npos);
  r = run("cache diff --json " + f.keys[0].id() + " " + f.keys[2].id() + f.d());
  CHECK(r.out.find("{\"part\": \"cost\", \"a\": \"scaled\", \"b\": \"two_vars\"}") != std::string::npos);

  // Bad keys.
  CHECK(run("cache show ffffffffffff" + f.d()).exit_code == 1);
  CHECK(run("cache show nothex" + f.d()).exit_code == 1);
  CHECK(run("cache show" + f.d()).exit_code == 2);
  CHECK(run("cache frobnicate" + f.d()).exit_code == 2);
  CHECK(run("cache").exit_code == 2);
  r = run("cache help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("then recompile\n                       the IR it stores") != std::string::npos);
}

TEST_CASE("lsjit cache show: an ambiguous prefix is refused") {
  Filled f("cli_prefix");
  // With three ids, a one-digit prefix is ambiguous only if two share it; the empty-ish
  // prefix "" is rejected, and some one-digit prefix matches either 0, 1 or more.
  bool saw_ambiguous = false;
  for (char c : std::string("0123456789abcdef")) {
    size_t n = 0;
    for (const CacheKey& k : f.keys) n += k.id()[0] == c;
    if (n < 2) continue;
    const Run r = run(std::string("cache show ") + c + f.d());
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("give more digits") != std::string::npos);
    saw_ambiguous = true;
  }
  (void)saw_ambiguous;  // depends on the ids
}

TEST_CASE("lsjit cache verify reports bad entries - gc and clear remove entries") {
  Filled f("cli_verify");
  Run r = run("cache verify" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3 entries, 3 ok, 0 bad") != std::string::npos);

  const DiskCache disk(f.dir.path);
  // Corrupt one, truncate one.
  std::string bytes = read_bytes(disk.entry_path(f.keys[0].hash));
  bytes[bytes.size() / 2] ^= 0x10;
  write_bytes(disk.entry_path(f.keys[0].hash), bytes);
  bytes = read_bytes(disk.entry_path(f.keys[1].hash));
  write_bytes(disk.entry_path(f.keys[1].hash), bytes.substr(0, 40));
  r = run("cache verify" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("3 entries, 1 ok, 2 bad") != std::string::npos);
  CHECK(r.out.find("BAD  " + f.keys[0].id().substr(0, 12) + "  corrupt: checksum mismatch") !=
        std::string::npos);
  CHECK(r.out.find("BAD  " + f.keys[1].id().substr(0, 12) + "  truncated") != std::string::npos);
  r = run("cache verify --json" + f.d());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("\"bad\": 2") != std::string::npos);
  r = run("cache list" + f.d());
  CHECK(r.out.find("BAD (corrupt: checksum mismatch)") != std::string::npos);

  // An entry whose object does not define its symbol.
  {
    DecodeResult good = read_entry(disk, f.keys[2].hash);
    REQUIRE(good.status == EntryStatus::Ok);
    DiskEntry e = *good.entry;
    e.object_code = "not an object";
    write_bytes(disk.entry_path(f.keys[2].hash), encode_for(disk, e));
  }
  r = run("cache verify --remove-bad" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("3 entries, 0 ok, 3 bad") != std::string::npos);
  CHECK(r.out.find("two_vars residual: lsjit kernel loader:") != std::string::npos);
  CHECK(r.out.find("(removed)") != std::string::npos);
  CHECK(disk.list().empty());
}

TEST_CASE("lsjit cache verify recompiles every entry and compares outputs bit for bit") {
  Filled f("cli_verify_recompile");
  Run r = run("cache verify" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.out, "(recompiled: same output)") == 3);

  // scaled(2)'s entry with scaled(3)'s IR: intact as a file (a fresh checksum, the right
  // symbol, a loadable object), but its code is not what its IR compiles to.
  const DiskCache disk(f.dir.path);
  DiskEntry e = *read_entry(disk, f.keys[0].hash).entry;
  e.ir_text = read_entry(disk, f.keys[1].hash).entry->ir_text;
  write_bytes(disk.entry_path(f.keys[0].hash), encode_for(disk, e));
  r = run("cache verify" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("BAD  " + f.keys[0].id().substr(0, 12) +
                   "  scaled residual_jacobian: recompiled, its output differs from the stored "
                   "code's") != std::string::npos);
  CHECK(r.out.find("3 entries, 2 ok, 1 bad") != std::string::npos);
  r = run("cache verify --json" + f.d());
  CHECK(r.out.find("\"recompiled\": true") != std::string::npos);
  CHECK(r.out.find("\"bad\": 1") != std::string::npos);
}

TEST_CASE("lsjit cache gc, with its default size or --max-size, and clear") {
  Filled f("cli_gc");
  const DiskCache disk(f.dir.path);
  write_bytes(f.dir / "keep.txt", "not an entry");
  uint64_t total = 0;
  for (const auto& file : disk.list()) total += file.size;
  Run at_default = run("cache gc" + f.d());  // 1G by default: these few entries stay
  CHECK(at_default.exit_code == 0);
  CHECK(at_default.out.find("removed 0 files") != std::string::npos);
  CHECK(run("cache gc --max-size 12Q" + f.d()).exit_code == 2);
  Run r = run("cache gc --max-size " + std::to_string(total) + f.d());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("removed 0 files") != std::string::npos);
  r = run("cache gc --json --max-size " + std::to_string(total - 1) + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"removed\": 1") != std::string::npos);
  CHECK(disk.list().size() == 2);
  r = run("cache gc --max-size 1K" + f.d());
  CHECK(disk.list().size() < 2);
  r = run("cache clear" + f.d());
  CHECK(r.exit_code == 0);
  CHECK(disk.list().empty());
  CHECK(fs::exists(f.dir / "keep.txt"));
  r = run("cache list" + f.d());
  CHECK(r.out.find("no entries") != std::string::npos);
}

namespace {

// "  Final                           3.75133743e+02" from a solve summary, or "" if none.
std::string final_cost(const std::string& summary) {
  const size_t at = summary.find("\n  Final ");
  if (at == std::string::npos) return "";
  const size_t begin = summary.find_first_not_of(' ', at + 9);
  return summary.substr(begin, summary.find('\n', begin) - begin);
}

}  // namespace

TEST_CASE("planted machine code in the cache: lsjit solve and cache verify never run it") {
  TempDir dir("cli_planted");
  const std::string graph = std::string(LSJIT_SOURCE_DIR) + "/data/pose_graph_se3_500.g2o";
  const fs::path cache = dir / "cache", clean = dir / "clean", marker = dir / "planted-code-ran";
  Run reference = lsjit::testing::run_cli("solve " + graph, "LSJIT_CACHE_DIR=" + clean.string());
  REQUIRE(reference.exit_code == 0);
  REQUIRE(!final_cost(reference.out).empty());
  REQUIRE(lsjit::testing::run_cli("solve " + graph, "LSJIT_CACHE_DIR=" + cache.string()).exit_code == 0);
  fs::create_directories(dir / "work");
  REQUIRE(plant_marker_objects(cache, marker, dir / "work") > 0);

  Run r = run("cache verify --dir " + cache.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("unauthenticated") != std::string::npos);
  CHECK_MESSAGE(!fs::exists(marker), "cache verify linked or ran the planted object");

  r = lsjit::testing::run_cli("solve " + graph, "LSJIT_CACHE_DIR=" + cache.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(final_cost(r.out) == final_cost(reference.out));
  CHECK(r.out.find("lsjit: warning: kernel cache entry") != std::string::npos);
  CHECK(r.out.find("unauthenticated") != std::string::npos);
  CHECK_MESSAGE(!fs::exists(marker), "lsjit solve linked or ran the planted object");
}

TEST_CASE("lsjit cache on a missing, non-directory or untrusted folder says so and fails") {
  TempDir dir("cli_no_dir");
  write_bytes(dir / "file", "x");
  for (const std::string command : {"list", "stats", "verify", "clear", "gc --max-size 1M", "show 00"}) {
    CAPTURE(command);
    Run r = run("cache " + command + " --dir " + (dir / "missing").string());
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("'" + (dir / "missing").string() + "' does not exist") != std::string::npos);
    r = run("cache " + command + " --dir " + (dir / "file").string());
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("is not a directory") != std::string::npos);
  }
  fs::create_directories(dir / "open");
  ::chmod((dir / "open").c_str(), 0777);
  Run r = run("cache list --dir " + (dir / "open").string());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("chmod 700") != std::string::npos);
}

TEST_CASE("lsjit cache clear removes only real entries, not look-alike names") {
  Filled f("cli_clear_lookalike");
  const std::string lookalike = std::string(32, 'a') + ".lsjitk";
  write_bytes(f.dir / lookalike, "my notes, not a kernel");
  fs::create_directories(f.dir / (std::string(32, 'b') + ".lsjitk"));
  Run r = run("cache clear" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("removed 3 files") != std::string::npos);
  CHECK(read_bytes(f.dir / lookalike) == "my notes, not a kernel");
  CHECK(fs::is_directory(f.dir / (std::string(32, 'b') + ".lsjitk")));
}

namespace {

// The big-endian u32 at `at`.
uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) | (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) | uint32_t{static_cast<unsigned char>(s[at + 3])};
}

}  // namespace

TEST_CASE("lsjit cache export writes a static library, its index and the registration table") {
  Filled f("cli_export");
  const fs::path out = f.dir / "exported";
  Run r = run("cache export " + f.keys[0].id().substr(0, 10) + " " + f.keys[2].id() +
              " --name my_kernels --out " + out.string() + f.d());
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote " + (out / "libmy_kernels.a").string() + " (2 kernels)") != std::string::npos);

  // The archive: magic, then the index member "/" naming both kernels' symbols at the
  // offsets of their members, whose bytes are the entries' objects.
  const std::string a = read_bytes(out / "libmy_kernels.a");
  REQUIRE(a.size() > 68);
  CHECK(a.substr(0, 8) == "!<arch>\n");
  CHECK(a.substr(8, 16) == "/               ");
  const uint32_t symbols = be32(a, 68);
  CHECK(symbols == 2);
  const DiskCache disk(f.dir.path);
  std::string names = a.substr(72 + 4 * symbols);
  for (uint32_t i = 0; i < symbols; ++i) {
    const size_t header = be32(a, 72 + 4 * i);
    const std::string symbol = names.substr(0, names.find('\0'));
    names.erase(0, symbol.size() + 1);
    const CacheKey& key = symbol == kernel_symbol(f.keys[0]) ? f.keys[0] : f.keys[2];
    CHECK(symbol == kernel_symbol(key));
    REQUIRE(header + 60 < a.size());
    CHECK(a.substr(header, 15) == key.id().substr(0, 12) + ".o/");
    const size_t size = std::stoul(a.substr(header + 48, 10));
    const DecodeResult e = read_entry(disk, key.hash);
    REQUIRE(e.status == EntryStatus::Ok);
    CHECK(a.substr(header + 60, size) == e.entry->object_code);
  }

  // The registration source: every part of both keys, each kernel's declaration, and the
  // function the header declares.
  const std::string cpp = read_bytes(out / "my_kernels.cpp");
  for (const CacheKey* k : {&f.keys[0], &f.keys[2]}) {
    CHECK(cpp.find("void " + kernel_symbol(*k) + "(const lsjit::compiler::KernelArgs*);") != std::string::npos);
    CHECK(cpp.find("{\"" + k->id() + "\", kParts") != std::string::npos);
    for (const auto& [name, value] : k->parts) CHECK(cpp.find("\"" + name + "\", \"" + value + "\"") != std::string::npos);
  }
  CHECK(cpp.find(f.keys[1].id()) == std::string::npos);
  CHECK(cpp.find("std::size_t register_my_kernels() {") != std::string::npos);
  CHECK(read_bytes(out / "my_kernels.h").find("std::size_t register_my_kernels();") != std::string::npos);
}

TEST_CASE("lsjit cache export --from-log takes the kernels a logged run used") {
  Filled f("cli_export_log");
  const fs::path log = f.dir / "compile.log";
  write_bytes(log, "iteration 1\nlsjit: kernel scaled residual_jacobian " + f.keys[1].id().substr(0, 12) +
                       " (trace scaled-0123): compiled in 9 ms\nlsjit: kernel two_vars residual " +
                       f.keys[2].id().substr(0, 12) + ": compiled in the background in 8 ms\n");
  Run r = run("cache export --from-log " + log.string() + " --name logged --out " + (f.dir / "o").string() + f.d());
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string cpp = read_bytes(f.dir / "o" / "logged.cpp");
  CHECK(cpp.find(f.keys[1].id()) != std::string::npos);
  CHECK(cpp.find(f.keys[2].id()) != std::string::npos);
  CHECK(cpp.find(f.keys[0].id()) == std::string::npos);

  // A log that names an id the cache lacks: the file and line, nothing written.
  write_bytes(log, "x\nlsjit: kernel scaled residual 0123456789ab: compiled in 9 ms\n");
  r = run("cache export --from-log " + log.string() + " --name bad --out " + (f.dir / "b").string() + f.d());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(log.string() + ":2: no entry id starts with '0123456789ab'") != std::string::npos);
  CHECK(!fs::exists(f.dir / "b"));
  write_bytes(log, "no kernels here\n");
  r = run("cache export --from-log " + log.string() + " --name bad --out " + (f.dir / "b").string() + f.d());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(log.string() + ": no 'lsjit: kernel' lines") != std::string::npos);
}

TEST_CASE("lsjit cache export refuses bad names, no selection and unauthenticated entries") {
  Filled f("cli_export_bad");
  const std::string o = " --out " + (f.dir / "o").string();
  for (const std::string name : {"", "9lives", "has-dash", "a b", "x;rm"}) {
    const Run r = run("cache export --all --name '" + name + "'" + o + f.d());
    CAPTURE(name);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("a C identifier") != std::string::npos);
  }
  Run r = run("cache export --name k" + o + f.d());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("which kernels?") != std::string::npos);
  r = run("cache list --name k" + f.d());
  CHECK(r.exit_code == 2);

  // An entry tagged with someone else's key is never exported, and nothing is written.
  const DiskCache disk(f.dir.path);
  DecodeResult good = read_entry(disk, f.keys[1].hash);
  REQUIRE(good.status == EntryStatus::Ok);
  AuthKey other{};
  other.fill(7);
  write_bytes(disk.entry_path(f.keys[1].hash), encode_entry(*good.entry, other));
  r = run("cache export --all --name k" + o + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(f.keys[1].id() + ".lsjitk: not exported: unauthenticated") != std::string::npos);
  CHECK(!fs::exists(f.dir / "o"));
}

TEST_CASE("lsjit cache export: the system linker takes the library, and the table's strings round-trip") {
  // Two real kernels, and an entry whose key parts hold every character C++ string
  // literals treat specially (cost names cannot, but the export writes any bytes a key
  // holds), signed with the directory's key around an object that defines its symbol. The
  // generated source is compiled into a program that prints the table's key parts, linked
  // against the exported library by the compiler that built lsjit.
  TempDir dir("cli_export_link");
  std::vector<CacheKey> keys;
  {
    KernelCache::Options o;
    o.directory = dir.path;
    o.quiet = true;
    KernelCache cache(o);
    keys.push_back(cache.get(trace_scaled(2.5), KernelMode::ResidualJacobian)->key);
    keys.push_back(cache.get(trace_two_vars(), KernelMode::Residual)->key);
  }
  const std::string odd = "odd \"name\" \\ ?\?= \t\n\x01\x7f\xc3\xa9 end\\";
  {
    const DiskCache disk(dir.path);
    DecodeResult real = read_entry(disk, keys[0].hash);
    REQUIRE(real.status == EntryStatus::Ok);
    DiskEntry e = *real.entry;
    auto parts = e.key.parts;
    parts[0].second = odd;
    e.key = make_cache_key(parts);
    e.symbol = kernel_symbol(e.key);
    const fs::path source = dir / "odd_kernel.cpp", object = dir / "odd_kernel.o";
    write_bytes(source, "extern \"C\" void " + e.symbol + "(const void*) {}\n");
    REQUIRE(std::system((std::string(LSJIT_TEST_CXX) + " -c -fPIC -o " + object.string() + " " + source.string()).c_str()) == 0);
    e.object_code = read_bytes(object);
    write_bytes(disk.entry_path(e.key.hash), encode_for(disk, e));
    keys.push_back(e.key);
  }
  const fs::path out = dir / "out";
  Run r = run("cache export --all --name odd --out " + out.string() + " --dir " + dir.path.string());
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);

  fs::create_directories(dir / "include");
  fs::create_symlink(LSJIT_SOURCE_DIR, dir / "include" / "lsjit");
  write_bytes(dir / "main.cpp",
              "#include \"odd.cpp\"\n#include <cstdio>\n"
              "// Stands in for lsjit's registry: only the table is under test here.\n"
              "std::size_t lsjit::compiler::register_linked_kernels(const LinkedKernel*, std::size_t n) { return n; }\n"
              "int main() {\n"
              "  if (register_odd() != 3) return 1;\n"
              "  for (const auto& k : kKernels) {\n"
              "    std::printf(\"%s %s %p\\n\", k.id, k.symbol, reinterpret_cast<void*>(k.function));\n"
              "    for (unsigned i = 0; i < 2 * k.part_count; ++i) std::fwrite(k.parts[i], 1, std::strlen(k.parts[i]) + 1, stdout);\n"
              "  }\n}\n");
  const fs::path program = dir / "program";
  const Run built = lsjit::testing::run_shell(
      std::string(LSJIT_TEST_CXX) + " -std=c++20 -I" + (dir / "include").string() + " -I" + out.string() + " " +
      (dir / "main.cpp").string() + " -include cstring -o " + program.string() + " " + (out / "libodd.a").string() +
      " -lmvec -lm 2>&1");
  CAPTURE(built.out);
  REQUIRE(built.exit_code == 0);
  const Run ran = lsjit::testing::run_shell(program.string());
  REQUIRE(ran.exit_code == 0);
  for (const CacheKey& k : keys) {
    CHECK(ran.out.find(k.id() + " " + kernel_symbol(k) + " 0x") != std::string::npos);  // linked: a real address
    std::string parts;
    for (const auto& [name, value] : k.parts) parts += name + '\0' + value + '\0';
    CHECK(ran.out.find(parts) != std::string::npos);
  }
  CHECK(ran.out.find(odd) != std::string::npos);
}

TEST_CASE("lsjit cache: a data entry is listed, shown, verified and gc'd - never exported") {
  Filled f("cli_data");
  const CacheKey data = make_cache_key({{"data", "supernodal_structure"}, {"blocks", "3"}});
  {
    KernelCache::Options o;
    o.directory = f.dir.path;
    KernelCache(o).store_data(data, std::string("\x01\0\0\0\x02\0\0\0\x00\0\0\0\x01\0\0\0", 16));
  }
  const std::string id = data.id().substr(0, 12);
  Run r = run("cache list" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(id + "  (data)") != std::string::npos);
  CHECK(r.out.find("supernodal_structure") != std::string::npos);

  r = run("cache show " + id + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("data      supernodal_structure, 16 bytes") != std::string::npos);
  CHECK(r.out.find("symbol") == std::string::npos);
  CHECK(r.out.find("IR of") == std::string::npos);
  r = run("cache show --json " + id + f.d());
  CHECK(r.out.find("\"data\": \"supernodal_structure\", \"data_size\": 16") != std::string::npos);

  r = run("cache verify" + f.d());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ok   " + id + "  (data) supernodal_structure (intact; a data entry: nothing to recompile)") !=
        std::string::npos);
  CHECK(r.out.find("4 entries, 4 ok, 0 bad") != std::string::npos);

  // --all exports the kernels alone; naming the data entry is an error.
  const fs::path out = f.dir / "exported";
  r = run("cache export --all --name k --out " + out.string() + f.d());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("(3 kernels)") != std::string::npos);
  r = run("cache export " + id + " --name k --out " + out.string() + f.d());
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("a data entry (supernodal_structure), not a kernel") != std::string::npos);

  // A damaged data entry is bad like any other.
  const fs::path path = DiskCache(f.dir.path).entry_path(data.hash);
  std::string bytes = read_bytes(path);
  bytes[40] ^= 1;
  write_bytes(path, bytes);
  r = run("cache verify" + f.d());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("BAD  " + id) != std::string::npos);
}
