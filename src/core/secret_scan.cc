#include "core/secret_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "sys/unique_fd.h"

namespace confine {
namespace {

constexpr std::array kSecretFileNames = {std::string_view{".env"}, std::string_view{".netrc"},
                                         std::string_view{".pgpass"}};
constexpr std::array kSecretFilePrefixes = {std::string_view{".env."}, std::string_view{"id_rsa"},
                                            std::string_view{"id_dsa"}, std::string_view{"id_ecdsa"},
                                            std::string_view{"id_ed25519"}};
constexpr std::array kSecretFileSuffixes = {std::string_view{".pem"}};
constexpr std::array kSecretDirNames = {std::string_view{"secrets"}};
constexpr std::array kSkippedDirNames = {
    std::string_view{".git"},         std::string_view{"node_modules"}, std::string_view{".venv"},
    std::string_view{"venv"},         std::string_view{"__pycache__"},  std::string_view{".tox"},
    std::string_view{".mypy_cache"},  std::string_view{".pytest_cache"}, std::string_view{".gradle"},
    std::string_view{".cache"},       std::string_view{"target"},       std::string_view{".next"},
    std::string_view{"bower_components"}, std::string_view{".hg"},     std::string_view{".svn"},
};

template <typename Table>
bool in(const Table& t, std::string_view name) {
  return std::find(t.begin(), t.end(), name) != t.end();
}

struct Walker {
  const ScanLimits& limits;
  SecretScan& out;

  void walk(int dirfd, const std::string& rel, int depth) {
    // getdents64 directly: no per-entry allocation or stat, d_type says what each entry is.
    alignas(8) char buf[32768];
    for (;;) {
      auto n = ::getdents64(dirfd, buf, sizeof buf);
      if (n <= 0) return;
      for (decltype(n) off = 0; off < n;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf + off);
        off += d->d_reclen;
        if (++out.entries_seen > limits.max_entries) {
          out.truncated = true;
          return;
        }
        visit(dirfd, rel, depth, d->d_name, d->d_type);
      }
    }
  }

  void visit(int dirfd, const std::string& rel, int depth, std::string_view name, unsigned char type) {
    if (name == "." || name == "..") return;
    if (type == DT_UNKNOWN) type = type_of(dirfd, name);
    std::string path = rel.empty() ? std::string(name) : rel + "/" + std::string(name);
    if (type == DT_DIR) {
      if (is_secret_dir_name(name)) {
        out.dirs.push_back(std::move(path));
        return;
      }
      if (is_skipped_dir_name(name)) return;
      if (depth >= limits.max_depth) {
        out.truncated = true;
        return;
      }
      sys::UniqueFd sub(::openat(dirfd, std::string(name).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.valid()) walk(sub.get(), path, depth + 1);
    } else if (type == DT_REG && is_secret_file_name(name)) {
      out.files.push_back(std::move(path));
    }
  }

  static unsigned char type_of(int dirfd, std::string_view name) {
    struct stat st {};
    if (::fstatat(dirfd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
    if (S_ISDIR(st.st_mode)) return DT_DIR;
    if (S_ISREG(st.st_mode)) return DT_REG;
    return DT_UNKNOWN;
  }
};

}  // namespace

bool is_secret_file_name(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.starts_with(p); };
  auto ends = [&](std::string_view s) { return name.size() > s.size() && name.ends_with(s); };
  return in(kSecretFileNames, name) ||
         std::any_of(kSecretFilePrefixes.begin(), kSecretFilePrefixes.end(), starts) ||
         std::any_of(kSecretFileSuffixes.begin(), kSecretFileSuffixes.end(), ends);
}

bool is_secret_dir_name(std::string_view name) { return in(kSecretDirNames, name); }
bool is_skipped_dir_name(std::string_view name) { return in(kSkippedDirNames, name); }

SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits) {
  SecretScan out;
  sys::UniqueFd root(::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return out;
  Walker{limits, out}.walk(root.get(), "", 0);
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  return out;
}

}  // namespace confine
