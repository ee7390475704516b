// The on-disk kernel cache: one file per compiled kernel in one directory, named
// <id>.lsjitk, where <id> is the 32-hex-digit hash of the cache key (cache_key.h).
//
// File format, version 3 (all integers little endian; str = u64 byte length + bytes):
//   offset 0   8 bytes  magic "\x89LSJITKC"
//          8   u32      format version (kDiskFormatVersion)
//         12   u64      payload size P
//         20   u64      IR text size I
//         28   P bytes  payload, everything a load uses:
//                         str  key id (32 hex digits; the file's name. Readers take it as
//                              the key's hash and compare the parts they asked for, so a
//                              hash collision shows as an id whose parts differ; `lsjit
//                              cache verify` also checks that it is hash_key_parts(parts))
//                         u32  number of key parts, then per part: str name, str value
//                         str  kernel symbol
//                         u32  number of stage times (7), then that many f64 (bit pattern):
//                              trace, differentiate, simplify, llvm_ir, optimize, codegen,
//                              link seconds of the compile that made the entry
//                         str  object code (a relocatable ELF object for the host)
//     28 + P   32 bytes load tag: keyed BLAKE2b-256 (libsodium crypto_generichash) over
//                       bytes [0, 28 + P), keyed with the directory's AuthKey
//     60 + P   I bytes  IR text of the mode graph (ir/printer.h)
// 60 + P + I   16 bytes checksum: StableHasher over bytes [0, 60 + P + I) as one string,
//                       Hash128 hi then lo (detects accidents; anyone can compute it)
// 76 + P + I   32 bytes tag: keyed BLAKE2b-256 over bytes [0, 76 + P + I)
// and nothing after it. A whole decode (DecodeScope::Whole: `lsjit cache show` and
// `verify`, which recompiles the IR) checks, in this order: magic, version, size (truncated
// or trailing bytes), checksum, both tags (in constant time), payload structure and the id.
// A load (DecodeScope::Load: DiskCache::read, on the solve path) checks magic, version,
// size and the load tag, and neither reads nor hashes the IR text, which is most of an
// entry's bytes (an SE3 between's normal-equations entry: 67 of 95 KB); only when its tag
// fails does it compute the checksum, to tell damage (Corrupt) from someone else's entry
// (Unauthenticated). So damage to the IR, the checksum or the last tag is found by `lsjit
// cache verify`, not by a load, which does not use those bytes. Any failure is a bad
// entry, never loaded. Version 1 (no tag) and 2 (one tag over everything) files are
// ForeignVersion.
//
// Trust (docs/compiler.md, "Trust"): the directory must be a directory owned by the
// effective user and not writable by group or others; it is created with mode 0700. The
// key is 32 random bytes in <dir>/.lsjit-auth-key, a regular file owned by the user with
// mode 0600 and exactly 32 bytes, created atomically (a 0600 O_EXCL temporary file linked
// into place). Entry files are opened with O_NOFOLLOW and checked on the open descriptor:
// a regular file owned by the user, else EntryStatus::Untrusted.
//
// Writes are atomic: the bytes go to a uniquely named temporary file in the same
// directory (.<id>.lsjitk.tmp.<pid>.<random>), which is fsync'ed and renamed over the
// entry's name; then the directory is fsync'ed. A reader sees the old file, the new file
// or none, never a part; two processes writing one key both succeed (the last rename
// wins, and both wrote the same kernel).
//
// Hits refresh the file's modification time, so gc() removes the least recently used.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/compile_options.h"

namespace lsjit::compiler {

inline constexpr uint32_t kDiskFormatVersion = 3;
inline constexpr std::string_view kDiskMagic{"\x89LSJITKC", 8};
inline constexpr std::string_view kEntryExtension = ".lsjitk";
inline constexpr std::string_view kAuthKeyFileName = ".lsjit-auth-key";
inline constexpr size_t kAuthKeySize = 32;
inline constexpr size_t kAuthTagSize = 32;
// The largest entry file the cache reads or writes. A read allocates the file's size
// before the tag is checked, so a file past this (a damaged or stray one) is refused
// unread instead of sizing an allocation. The largest built-in entry, se3_between's
// normal equations with their IR text, is about 95 KB.
inline constexpr uint64_t kMaxEntryBytes = uint64_t{64} << 20;
// A writer's temporary file (.<id>.lsjitk.tmp.*) lives for the milliseconds of one write;
// `gc` and `clear` remove only those older than this, which a writer that died left.
inline constexpr std::chrono::minutes kTemporaryFileLifetime{10};

// The per-directory secret that authenticates entries.
using AuthKey = std::array<unsigned char, kAuthKeySize>;

struct DiskEntry {
  CacheKey key;
  std::string symbol;
  StageTimes times;
  std::string ir_text;      // the mode graph's IR text (empty after a DecodeScope::Load)
  std::string object_code;
};

std::string encode_entry(const DiskEntry& entry, const AuthKey& key);

enum class EntryStatus {
  Ok,
  Missing,         // no such file
  Unreadable,      // the file exists but cannot be read (permissions, I/O error)
  NotAnEntry,      // wrong magic
  ForeignVersion,  // another format version
  Truncated,       // shorter than its header says
  Corrupt,         // checksum mismatch or trailing bytes
  Unauthenticated, // checksum fine but the tag is not the one `key` makes (or no key):
                   // written by someone without the user's key; never loaded
  Malformed,       // authenticated but the payload does not parse, or the stored id is not
                   // the file's name
  Untrusted,       // not a regular file owned by the effective user (a symlink, a
                   // directory, another user's file); not read
};
std::string_view entry_status_name(EntryStatus status);

struct DecodeResult {
  EntryStatus status = EntryStatus::Missing;
  std::string message;             // why, for anything but Ok
  std::optional<DiskEntry> entry;  // when Ok
};
// What a decode checks and returns (see the format above): Whole, every byte and the IR
// text; Load, what a kernel load uses (the entry's ir_text stays empty).
enum class DecodeScope { Whole, Load };
// `key` nullptr: no key exists, so nothing can be authenticated (Unauthenticated).
DecodeResult decode_entry(std::string_view bytes, const AuthKey* key,
                          DecodeScope scope = DecodeScope::Whole);

// The directory the cache uses unless told otherwise: $LSJIT_CACHE_DIR if set and not
// empty, else $XDG_CACHE_HOME/lsjit if that is an absolute path, else $HOME/.cache/lsjit;
// nullopt if none of these is set.
std::optional<std::filesystem::path> default_cache_dir();

// "1048576", "512K", "100M", "2G", "1.5G" (binary units, K = 1024; a trailing B or iB is
// accepted: "100MB", "100MiB"). nullopt if it does not parse.
std::optional<uint64_t> parse_size(std::string_view text);
std::string format_size(uint64_t bytes);  // "12.3 MiB"

enum class DirectoryStatus {
  Trusted,
  Missing,        // nothing at the path (the cache creates it on its first write)
  NotADirectory,
  Unreadable,     // stat or opening it failed (permissions of a parent, I/O error)
  Untrusted,      // owned by another user, or writable by group or others
};
struct DirectoryCheck {
  DirectoryStatus status = DirectoryStatus::Missing;
  std::string message;  // for anything but Trusted: what is wrong, naming the path, and the fix
};

// The key of a trusted directory. `key` is set on success; otherwise `refusal` says why the
// directory or key file is refused (with the fix), or is empty when there is simply no key
// yet (the directory or its key file does not exist and creation was not asked for).
struct KeyResult {
  std::optional<AuthKey> key;
  std::string refusal;
};

// An entry's path is occupied by something the cache will not replace (a directory, ...):
// that key cannot be stored, every other key can.
struct EntryBlocked : Error {
  using Error::Error;
};

class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path directory);  // no I/O
  const std::filesystem::path& directory() const { return dir_; }
  std::filesystem::path entry_path(const Hash128& id) const;

  DirectoryCheck check_directory() const;
  // Whether the directory lists at least one entry file, by name alone (nothing is read or
  // checked): one readdir pass that stops at the first. False for a missing or unreadable
  // directory.
  bool has_entries() const;
  // check_directory, then the key file. With `create`, a missing directory is created
  // (mode 0700, parents with the default mode) and a missing key file is made.
  KeyResult auth_key(bool create) const;

  // Reads and checks the entry `id` against `key` for a load (DecodeScope::Load: no IR
  // text). On Ok, refreshes its modification time.
  DecodeResult read(const Hash128& id, const AuthKey* key) const;
  // Opens with O_NOFOLLOW, checks ownership, type and size (kMaxEntryBytes) on the
  // descriptor, reads the file whole, then decodes.
  static DecodeResult read_file(const std::filesystem::path& path, const AuthKey* key,
                                DecodeScope scope = DecodeScope::Whole);
  // Writes atomically (see above), tagged with `key` (from auth_key(true)). Throws
  // EntryBlocked if the entry's name is taken by something that is not a regular file or
  // the encoded entry is larger than kMaxEntryBytes, and
  // lsjit::Error (naming the directory and the system's reason) for any other failure.
  void write(const DiskEntry& entry, const AuthKey& key) const;

  struct FileInfo {
    std::filesystem::path path;
    std::string id;  // from the name
    uint64_t size = 0;  // 0 for what is not a regular file
    std::filesystem::file_time_type mtime;
    // False for what has an entry's name but is not a regular file (a symlink, never
    // followed, a FIFO, a directory): no entry, and read_file() refuses it, so that
    // `verify` reports it as bad and `clear` removes it.
    bool regular = true;
  };
  // Everything named <32 hex digits>.lsjitk (regular or not, see FileInfo), by id. Empty if
  // the directory does not exist.
  std::vector<FileInfo> list() const;
  // The entries whose id starts with `prefix` (case-insensitive).
  std::vector<FileInfo> find(std::string_view prefix) const;
  // The one entry whose id starts with `prefix`. Throws lsjit::Error when `prefix` is not
  // hex digits, names no entry, or names several (listing up to five, "give more digits").
  FileInfo find_one(std::string_view prefix) const;

  struct RemoveResult {
    size_t removed = 0;
    uint64_t removed_bytes = 0;
    size_t kept = 0;
    uint64_t kept_bytes = 0;
  };
  // Removes least recently used entries (oldest modification time first) until the total
  // size of entries is at most `max_bytes`, and temporary files older than
  // kTemporaryFileLifetime (left by a writer that died).
  RemoveResult gc(uint64_t max_bytes) const;
  // Removes every entry file (a regular file with an entry's name that starts with the
  // cache magic), whatever else but a directory has an entry's name (a symlink, never
  // followed, a FIFO, a socket planted there), and the temporary files older than kTemporaryFileLifetime; nothing
  // else. A younger temporary file belongs to a writer at work and is left to it.
  RemoveResult clear() const;

 private:
  int write_through_temporary(const std::filesystem::path& target, const std::string& id,
                              const std::string& bytes) const;
  std::filesystem::path dir_;
};

}  // namespace lsjit::compiler
