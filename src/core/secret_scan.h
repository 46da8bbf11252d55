// Finds the files inside the workspace that are masked by default (the names in secrets/default.toml, see
// core/secret_names.h), with a bounded walk so start-up stays fast on big repositories, and a per-directory cache
// (git's untracked-cache idea) so a repeated run only re-reads directories whose entries changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/secret_names.h"

namespace confine {

struct ScanLimits {
  // What is masked and which directories are walked only for keys (secrets/default.toml, as changed by profiles
  // and flags). Part of the cache's header: a cache made with other names is not reused.
  const SecretNames* names = &default_secret_names();
  // Deep enough for Java and Go trees: the scan also finds where git would find a repository after a run, so a
  // limit is a place a repository could hide (reported, never silent).
  int max_depth = 64;                  // directory levels below the workspace root
  std::size_t max_entries = 1'000'000;  // directory entries examined before giving up (reported, never silent)
  std::int64_t racy_seconds = 2;     // a directory changed this recently is re-read next time (coarse ctimes)
  unsigned readers = 0;              // threads that list and stat directories: 0 = one per core, at most 4
};

// A name the sandbox is to find masked, as it was when the scan looked at it. The mount checks the name still is
// this inode of this type: a rename or a replacement between the scan and the mount fails closed, never masks
// something else while the secret stays readable under another name.
struct MaskTarget {
  std::string path;        // relative to the scanned directory
  std::uint64_t ino = 0;
  std::uint32_t type = 0;  // S_IFREG, S_IFDIR or S_IFLNK
};

struct SecretScan {
  std::vector<std::string> files;  // relative to the workspace
  std::vector<std::string> dirs;   // relative to the workspace
  std::vector<std::string> links;  // symlinks with a secret name, relative (masked, and what they point to)
  // Directories the walk was told of but could not find when it came to read them, or that changed while it read
  // them: the tree moved during the walk, so what it found may miss a secret (the caller walks again).
  std::vector<std::string> vanished;
  // Filled by resolve_masks: every name to mask, and the secret files with hard links the walk did not all find.
  std::vector<MaskTarget> masks;
  struct LinkedOutside {
    std::string path;          // the secret file's name
    std::uint64_t links = 0;   // its link count
    std::uint64_t found = 0;   // names of it the walk found (masked)
  };
  std::vector<LinkedOutside> linked_outside;
  // Where git would find a repository: every ".git" entry ("sub/.git", of any type) and every directory shaped
  // like a git dir ("proj/HEAD": HEAD, and objects/ or a commondir), relative to the workspace.
  std::vector<std::string> git;
  std::vector<std::string> unreadable;  // directories that exist but could not be listed, relative
  std::size_t entries_seen = 0;
  std::size_t dirs_read = 0;       // directories actually listed (the rest came from the cache)
  bool truncated = false;          // hit max_entries or max_depth somewhere: the caller warns
};

// A range of bytes of ScanCache::text (offsets, not pointers, so a cache can be moved or copied freely).
struct TextSpan {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

// One directory of the previous walk. What a full read of it found stays valid while its inode number and ctime
// are unchanged: adding, removing or renaming an entry updates the ctime, and no user can set a ctime back.
// A record that was never read (too deep, unreadable, gone) has ino 0 and never matches.
struct CachedDir {
  TextSpan name;                 // the entry name ("" for the workspace root)
  TextSpan record;               // the record's bytes up to its child count: reused verbatim while unchanged
  std::uint64_t ino = 0;
  std::int64_t ctime_sec = 0;
  std::int64_t ctime_nsec = 0;
  std::uint64_t entries = 0;
  std::uint32_t first_secret = 0;  // names: ScanCache::secrets[first_secret, +files, +dirs, +git, +links)
  std::uint32_t files = 0;
  std::uint32_t dirs = 0;
  std::uint32_t git = 0;
  std::uint32_t links = 0;
  std::uint32_t children = 0;      // one child record per subdirectory, right after this one (preorder)
  std::uint32_t end = 0;           // index one past this directory's subtree in ScanCache::dirs
};

// The cache file's text and an index into it. The file holds a header naming the workspace, then one
// length-prefixed record per directory in preorder, each followed by its subdirectories' records: a warm run walks
// it in step with the tree, with no lookup by path and no per-directory allocation.
struct ScanCache {
  std::string text;
  std::vector<CachedDir> dirs;      // dirs[0] is the workspace root; empty when there is no usable cache
  std::vector<TextSpan> secrets;
  bool changed = false;             // the last walk saw something the cache did not hold: worth saving

  std::string_view view(TextSpan s) const { return std::string_view(text).substr(s.offset, s.size); }
};

// Walks `workspace` (an absolute directory path): every directory but `.git`, never through a symlink. The
// secrets it reports are the ones to mask: inside a skipped directory key names only, below a secret directory
// (masked whole) none; the git entries and unreadable directories are reported wherever they are, for the check
// after a run, which walks the same tree through the same cache. Unreadable directories are retried next time.
// With a cache, unchanged directories are not listed again; the cache is replaced by what this walk saw.
// `held`: a descriptor on the workspace as resolved (see sys/held_path.h), walked instead of its name; -1: the name.
SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits = {}, ScanCache* cache = nullptr,
                                  int held = -1);

// Turns what a scan found into the names to mask (SecretScan::masks), each as it is now: the secret files, the
// secret directories, the unreadable directories; each secret-named symlink and, when it leads to a file or directory
// inside `root` (the scanned directory's descriptor), that; and every other name the tree holds for a secret file
// with more than one link (a second walk, only then, into every directory but none beyond `root`). A name gone since
// the walk is added to `vanished`. `workspace` is the scanned directory's path: an absolute link into it is followed.
void resolve_masks(int root, const std::string& workspace, SecretScan& scan, const ScanLimits& limits = {});

// Takes the cache file's text. Returns false, leaving `out` empty, on anything malformed or written for another
// workspace, another kind of walk or other names (the caller then scans from scratch).
bool parse_scan_cache(std::string text, const std::string& workspace, ScanCache& out, const ScanLimits& limits = {});

// The directory a cache file was written for, from its first bytes (its header: the magic line, then the path);
// none if they are not a cache's. Pruning drops the caches of directories that are gone.
std::optional<std::string> scan_cache_scanned_path(std::string_view head);

}  // namespace confine
