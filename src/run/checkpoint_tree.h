// The file trees of --checkpoint: what a workspace holds (a manifest), copying it into the store, and putting a
// stored copy back. Every step is relative to a directory fd and follows no symbolic link (O_NOFOLLOW on each
// name), so a link the sandbox planted in the workspace is a link to remove, never a way out of it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"
#include "sys/unique_fd.h"

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

struct NotSaved {
  std::string path;
  std::string why;
};

// Every name below the directory `root` (an open directory fd), and "." itself, but for the names matching one
// of the shell patterns `exclude` (at any depth), which are listed in `excluded` (why: the pattern) and not
// entered. A directory that cannot be read is listed without its contents.
struct Scan {
  Manifest manifest;
  std::vector<NotSaved> excluded;
};
class Progress;
Scan scan(int root, const std::vector<std::string>& exclude, Progress* progress = nullptr);
inline Manifest snapshot(int root) { return scan(root, {}).manifest; }
// Writes serialize(snapshot(root)) to `fd` as the walk goes (the record of how a run left the workspace), and a
// manifest: a buffer at a time, never the whole (tens of megabytes for a large workspace) in memory.
sys::Status write_snapshot(int root, int fd);
sys::Status write_manifest(const Manifest& m, int fd);

// Writes all of `bytes` to `fd`.
sys::Status write_all(int fd, std::string_view bytes);

// The directories of `now` below which nothing has changed since `before` (no name added, removed or changed
// at any depth, the directory itself included): what a new checkpoint can take from the previous one whole.
// `not_saved_before`: what the previous checkpoint could not save, which counts as changed (its directories
// hold less than the manifest says, and a restore must leave them alone).
std::set<std::string> unchanged_directories(const Manifest& now, const Manifest& before,
                                            const std::vector<std::string>& not_saved_before = {});

// The directories a checkpoint did not store itself because they had not changed since an older one: path →
// the id of the checkpoint that holds them (which may in turn refer to an older one for a part).
using SharedDirectories = std::map<std::string, std::string>;

// Opens the stored directory of a workspace path wherever its checkpoint keeps it (its own tree, or the tree of
// the checkpoint it refers to); an invalid fd, with errno, if it has none.
using OpenStored = std::function<sys::UniqueFd(const std::string& path)>;

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
  // Work on a name already counted (the save's copy after its walk); a clock read every 64.
  void again() {
    if (++again_ % 64 == 0 && !doing_.empty()) show_if_due();
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
  std::uint64_t again_ = 0;
  std::uint64_t bytes_ = 0;
  long long start_ms_ = 0;
  long long next_ms_ = 0;  // when the next line is due
};

struct SavedTree {
  Manifest manifest;             // what was saved, with each name's metadata in the workspace
  std::vector<NotSaved> skipped; // what was not, and why
  std::vector<NotSaved> excluded; // what was not because the user said so (why: the pattern)
  std::uint64_t files = 0;
  std::uint64_t copied = 0;      // bytes of data copied
  std::uint64_t cloned = 0;      // files whose blocks are shared with the workspace's (reflink)
  std::uint64_t shared = 0;      // files unchanged since the previous checkpoint, stored once for both
  SharedDirectories shared_directories;  // directories unchanged since the previous checkpoint, not stored again
};

// The previous checkpoint, whose unchanged directories a new one refers to and whose unchanged files in a
// changed directory it shares (hard links inside the store).
struct PreviousTree {
  const Manifest* manifest = nullptr;  // null: there is none
  std::string id;
  OpenStored open;
  std::vector<std::string> not_saved;  // what it could not save
};

// Copies the workspace `from` (an open directory fd) into the empty store directory `to`: directories as 0700
// directories, files as 0600 files, links as links; owners, modes and times are in the manifest. A directory
// unchanged since the previous checkpoint is not stored again (`shared_directories`), so an unchanged workspace
// costs one walk, whatever its size.
// `exclude`: shell patterns; a name matching one (at any depth) is not saved, and listed in `excluded`.
sys::Result<SavedTree> save_tree(int from, int to, const PreviousTree& previous, const std::vector<std::string>& exclude,
                                 Progress& progress);

// Makes the workspace `to` what the checkpoint with `manifest`, whose directories `stored` opens, was: names that
// are not in it are removed (links included, never followed), files unchanged since the checkpoint are kept as
// they are, the rest is written anew (a clone where the filesystem can) with its owner (as root), mode and times.
// `keep`: the paths the checkpoint did not save, left as they are.
sys::Status restore_tree(const OpenStored& stored, int to, const Manifest& manifest, const std::set<std::string>& keep,
                         Progress& progress);

// The directory a workspace path is in: "a/b/c" → "a/b", "a" → ".".
std::string parent_path(const std::string& path);

// The names in the open directory `dir` (not "." and ".."), sorted.
sys::Result<std::vector<std::string>> names_in(int dir);

// Removes everything in the open directory `dir`, links included (never followed).
sys::Status empty_directory(int dir);

// `path` as a terminal may print it: control characters become '?'.
std::string printable(const std::string& path);

}  // namespace confine::run
