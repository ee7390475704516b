#include "lsjit/compiler/cache/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include <sodium.h>

#include "lsjit/common/error.h"

namespace lsjit::compiler {
namespace fs = std::filesystem;

namespace {

constexpr size_t kHeaderSize = 8 + 4 + 8 + 8;
constexpr size_t kChecksumSize = 16;
static_assert(kAuthKeySize == crypto_generichash_KEYBYTES);
static_assert(kAuthTagSize == crypto_generichash_BYTES);
constexpr uint32_t kNumTimes = 7;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

uint64_t get_le(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

// Reads the payload; any read past its end sets `ok` to false.
struct Reader {
  std::string_view bytes;
  size_t at = 0;
  bool ok = true;
  uint64_t u(int n) {
    if (!ok || bytes.size() - at < static_cast<size_t>(n)) {
      ok = false;
      return 0;
    }
    const uint64_t v = get_le(bytes, at, n);
    at += n;
    return v;
  }
  std::string str() {
    const uint64_t n = u(8);
    if (!ok || bytes.size() - at < n) {
      ok = false;
      return {};
    }
    std::string s(bytes.substr(at, n));
    at += n;
    return s;
  }
};

Hash128 checksum(std::string_view bytes) {
  StableHasher h;
  h.add(bytes);
  return h.finish();
}

void init_sodium() {
  if (sodium_init() < 0) throw Error("kernel cache: libsodium failed to initialize");
}

std::array<unsigned char, kAuthTagSize> auth_tag(std::string_view bytes, const AuthKey& key) {
  init_sodium();
  std::array<unsigned char, kAuthTagSize> tag{};
  crypto_generichash(tag.data(), tag.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size(), key.data(), key.size());
  return tag;
}

bool is_hex_id(std::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// <32 hex>.lsjitk
bool is_entry_name(const std::string& name) {
  return name.size() == 32 + kEntryExtension.size() &&
         std::string_view(name).substr(32) == kEntryExtension &&
         is_hex_id(std::string_view(name).substr(0, 32));
}

// .<32 hex>.lsjitk.tmp.*
bool is_temp_name(const std::string& name) {
  const std::string_view n = name;
  const std::string tail = std::string(kEntryExtension) + ".tmp.";
  return n.size() > 1 + 32 + tail.size() && n[0] == '.' && is_hex_id(n.substr(1, 32)) &&
         n.substr(33, tail.size()) == tail;
}

std::string errno_text(int e) { return std::strerror(e); }

uint64_t process_random() {
  static const uint64_t r = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd() ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return r;
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: the rename is atomic either way
  ::close(fd);
}

// Whether the file starts with the cache's magic number (so `clear` removes only entries,
// not look-alike names with other content).
bool starts_with_magic(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char head[kDiskMagic.size()];
  const ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof head) && std::string_view(head, sizeof head) == kDiskMagic;
}

}  // namespace

std::string_view entry_status_name(EntryStatus status) {
  switch (status) {
    case EntryStatus::Ok: return "ok";
    case EntryStatus::Missing: return "missing";
    case EntryStatus::Unreadable: return "unreadable";
    case EntryStatus::NotAnEntry: return "not a cache entry";
    case EntryStatus::ForeignVersion: return "foreign format version";
    case EntryStatus::Truncated: return "truncated";
    case EntryStatus::Corrupt: return "corrupt";
    case EntryStatus::Unauthenticated: return "unauthenticated";
    case EntryStatus::Malformed: return "malformed";
    case EntryStatus::Untrusted: return "untrusted";
  }
  return "?";
}

std::string encode_entry(const DiskEntry& e, const AuthKey& key) {
  std::string payload;  // what a load reads: everything but the IR text
  put_str(payload, e.key.id());
  put_u32(payload, static_cast<uint32_t>(e.key.parts.size()));
  for (const auto& [name, value] : e.key.parts) {
    put_str(payload, name);
    put_str(payload, value);
  }
  put_str(payload, e.symbol);
  put_u32(payload, kNumTimes);
  for (double t : {e.times.trace_s, e.times.differentiate_s, e.times.simplify_s, e.times.llvm_ir_s,
                   e.times.optimize_s, e.times.codegen_s, e.times.link_s})
    put_u64(payload, std::bit_cast<uint64_t>(t));
  put_str(payload, e.object_code);

  std::string out;
  out.reserve(kHeaderSize + payload.size() + kAuthTagSize + e.ir_text.size() + kChecksumSize +
              kAuthTagSize);
  out.append(kDiskMagic);
  put_u32(out, kDiskFormatVersion);
  put_u64(out, payload.size());
  put_u64(out, e.ir_text.size());
  out.append(payload);
  const auto load_tag = auth_tag(out, key);
  out.append(reinterpret_cast<const char*>(load_tag.data()), load_tag.size());
  out.append(e.ir_text);
  const Hash128 sum = checksum(out);
  put_u64(out, sum.hi);
  put_u64(out, sum.lo);
  const auto tag = auth_tag(out, key);
  out.append(reinterpret_cast<const char*>(tag.data()), tag.size());
  return out;
}

namespace {

// The payload (without the IR text) into an entry; nullopt and `why` if it does not parse.
std::optional<DiskEntry> parse_payload(std::string_view payload, std::string& why) {
  Reader in{payload};
  DiskEntry e;
  const std::string id = in.str();
  const auto num_parts = static_cast<uint32_t>(in.u(4));
  for (uint32_t i = 0; in.ok && i < num_parts; ++i) {
    std::string name = in.str();
    std::string value = in.str();
    e.key.parts.emplace_back(std::move(name), std::move(value));
  }
  e.symbol = in.str();
  const auto num_times = static_cast<uint32_t>(in.u(4));
  double times[kNumTimes] = {};
  for (uint32_t i = 0; in.ok && i < num_times; ++i) {
    const double t = std::bit_cast<double>(in.u(8));
    if (i < kNumTimes) times[i] = t;
  }
  e.times = {times[0], times[1], times[2], times[3], times[4], times[5], times[6]};
  e.object_code = in.str();
  if (!in.ok) return why = "the payload ends early", std::nullopt;
  if (in.at != in.bytes.size()) return why = "bytes follow the payload's last field", std::nullopt;
  const std::optional<Hash128> hash = parse_hash_hex(id);
  if (!hash) return why = "the stored id is not 32 hex digits", std::nullopt;
  // The id is taken as stored, not recomputed: a reader that asked for this id compares
  // the parts, which is how a hash collision is told from a hit.
  e.key.hash = *hash;
  return e;
}

bool tag_matches(std::string_view covered, const char* stored, const AuthKey& key) {
  const auto tag = auth_tag(covered, key);
  return sodium_memcmp(tag.data(), stored, kAuthTagSize) == 0;
}

}  // namespace

DecodeResult decode_entry(std::string_view bytes, const AuthKey* key, DecodeScope scope) {
  DecodeResult r;
  auto fail = [&](EntryStatus s, std::string message) {
    r.status = s;
    r.message = std::move(message);
    return r;
  };
  if (bytes.size() < kDiskMagic.size() || bytes.substr(0, kDiskMagic.size()) != kDiskMagic)
    return fail(bytes.size() < kDiskMagic.size() && kDiskMagic.substr(0, bytes.size()) == bytes
                    ? EntryStatus::Truncated
                    : EntryStatus::NotAnEntry,
                bytes.size() < kDiskMagic.size() ? "the file ends inside the magic number"
                                                 : "the file does not start with the lsjit "
                                                   "kernel cache magic number");
  // The version first, so that a version 2 file (a shorter header) says so.
  if (bytes.size() < 12) return fail(EntryStatus::Truncated, "the file ends inside its header");
  const auto version = static_cast<uint32_t>(get_le(bytes, 8, 4));
  if (version != kDiskFormatVersion)
    return fail(EntryStatus::ForeignVersion, "format version " + std::to_string(version) +
                                                 ", this lsjit reads version " +
                                                 std::to_string(kDiskFormatVersion));
  if (bytes.size() < kHeaderSize) return fail(EntryStatus::Truncated, "the file ends inside its header");
  const uint64_t payload_size = get_le(bytes, 12, 8), ir_size = get_le(bytes, 20, 8);
  constexpr uint64_t kFixed = kHeaderSize + kAuthTagSize + kChecksumSize + kAuthTagSize;
  uint64_t announced = 0;  // the file size the header announces
  const bool overflow = __builtin_add_overflow(kFixed, payload_size, &announced) ||
                        __builtin_add_overflow(announced, ir_size, &announced);
  if (overflow || announced > bytes.size())
    return fail(EntryStatus::Truncated,
                "the header announces " +
                    (overflow ? std::string("more than 2^64") : std::to_string(announced)) +
                    " bytes, the file has " + std::to_string(bytes.size()));
  if (announced < bytes.size())
    return fail(EntryStatus::Corrupt,
                std::to_string(bytes.size() - announced) + " bytes follow the authentication tag");
  const size_t payload_end = kHeaderSize + payload_size;      // the load tag follows
  const size_t ir_begin = payload_end + kAuthTagSize;
  const size_t checksum_at = ir_begin + ir_size, tag_at = checksum_at + kChecksumSize;
  auto checksum_ok = [&] {
    const Hash128 stored{get_le(bytes, checksum_at, 8), get_le(bytes, checksum_at + 8, 8)};
    return checksum(bytes.substr(0, checksum_at)) == stored;
  };
  // A whole decode checks the checksum first and both tags; a load only the load tag, the
  // bytes it uses, and the checksum only when that tag fails, to tell damage (Corrupt)
  // from someone else's entry as a whole decode would.
  const bool whole = scope == DecodeScope::Whole;
  if (whole && !checksum_ok()) return fail(EntryStatus::Corrupt, "checksum mismatch");
  const bool trusted = key && tag_matches(bytes.substr(0, payload_end), bytes.data() + payload_end, *key) &&
                       (!whole || tag_matches(bytes.substr(0, tag_at), bytes.data() + tag_at, *key));
  if (!trusted) {
    if (!whole && !checksum_ok()) return fail(EntryStatus::Corrupt, "checksum mismatch");
    return fail(EntryStatus::Unauthenticated,
                key ? "its authentication tag was not made with this user's key (written by "
                      "someone else, or for another key)"
                    : "the directory has no key file " + std::string(kAuthKeyFileName) +
                          ", so no entry in it can be authenticated");
  }
  std::string why;
  std::optional<DiskEntry> e = parse_payload(bytes.substr(kHeaderSize, payload_size), why);
  if (!e) return fail(EntryStatus::Malformed, why);
  if (whole) e->ir_text = std::string(bytes.substr(ir_begin, ir_size));
  r.status = EntryStatus::Ok;
  r.entry = std::move(e);
  return r;
}

std::optional<fs::path> default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (const std::string d = env("LSJIT_CACHE_DIR"); !d.empty()) return fs::path(d);
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty() && x[0] == '/')
    return fs::path(x) / "lsjit";
  if (const std::string h = env("HOME"); !h.empty()) return fs::path(h) / ".cache" / "lsjit";
  return std::nullopt;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number(text.substr(0, i));
  if (number.empty() || number == ".") return std::nullopt;
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  double scale = 1;
  if (unit.empty()) scale = 1;
  else if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;
  double value = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), value);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size()) return std::nullopt;
  const double bytes = value * scale;
  if (!(bytes >= 0) || bytes > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

std::string format_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

DiskCache::DiskCache(fs::path directory) : dir_(std::move(directory)) {}

fs::path DiskCache::entry_path(const Hash128& id) const {
  return dir_ / (id.hex() + std::string(kEntryExtension));
}

bool DiskCache::has_entries() const {
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (const dirent* e = ::readdir(d))
    if (is_entry_name(e->d_name)) {
      found = true;
      break;
    }
  ::closedir(d);
  return found;
}

DirectoryCheck DiskCache::check_directory() const {
  const std::string d = dir_.string();
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return {DirectoryStatus::Missing, "kernel cache directory '" + d + "' does not exist"};
    if (e == ENOTDIR)
      return {DirectoryStatus::NotADirectory,
              "kernel cache directory '" + d + "': a parent of it is not a directory; choose another "
              "LSJIT_CACHE_DIR"};
    return {DirectoryStatus::Unreadable, "kernel cache directory '" + d + "': " + errno_text(e)};
  }
  if (!S_ISDIR(st.st_mode))
    return {DirectoryStatus::NotADirectory,
            "kernel cache directory '" + d + "' is not a directory; choose another LSJIT_CACHE_DIR"};
  if (st.st_uid != ::geteuid())
    return {DirectoryStatus::Untrusted,
            "kernel cache directory '" + d + "' is owned by another user (uid " +
                std::to_string(st.st_uid) + "), who could plant code in it; choose another "
                "LSJIT_CACHE_DIR"};
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return {DirectoryStatus::Untrusted,
            "kernel cache directory '" + d + "' is writable by " +
                ((st.st_mode & S_IWOTH) ? "others" : "its group") +
                ", who could plant code in it; run `chmod 700 " + d +
                "` or choose another LSJIT_CACHE_DIR"};
  if (::access(dir_.c_str(), R_OK | X_OK) != 0)
    return {DirectoryStatus::Unreadable, "kernel cache directory '" + d + "': " + errno_text(errno)};
  return {DirectoryStatus::Trusted, ""};
}

namespace {

// Reads the key file, refusing anything but a regular 0600 file of the user of exactly the
// key's size. nullopt with an empty `refusal` when there is none.
std::optional<AuthKey> read_key_file(const fs::path& path, std::string& refusal) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  const std::string fix = "; remove it (the cache makes a new key and rewrites its entries) or "
                          "choose another LSJIT_CACHE_DIR";
  if (fd < 0) {
    const int e = errno;
    if (e != ENOENT)
      refusal = "kernel cache key file '" + path.string() + "' cannot be opened (" +
                (e == ELOOP ? std::string("it is a symbolic link") : errno_text(e)) + ")" + fix;
    return std::nullopt;
  }
  struct stat st {};
  AuthKey key{};
  ssize_t n = -1;
  if (::fstat(fd, &st) != 0) refusal = errno_text(errno);
  else if (!S_ISREG(st.st_mode)) refusal = "it is not a regular file";
  else if (st.st_uid != ::geteuid()) refusal = "it is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  else if ((st.st_mode & 07777) != 0600) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refusal = std::string("its mode is ") + mode + ", not 0600";
  } else if (st.st_size != static_cast<off_t>(kAuthKeySize))
    refusal = "it has " + std::to_string(st.st_size) + " bytes, not " + std::to_string(kAuthKeySize);
  else if ((n = ::read(fd, key.data(), key.size())) != static_cast<ssize_t>(key.size()))
    refusal = n < 0 ? errno_text(errno) : "it is shorter than it says";
  ::close(fd);
  if (!refusal.empty()) {
    refusal = "kernel cache key file '" + path.string() + "' is refused: " + refusal + fix;
    return std::nullopt;
  }
  return key;
}

// Makes a new key file atomically: a 0600 temporary file (O_EXCL|O_NOFOLLOW) gets the key
// and is then linked to the key's name, which fails if another process made one first (its
// key is then the one read back).
void create_key_file(const fs::path& dir, const fs::path& path) {
  AuthKey key{};
  init_sodium();
  randombytes_buf(key.data(), key.size());
  // Unique per thread too: two threads of one process may both find no key.
  static std::atomic<uint64_t> key_attempts{0};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%016llx.%llu", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(process_random()),
                static_cast<unsigned long long>(key_attempts.fetch_add(1)));
  const fs::path temp = dir / (std::string(kAuthKeyFileName) + suffix);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw Error("kernel cache directory '" + dir.string() + "': cannot create its key file: " +
                errno_text(errno));
  const bool written = ::fchmod(fd, 0600) == 0 &&  // the umask may have removed bits; not added any
                       ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) &&
                       ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  sodium_memzero(key.data(), key.size());
  if (!written || (::link(temp.c_str(), path.c_str()) != 0 && errno != EEXIST)) {
    const int e2 = written ? errno : e;
    ::unlink(temp.c_str());
    throw Error("kernel cache directory '" + dir.string() + "': cannot create its key file: " +
                errno_text(e2));
  }
  ::unlink(temp.c_str());
  fsync_dir(dir);
}

}  // namespace

KeyResult DiskCache::auth_key(bool create) const {
  KeyResult r;
  DirectoryCheck check = check_directory();
  if (check.status == DirectoryStatus::Missing && create) {
    std::error_code ec;
    if (dir_.has_parent_path()) fs::create_directories(dir_.parent_path(), ec);
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error("kernel cache directory '" + dir_.string() + "': cannot create it: " + errno_text(errno));
    check = check_directory();
  }
  if (check.status == DirectoryStatus::Missing) return r;
  if (check.status != DirectoryStatus::Trusted) {
    r.refusal = check.message;
    return r;
  }
  const fs::path path = dir_ / kAuthKeyFileName;
  r.key = read_key_file(path, r.refusal);
  if (!r.key && r.refusal.empty() && create) {
    create_key_file(dir_, path);
    r.key = read_key_file(path, r.refusal);
  }
  return r;
}

DecodeResult DiskCache::read_file(const fs::path& path, const AuthKey* key, DecodeScope scope) {
  DecodeResult r;
  // O_NOFOLLOW: a symlink in an entry's place is refused, not followed; O_NONBLOCK: a FIFO
  // planted there does not hang the open (fstat then refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    r.status = e == ENOENT || e == ENOTDIR ? EntryStatus::Missing
               : e == ELOOP                ? EntryStatus::Untrusted
                                           : EntryStatus::Unreadable;
    r.message = e == ELOOP ? "it is a symbolic link" : errno_text(e);
    return r;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    const int e = errno;
    r.status = EntryStatus::Untrusted;
    r.message = st.st_mode == 0            ? errno_text(e)
                : !S_ISREG(st.st_mode)     ? std::string("it is not a regular file")
                                           : "it is owned by another user (uid " + std::to_string(st.st_uid) + ")";
    ::close(fd);
    return r;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    ::close(fd);
    r.status = EntryStatus::Malformed;
    r.message = "it is " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(kMaxEntryBytes) + " an entry may have";
    return r;
  }
  // Straight into the string, sized by fstat; a file that grew since is read on to its
  // end, and refused if that passes the limit.
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t filled = 0;
  char more[4096];
  for (;;) {
    const bool sized = filled < bytes.size();
    const ssize_t n = sized ? ::read(fd, bytes.data() + filled, bytes.size() - filled) : ::read(fd, more, sizeof more);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      r.status = EntryStatus::Unreadable;
      r.message = errno_text(e);
      return r;
    }
    if (n == 0) break;
    if (!sized) {
      if (filled + static_cast<size_t>(n) > kMaxEntryBytes) {
        ::close(fd);
        r.status = EntryStatus::Malformed;
        r.message = "it grew past the " + std::to_string(kMaxEntryBytes) + " bytes an entry may have while it was read";
        return r;
      }
      bytes.append(more, static_cast<size_t>(n));
    }
    filled += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(filled);  // shorter than fstat said: it shrank meanwhile
  DecodeResult r2 = decode_entry(bytes, key, scope);
  const std::string name = path.filename().string();
  if (r2.status == EntryStatus::Ok && is_entry_name(name) && name.substr(0, 32) != r2.entry->key.id()) {
    r2.status = EntryStatus::Malformed;
    r2.message = "the stored id " + r2.entry->key.id() + " is not the file's name";
    r2.entry.reset();
  }
  return r2;
}

DecodeResult DiskCache::read(const Hash128& id, const AuthKey* key) const {
  const fs::path path = entry_path(id);
  DecodeResult r = read_file(path, key, DecodeScope::Load);
  if (r.status == EntryStatus::Ok) ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);  // LRU
  return r;
}

// Writes `bytes` to a new temporary file beside `target` and renames it over `target`.
// Returns 0, or the errno of a failed rename (the temporary file removed); throws
// lsjit::Error for a failure to create, write or sync the temporary file.
int DiskCache::write_through_temporary(const fs::path& target, const std::string& id, const std::string& bytes) const {
  auto fail = [&](const std::string& what, int e) {
    throw Error("kernel cache directory '" + dir_.string() + "': " + what + ": " + errno_text(e));
  };
  static std::atomic<uint64_t> counter{0};
  int fd = -1;
  fs::path temp;
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, "%ld.%016llx", static_cast<long>(::getpid()),
                  static_cast<unsigned long long>(process_random() + counter.fetch_add(1) * 0x9e3779b97f4a7c15ull));
    temp = dir_ / ("." + id + std::string(kEntryExtension) + ".tmp." + suffix);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && (errno != EEXIST || attempt > 100)) fail("cannot create a file in it", errno);
  }
  auto abandon = [&](const std::string& what) {
    const int e = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    fail(what, e);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write an entry");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("cannot sync an entry");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail("cannot write an entry", e);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    return e;
  }
  return 0;
}

void DiskCache::write(const DiskEntry& entry, const AuthKey& key) const {
  auto fail = [&](const std::string& what, int e) {
    throw Error("kernel cache directory '" + dir_.string() + "': " + what + ": " + errno_text(e));
  };
  const fs::path target = entry_path(entry.key.hash);
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw EntryBlocked("kernel cache entry '" + target.string() +
                       "' is taken by something that is not a regular file; that kernel is not "
                       "stored (remove it to let the cache store it)");
  const std::string bytes = encode_entry(entry, key);
  if (bytes.size() > kMaxEntryBytes)
    throw EntryBlocked("kernel cache entry '" + target.string() + "' would be " + std::to_string(bytes.size()) +
                       " bytes, more than the " + std::to_string(kMaxEntryBytes) +
                       " an entry may have; that kernel is not stored");
  // A temporary file that someone removed before the rename (an old `lsjit cache clear`
  // racing this writer, or a user's rm) costs one more try, not the disk for good.
  for (int attempt = 0;; ++attempt) {
    const int e = write_through_temporary(target, entry.key.id(), bytes);
    if (e == 0) break;
    if (e == ENOENT && attempt == 0) continue;
    if (e == EISDIR || e == ENOTEMPTY || e == EEXIST)  // a directory appeared in its place
      throw EntryBlocked("kernel cache entry '" + target.string() + "' cannot be replaced (" +
                         errno_text(e) + "); that kernel is not stored");
    fail("cannot rename an entry into place", e);
  }
  fsync_dir(dir_);
}

std::vector<DiskCache::FileInfo> DiskCache::list() const {
  std::vector<FileInfo> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_entry_name(name)) continue;
    std::error_code e0, e1, e2;
    const fs::file_status status = it->symlink_status(e0);
    if (e0) continue;  // removed meanwhile
    if (!fs::is_regular_file(status)) {
      out.push_back({it->path(), name.substr(0, 32), 0, fs::file_time_type::clock::now(), false});
      continue;
    }
    const uint64_t size = it->file_size(e1);
    const auto mtime = it->last_write_time(e2);
    if (e1 || e2) continue;  // removed meanwhile
    out.push_back({it->path(), name.substr(0, 32), size, mtime});
  }
  std::sort(out.begin(), out.end(), [](const FileInfo& a, const FileInfo& b) { return a.id < b.id; });
  return out;
}

std::vector<DiskCache::FileInfo> DiskCache::find(std::string_view prefix) const {
  std::string p(prefix);
  for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<FileInfo> out;
  for (FileInfo& f : list())
    if (f.id.compare(0, p.size(), p) == 0) out.push_back(std::move(f));
  return out;
}

DiskCache::FileInfo DiskCache::find_one(std::string_view prefix) const {
  const std::string p(prefix);
  if (p.empty() || p.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw Error("'" + printable(p) + "' is not an entry id (hex digits)");
  std::vector<FileInfo> found = find(p);
  if (found.empty()) throw Error("no entry id starts with '" + p + "' in " + printable(dir_.string(), std::string::npos));
  if (found.size() > 1) {
    std::string message = "'" + p + "' names " + std::to_string(found.size()) + " entries; give more digits:";
    for (size_t i = 0; i < found.size() && i < 5; ++i) message += " " + found[i].id.substr(0, 16);
    throw Error(message + (found.size() > 5 ? " ..." : ""));
  }
  return std::move(found[0]);
}

DiskCache::RemoveResult DiskCache::gc(uint64_t max_bytes) const {
  RemoveResult r;
  std::vector<FileInfo> files = list();
  std::erase_if(files, [](const FileInfo& f) { return !f.regular; });  // no entries: `clear` removes them
  std::sort(files.begin(), files.end(), [](const FileInfo& a, const FileInfo& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.id < b.id;
  });
  uint64_t total = 0;
  for (const FileInfo& f : files) total += f.size;
  for (const FileInfo& f : files) {
    std::error_code ec;
    if (total > max_bytes && fs::remove(f.path, ec) && !ec) {
      total -= f.size;
      ++r.removed;
      r.removed_bytes += f.size;
    } else {
      ++r.kept;
      r.kept_bytes += f.size;
    }
  }
  // Temporary files of writers that died.
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - kTemporaryFileLifetime;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_temp_name(it->path().filename().string())) continue;
    std::error_code e1, e2, e3;
    const auto mtime = it->last_write_time(e1);
    const uint64_t size = it->file_size(e2);
    if (!e1 && !e2 && mtime < cutoff && fs::remove(it->path(), e3) && !e3) {
      ++r.removed;
      r.removed_bytes += size;
    }
  }
  return r;
}

DiskCache::RemoveResult DiskCache::clear() const {
  RemoveResult r;
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - kTemporaryFileLifetime;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e;
    const bool regular = !it->is_symlink(e) && it->is_regular_file(e);
    // A symlink (removed, never followed), FIFO, socket or device in an entry's place; a
    // directory there may hold a user's files and is left alone.
    if (!regular && is_entry_name(name) && !fs::is_directory(it->symlink_status(e))) {
      doomed.push_back(it->path());
      continue;
    }
    if (!regular) continue;
    // A young temporary file belongs to a writer still at work: removing it would make
    // that writer's rename fail.
    const auto mtime = it->last_write_time(e);
    if (is_temp_name(name) && !e && mtime < cutoff) doomed.push_back(it->path());
    else if (is_entry_name(name) && starts_with_magic(it->path())) doomed.push_back(it->path());
  }
  for (const fs::path& p : doomed) {
    std::error_code e1, e2;
    const uint64_t size = fs::is_regular_file(fs::symlink_status(p, e1)) ? fs::file_size(p, e1) : 0;
    if (fs::remove(p, e2) && !e2) {
      ++r.removed;
      r.removed_bytes += e1 ? 0 : size;
    } else {
      ++r.kept;
      r.kept_bytes += e1 ? 0 : size;
    }
  }
  return r;
}

}  // namespace lsjit::compiler
