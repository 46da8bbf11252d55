// The file trees of --checkpoint: what a workspace holds (a manifest), copying it into the store, and putting a
// stored copy back. Every step is relative to a directory fd and follows no symbolic link (O_NOFOLLOW on each
// name), so a link the sandbox planted in the workspace is a link to remove, never a way out of it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sys/result.h"

namespace confine::run {

// One name in the workspace as lstat saw it. `path` is relative to the workspace root, which is ".".
struct TreeEntry {
  char kind = 0;  // 'd' directory, 'f' regular file, 'l' symbolic link, 'o' other (a FIFO, socket, device: never saved)
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::uint64_t size = 0;
  std::uint64_t ino = 0;
  std::timespec mtime{};
  std::timespec ctime{};
};
using Manifest = std::map<std::string, TreeEntry>;

// Nothing has changed at this name: the same kind, owner and mode, and for a file or a link the same inode,
// size, mtime and ctime (no program can set a ctime back). A directory's own times change with its entries,
// which are compared one by one.
bool unchanged(const TreeEntry& a, const TreeEntry& b);

// The manifest as bytes (NUL-separated: paths may hold any byte but NUL) and back; nullopt-like Error if damaged.
std::string serialize(const Manifest& m);
sys::Result<Manifest> parse_manifest(const std::string& bytes);

// Every name below the directory `root` (an open directory fd), and "." itself. A directory that cannot be
// read is listed without its contents.
Manifest snapshot(int root);

// The budget of one checkpoint: bytes of data copied (a clone or a file shared with the previous checkpoint
// costs nothing; a sparse file costs only its data).
inline constexpr std::uint64_t kFileBudget = std::uint64_t{1} << 30;   // 1 GiB for one file
inline constexpr std::uint64_t kTotalBudget = std::uint64_t{2} << 30;  // 2 GiB in all

// Progress on stderr for a save or restore that lasts more than a second: one line rewritten in place on a
// terminal, else a line a second. Nothing for a fast one, nor with -q, nor when `doing` is empty.
class Progress {
 public:
  explicit Progress(std::string doing);
  ~Progress();  // ends the line rewritten in place
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // One more name done; a clock read every 64.
  void step() {
    if (++names_ % 64 == 0 && !doing_.empty()) show_if_due();
  }
  // `bytes` of data copied: a large file may take seconds alone.
  void copied(std::uint64_t bytes) {
    bytes_ += bytes;
    if (!doing_.empty()) show_if_due();
  }

 private:
  void show_if_due();

  std::string doing_;
  bool terminal_ = false;
  bool shown_ = false;
  std::uint64_t names_ = 0;
  std::uint64_t bytes_ = 0;
  long long start_ms_ = 0;
  long long next_ms_ = 0;  // when the next line is due
};

struct NotSaved {
  std::string path;
  std::string why;
};

struct SavedTree {
  Manifest manifest;             // what was saved, with each name's metadata in the workspace
  std::vector<NotSaved> skipped; // what was not, and why
  std::vector<NotSaved> excluded; // what was not because the user said so (why: the pattern)
  std::uint64_t files = 0;
  std::uint64_t copied = 0;      // bytes of data copied
  std::uint64_t cloned = 0;      // files whose blocks are shared with the workspace's (reflink)
  std::uint64_t shared = 0;      // files unchanged since the previous checkpoint, stored once for both
};

// The previous checkpoint, whose unchanged files a new one shares (hard links inside the store).
struct PreviousTree {
  const Manifest* manifest = nullptr;
  int tree = -1;  // its stored tree, an open directory fd
};

// Copies the workspace `from` (an open directory fd) into the empty store directory `to`: directories as 0700
// directories, files as 0600 files, links as links; owners, modes and times are in the manifest.
// `exclude`: shell patterns; a name matching one (at any depth) is not saved, and listed in `excluded`.
sys::Result<SavedTree> save_tree(int from, int to, const PreviousTree& previous, const std::vector<std::string>& exclude,
                                 Progress& progress);

// Makes the workspace `to` what the stored tree `from` with `manifest` was: names that are not in it are
// removed (links included, never followed), files unchanged since the checkpoint are kept as they are, the rest
// is written anew (a clone where the filesystem can) with its owner (as root), mode and times. `keep`: the
// paths the checkpoint did not save, left as they are.
sys::Status restore_tree(int from, int to, const Manifest& manifest, const std::set<std::string>& keep, Progress& progress);

// The names in the open directory `dir` (not "." and ".."), sorted.
sys::Result<std::vector<std::string>> names_in(int dir);

// Removes everything in the open directory `dir`, links included (never followed).
sys::Status empty_directory(int dir);

// `path` as a terminal may print it: control characters become '?'.
std::string printable(const std::string& path);

}  // namespace confine::run
