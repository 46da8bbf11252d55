#include "run/checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/json_text.h"
#include "core/limits.h"
#include "core/resolve.h"
#include "run/checkpoint_tree.h"
#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

using nlohmann::json;

constexpr const char* kState = "state";
constexpr const char* kNewPrefix = ".new-";            // a save's working directory, .new-PID
constexpr const char* kRemovingPrefix = ".removing-";  // a removal's, .removing-PID-ID
constexpr std::size_t kNamesShown = 3;  // in a one-line message; `confine checkpoints list` shows them all

// A directory to list and create entries in: `dir` (an O_PATH fd, or a parent) opened for reading.
sys::UniqueFd open_listable(int dir, const char* name = ".") {
  return sys::UniqueFd(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

sys::Result<std::string> read_store_file(int dir, const char* name) {
  auto fd = sys::open_owned_file_for_reading(dir, name);
  if (!fd.valid()) return sys::errno_error(fmt::format("reading `{}`", name));
  std::string out;
  // Its size first: a checkpoint's manifest is tens of megabytes for a large workspace.
  if (struct stat st {}; ::fstat(fd.get(), &st) == 0) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) return sys::errno_error(fmt::format("reading `{}`", name));
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Whether a write is on the disk when it returns: a removal's steps must be, in their order (see hand_over); a
// save's files need not be, as the save is published by one rename after them and a lost one is a lost save.
enum class Durable { no, yes };

// Writes a new file `name` in `dir` with what `write` writes to the fd it is given, replacing one there at once (a
// rename): a reader sees the old content or the new, never a part.
sys::Status write_store_file_with(int dir, const std::string& name, const std::function<sys::Status(int)>& write,
                                  Durable durable = Durable::no) {
  auto temp = fmt::format(".{}.{}", name, ::getpid());
  ::unlinkat(dir, temp.c_str(), 0);
  sys::UniqueFd fd(::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return sys::errno_error(fmt::format("writing `{}`", name));
  if (auto s = write(fd.get()); !s) return s.error().wrap(fmt::format("writing `{}`", name));
  // The content on the disk before the name: else a crash could leave the new name with no content.
  if (durable == Durable::yes && ::fsync(fd.get()) != 0) return sys::errno_error(fmt::format("writing `{}`", name));
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) return sys::errno_error(fmt::format("writing `{}`", name));
  if (durable == Durable::yes && ::fsync(dir) != 0) return sys::errno_error(fmt::format("writing `{}`", name));
  return sys::ok_status();
}

sys::Status write_store_file(int dir, const std::string& name, const std::string& bytes, Durable durable = Durable::no) {
  return write_store_file_with(dir, name, [&](int fd) { return write_all(fd, bytes); }, durable);
}

// ---- Checkpoint ids: YYYYMMDDTHHMMSSZ, then -2, -3 … within one second.

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  struct tm t {};
  ::gmtime_r(&now, &t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &t);
  return buf;
}

constexpr std::size_t kStampLength = 16;  // YYYYMMDDTHHMMSSZ

// The id's time and its number within that second, if `name` is an id.
std::optional<std::pair<std::string, unsigned long>> parse_id(const std::string& name) {
  if (name.size() < kStampLength || name[8] != 'T' || name[kStampLength - 1] != 'Z') return std::nullopt;
  for (std::size_t i = 0; i < kStampLength - 1; ++i)
    if (i != 8 && (name[i] < '0' || name[i] > '9')) return std::nullopt;
  auto rest = name.substr(kStampLength);
  if (rest.empty()) return std::pair{name, 1UL};
  if (rest.size() < 2 || rest.size() > 10 || rest[0] != '-' || rest.find_first_not_of("0123456789", 1) != std::string::npos)
    return std::nullopt;
  return std::pair{name.substr(0, kStampLength), std::stoul(rest.substr(1))};
}

// The checkpoints in `store`, newest first.
std::vector<std::string> checkpoint_ids(int store) {
  std::vector<std::pair<std::pair<std::string, unsigned long>, std::string>> found;
  if (auto names = names_in(store))
    for (const auto& name : *names)
      if (auto id = parse_id(name)) found.emplace_back(*id, name);
  std::sort(found.begin(), found.end(), std::greater<>());
  std::vector<std::string> ids;
  for (auto& f : found) ids.push_back(std::move(f.second));
  return ids;
}

// Moves the finished checkpoint `temp` to the first free id of this second. RENAME_NOREPLACE makes taking the
// name and finding it free one step, so two checkpoints at once never share one.
sys::Result<std::string> publish(int store, const std::string& temp) {
  auto stamp = utc_stamp();
  for (unsigned n = 1; n < 1000; ++n) {
    auto id = n == 1 ? stamp : fmt::format("{}-{}", stamp, n);
    if (::renameat2(store, temp.c_str(), store, id.c_str(), RENAME_NOREPLACE) == 0) return id;
    if (errno != EEXIST) return sys::errno_error("--checkpoint: naming the checkpoint");
  }
  return sys::plain_error("--checkpoint: a thousand checkpoints in one second");
}

// ---- What a checkpoint holds.

// Pairs of strings as NUL-separated bytes (paths may hold any byte but NUL): `skipped`, `excluded` and `shared`.
std::string serialize_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [a, b] : pairs) {
    out += a;
    out += '\0';
    out += b;
    out += '\0';
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_pairs(const std::string& bytes) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t pos = 0; pos < bytes.size();) {
    auto a = bytes.find('\0', pos);
    auto b = a == std::string::npos ? a : bytes.find('\0', a + 1);
    if (b == std::string::npos) break;
    out.emplace_back(bytes.substr(pos, a - pos), bytes.substr(a + 1, b - a - 1));
    pos = b + 1;
  }
  return out;
}

std::string serialize_skipped(const std::vector<NotSaved>& skipped) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& s : skipped) pairs.emplace_back(s.path, s.why);
  return serialize_pairs(pairs);
}

std::vector<NotSaved> parse_skipped(const std::string& bytes) {
  std::vector<NotSaved> out;
  for (auto& [path, why] : parse_pairs(bytes)) out.push_back({std::move(path), std::move(why)});
  return out;
}

// ---- Where a checkpoint's directories are kept.

constexpr const char* kShared = "shared";  // <ID>/shared: its directories kept by an older checkpoint (SharedDirectories)

// The checkpoints' trees in one store, and what each refers to an older one for (read once, kept up to date here).
// The rule that resolves a directory: its checkpoint's own tree has it, or else the nearest directory at or above
// it that the checkpoint shares names the checkpoint to look in. A copy in the tree wins over a reference, so a
// removal that moves a tree part from one checkpoint to another is never half done (see hand_over).
class StoredTrees {
 public:
  explicit StoredTrees(int store) : store_(store) {}

  // The stored directory `path` of checkpoint `id`, wherever it is kept; invalid (errno set) if nowhere. A chain
  // that comes back to a checkpoint it passed is a damaged store (ELOOP), as is a list that cannot be read (EIO).
  sys::UniqueFd open(const std::string& id, const std::string& path) {
    std::set<std::string> passed;
    for (std::string holder = id; passed.insert(holder).second;) {
      if (auto fd = open_in_tree(holder, path, O_RDONLY | O_DIRECTORY); fd.valid() || errno != ENOENT) return fd;
      auto next = refers_to(holder, path);
      if (!next) {
        errno = EIO;
        return sys::UniqueFd();
      }
      if (!*next) {
        errno = ENOENT;
        return sys::UniqueFd();
      }
      holder = std::move(**next);
    }
    errno = ELOOP;
    return sys::UniqueFd();
  }

  // The checkpoint `id` refers to for `path`: the one its nearest shared directory at or above `path` names.
  sys::Result<std::optional<std::string>> refers_to(const std::string& id, const std::string& path) {
    auto shared = shared_of(id);
    if (!shared) return shared.error();
    for (std::string p = path;; p = parent_path(p)) {
      if (auto it = (*shared)->find(p); it != (*shared)->end()) return std::optional<std::string>(it->second);
      if (p == ".") return std::optional<std::string>();
    }
  }

  // What `id` refers to older checkpoints for. A checkpoint without the list refers to none; a list that cannot
  // be read is an error, never taken for an empty one: a removal would then delete what others still need.
  sys::Result<const SharedDirectories*> shared_of(const std::string& id) {
    if (auto it = shared_.find(id); it != shared_.end()) return &it->second;
    auto dir = sys::UniqueFd(::openat(store_, id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return sys::errno_error(fmt::format("checkpoint {}", id));
    auto bytes = read_store_file(dir.get(), kShared);
    if (!bytes && bytes.error().err != ENOENT) return bytes.error().wrap(fmt::format("checkpoint {}", id));
    SharedDirectories shared;
    if (bytes)
      for (auto& [path, holder] : parse_pairs(*bytes)) shared[std::move(path)] = std::move(holder);
    return &(shared_[id] = std::move(shared));
  }

  // Replaces `id`'s list, on the disk before this returns (a removal deletes only after its hand-over is there).
  sys::Status write_shared(const std::string& id, SharedDirectories shared) {
    std::vector<std::pair<std::string, std::string>> pairs(shared.begin(), shared.end());
    auto dir = sys::UniqueFd(::openat(store_, id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return sys::errno_error(fmt::format("checkpoint {}", id));
    if (auto s = write_store_file(dir.get(), kShared, serialize_pairs(pairs), Durable::yes); !s) return s;
    shared_[id] = std::move(shared);
    return sys::ok_status();
  }

  // `path` of `id`'s tree, opened with `flags`, no link followed on the way (the store is confine's own, but a
  // path is a workspace's name).
  sys::UniqueFd open_in_tree(const std::string& id, const std::string& path, int flags) const {
    auto rel = path == "." ? id + "/tree" : id + "/tree/" + path;
    return sys::UniqueFd(sys::openat2(store_, rel.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0,
                                      sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks | sys::kResolveBeneath));
  }

 private:
  int store_;
  std::map<std::string, SharedDirectories> shared_;
};

// Before checkpoint `from` is removed, checkpoint `to`, which refers to it for the directory `path`, gets what
// `from` held there. The order keeps every step readable by `StoredTrees::open` if a removal is cut short (each
// step is on the disk before the next): `to` first learns where `from` looks for the directories below `path`
// (unused while `from` still has `path`), `from` learns that `path` moves to `to` (for the others that refer to
// it), the rename makes the move at once, and only then does `to` stop referring to `from`.
sys::Status hand_over(StoredTrees& trees, int store, const std::string& from, const std::string& to, const std::string& path) {
  auto to_list = trees.shared_of(to);
  if (!to_list) return to_list.error();
  auto to_shared = **to_list;
  auto in_tree = trees.open_in_tree(from, path, O_PATH | O_DIRECTORY);
  if (!in_tree.valid()) {
    // `from` refers further for it: so will `to`. Unless it refers to `to` itself: a removal cut short after the
    // rename, which left `to` holding the directory and still naming `from`.
    auto further = trees.refers_to(from, path);
    if (!further) return further.error();
    if (!*further) return sys::plain_error(fmt::format("checkpoint {} is damaged: `{}` is in no tree", from, printable(path)));
    if (**further != to) {
      to_shared[path] = **further;
    } else if (trees.open_in_tree(to, path, O_PATH | O_DIRECTORY).valid()) {
      to_shared.erase(path);
    } else {
      return sys::plain_error(fmt::format("checkpoints {} and {} are damaged: each refers to the other for `{}`", from, to,
                                          printable(path)));
    }
    return trees.write_shared(to, std::move(to_shared));
  }
  auto from_list = trees.shared_of(from);
  if (!from_list) return from_list.error();
  auto from_shared = **from_list;
  auto [first, last] = path == "." ? std::pair{from_shared.begin(), from_shared.end()}
                                   : std::pair{from_shared.lower_bound(path + "/"), from_shared.lower_bound(path + "0")};
  for (auto it = first; it != last; ++it) to_shared[it->first] = it->second;
  if (auto s = trees.write_shared(to, to_shared); !s) return s;
  from_shared[path] = to;
  if (auto s = trees.write_shared(from, std::move(from_shared)); !s) return s;
  // The parents: `to` has the parent of `path` in its own tree (it refers to `path` alone), `from` the path.
  auto leaf = path == "." ? std::string("tree") : path.substr(path.rfind('/') + 1);
  auto parent = [&](const std::string& id) {
    return path == "." ? sys::UniqueFd(::openat(store, id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
                       : trees.open_in_tree(id, parent_path(path), O_RDONLY | O_DIRECTORY);
  };
  auto from_parent = parent(from), to_parent = parent(to);
  if (!from_parent.valid() || !to_parent.valid() ||
      ::renameat2(from_parent.get(), leaf.c_str(), to_parent.get(), leaf.c_str(), RENAME_NOREPLACE) != 0)
    return sys::errno_error(fmt::format("moving `{}` of checkpoint {} to checkpoint {}", printable(path), from, to));
  // The move on the disk before `to` stops naming `from`: else a crash could leave `to` with neither.
  if (::fsync(to_parent.get()) != 0 || ::fsync(from_parent.get()) != 0)
    return sys::errno_error(fmt::format("moving `{}` of checkpoint {} to checkpoint {}", printable(path), from, to));
  to_shared.erase(path);
  return trees.write_shared(to, std::move(to_shared));
}

// Every checkpoint that refers to `id` gets what it refers to, so that `id` can go.
sys::Status hand_over_all(int store, const std::vector<std::string>& ids, const std::string& id) {
  StoredTrees trees(store);
  for (const auto& other : ids) {
    if (other == id) continue;
    auto shared = trees.shared_of(other);
    if (!shared) return shared.error();
    std::vector<std::string> paths;
    for (const auto& [path, holder] : **shared)
      if (holder == id) paths.push_back(path);
    for (const auto& path : paths)
      if (auto s = hand_over(trees, store, id, other, path); !s) return s;
  }
  return sys::ok_status();
}

std::string summary(const SavedTree& t) {
  auto text = fmt::format("{} files, {} copied", t.files, format_bytes(t.copied));
  if (t.cloned > 0) text += fmt::format(", {} cloned", t.cloned);
  if (t.shared > 0) text += fmt::format(", {} unchanged since the previous checkpoint", t.shared);
  if (!t.skipped.empty()) text += fmt::format(", {} not saved", t.skipped.size());
  if (!t.excluded.empty()) text += fmt::format(", {} excluded", t.excluded.size());
  return text;
}

// "a (why); b (why); c (why), and 4 more"
std::string list_not_saved(const std::vector<NotSaved>& skipped) {
  std::string text;
  for (std::size_t i = 0; i < std::min(skipped.size(), kNamesShown); ++i)
    text += fmt::format("{}{} ({})", i == 0 ? "" : "; ", printable(skipped[i].path), skipped[i].why);
  if (skipped.size() > kNamesShown) text += fmt::format(", and {} more", skipped.size() - kNamesShown);
  return text;
}

// The newest checkpoint, for the new one to take what has not changed since.
struct Previous {
  std::string id;
  Manifest manifest;
  std::vector<std::string> not_saved;
};

std::optional<Previous> latest_checkpoint(int store) {
  auto ids = checkpoint_ids(store);
  if (ids.empty()) return std::nullopt;
  auto dir = open_listable(store, ids.front().c_str());
  auto bytes = dir.valid() ? read_store_file(dir.get(), "manifest") : sys::errno_error("open");
  if (!bytes) return std::nullopt;
  auto manifest = parse_manifest(*bytes);
  if (!manifest) return std::nullopt;
  std::vector<std::string> not_saved;
  if (auto skipped = read_store_file(dir.get(), "skipped"))
    for (auto& s : parse_skipped(*skipped)) not_saved.push_back(std::move(s.path));
  return Previous{ids.front(), std::move(*manifest), std::move(not_saved)};
}

std::uint64_t bytes_held(const Manifest& m) {
  std::uint64_t total = 0;
  for (const auto& [path, e] : m) total += e.kind == 'f' ? e.size : 0;
  return total;
}

// Paths and arguments may hold bytes that are not UTF-8: replaced, never an exception.
std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// What `confine checkpoints list` shows of a checkpoint besides its id and what it did not save.
std::string info(const SavedTree& t, const std::vector<std::string>& command) {
  return dump(json{{"command", command}, {"files", t.files},         {"bytes", bytes_held(t.manifest)},
                   {"copied", t.copied}, {"cloned", t.cloned},       {"shared", t.shared},
                   {"not_saved", t.skipped.size()}});
}

// Fills the new, empty checkpoint directory `dir`.
sys::Result<SavedTree> fill_checkpoint(int dir, int workspace, int store, const std::vector<std::string>& command,
                                       const std::vector<std::string>& exclude) {
  if (::mkdirat(dir, "tree", 0700) != 0) return sys::errno_error("--checkpoint: the store");
  auto tree = open_listable(dir, "tree");
  if (!tree.valid()) return sys::errno_error("--checkpoint: the store");
  auto previous = latest_checkpoint(store);
  StoredTrees trees(store);
  PreviousTree from_previous;
  if (previous)
    from_previous = {&previous->manifest, previous->id, [&](const std::string& path) { return trees.open(previous->id, path); },
                     previous->not_saved};
  Progress progress("saving a checkpoint of the workspace");
  auto saved = save_tree(workspace, tree.get(), from_previous, exclude, progress);
  if (!saved) return saved;
  // A workspace unchanged since the previous checkpoint has no tree of its own: the rule of StoredTrees::open.
  if (saved->shared_directories.contains(".") && ::unlinkat(dir, "tree", AT_REMOVEDIR) != 0)
    return sys::errno_error("--checkpoint: the store");
  std::vector<std::pair<std::string, std::string>> shared(saved->shared_directories.begin(), saved->shared_directories.end());
  for (auto [name, bytes] : {std::pair{"skipped", serialize_skipped(saved->skipped)},
                             std::pair{"summary", summary(*saved)}, std::pair{"info", info(*saved, command)},
                             std::pair{"excluded", serialize_skipped(saved->excluded)}, std::pair{kShared, serialize_pairs(shared)}})
    if (auto s = write_store_file(dir, name, bytes); !s) return s.error().wrap("--checkpoint");
  if (auto s = write_store_file_with(dir, "manifest", [&](int fd) { return write_manifest(saved->manifest, fd); }); !s)
    return s.error().wrap("--checkpoint");
  return saved;
}

// ---- The store.

// The store is confine's own, made if missing; resolve made sure it is out of the sandbox's reach
// (resolve_checkpoint, core/resolve.cc).
sys::Result<sys::UniqueFd> prepare_store(const std::string& store) {
  // make_owned_directory follows no link, so the store's lexical path is where it is.
  auto dir = sys::make_owned_directory("--checkpoint store", store);
  if (!dir) return dir.error();
  auto fd = open_listable(dir->get());
  if (!fd.valid()) return sys::errno_error(fmt::format("--checkpoint store `{}`", store));
  return fd;
}

// Saves and restores read what other checkpoints hold, a removal moves it: a save or a restore shares the
// store, a removal (rm, prune) has it alone. Waits for the other side to finish.
void lock_store(int store, bool alone) {
  while (::flock(store, alone ? LOCK_EX : LOCK_SH) != 0 && errno == EINTR) {
  }
}

// An existing store, reached without a symbolic link; nullopt if there is none.
sys::Result<std::optional<sys::UniqueFd>> open_store(const std::string& store) {
  struct stat st {};
  if (::lstat(store.c_str(), &st) != 0 && errno == ENOENT) return std::optional<sys::UniqueFd>{};
  auto dir = sys::open_real_directory("checkpoint store", store);
  if (!dir) return dir.error();
  auto fd = open_listable(dir->get());
  if (!fd.valid()) return sys::errno_error(fmt::format("checkpoint store `{}`", store));
  return std::optional<sys::UniqueFd>{std::move(fd)};
}

sys::UniqueFd open_workspace(const std::string& workspace) {
  return sys::UniqueFd(::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// ---- Restore.

// What differs between how the workspace was left (`before`) and how it is (`now`), one phrase a name.
std::vector<std::string> changes_since(const Manifest& before, const Manifest& now) {
  std::vector<std::string> out;
  for (const auto& [path, e] : now) {
    auto it = before.find(path);
    if (it == before.end()) out.push_back(printable(path) + " added");
    else if (!unchanged(it->second, e)) out.push_back(printable(path) + " changed");
  }
  for (const auto& [path, e] : before)
    if (!now.contains(path)) out.push_back(printable(path) + " removed");
  return out;
}

std::string first_few(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < std::min(items.size(), kNamesShown); ++i) text += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > kNamesShown) text += fmt::format(", and {} more", items.size() - kNamesShown);
  return text;
}

// Why the workspace must not be overwritten without --force, or empty if it may: it must be as the last run
// with --checkpoint left it (or the last restore did), so that what a restore removes is that run's doing, or
// is in a checkpoint.
std::string refusal(int store, int workspace) {
  auto state = read_store_file(store, kState);
  if (!state)
    return "no record of how the last run with --checkpoint left the workspace (it has not ended, or confine was "
           "killed), so changes made since cannot be told from the run's; add --force to overwrite whatever is there";
  auto before = parse_manifest(*state);
  if (!before) return "the record of how the last run left the workspace is damaged; add --force to restore anyway";
  auto changes = changes_since(*before, snapshot(workspace));
  if (changes.empty()) return {};
  return fmt::format("the workspace changed after the last run with --checkpoint ended ({}): restoring would lose "
                     "that; add --force to restore anyway", first_few(changes));
}

// The names the checkpoint did not save that are gone from the workspace: what a restore cannot bring back.
std::vector<NotSaved> lost(int workspace, const std::vector<NotSaved>& skipped) {
  std::vector<NotSaved> out;
  struct stat st {};
  for (const auto& s : skipped)
    if (::fstatat(workspace, s.path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) out.push_back(s);
  return out;
}

// Restores checkpoint `id`; the result: the names it did not save that are gone.
sys::Result<std::vector<NotSaved>> restore(int store, int workspace, const std::string& id, bool force) {
  auto dir = open_listable(store, id.c_str());
  if (!dir.valid()) return sys::errno_error(fmt::format("checkpoint `{}`", id));
  auto bytes = read_store_file(dir.get(), "manifest");
  if (!bytes) return bytes.error().wrap(fmt::format("checkpoint `{}`", id));
  auto manifest = parse_manifest(*bytes);
  if (!manifest) return manifest.error().wrap(fmt::format("checkpoint `{}`", id));
  auto skipped_bytes = read_store_file(dir.get(), "skipped");
  auto skipped = parse_skipped(skipped_bytes ? *skipped_bytes : std::string{});
  // What was not saved, excluded or not, is left as it is.
  std::set<std::string> keep;
  for (const auto& s : skipped) keep.insert(s.path);
  if (auto excluded = read_store_file(dir.get(), "excluded"))
    for (auto& s : parse_skipped(*excluded)) keep.insert(std::move(s.path));
  // Checked before anything is written: a refusal changes nothing.
  if (!force)
    if (auto why = refusal(store, workspace); !why.empty()) return sys::plain_error(why);
  StoredTrees trees(store);
  const OpenStored stored = [&](const std::string& path) { return trees.open(id, path); };
  Progress progress(fmt::format("restoring checkpoint {}", id));
  if (auto s = restore_tree(stored, workspace, *manifest, keep, progress); !s)
    return s.error().wrap("the workspace is partly restored (run the same command with --force once the cause is fixed)");
  // The workspace is now as the checkpoint was: a known state, so a second restore needs no --force.
  if (auto s = write_store_file_with(store, kState, [&](int fd) { return write_snapshot(workspace, fd); }); !s)
    log::warn("cannot record the restored workspace ({}); the next restore will need --force", s.error().message());
  return lost(workspace, skipped);
}

// ---- Listing.

// "2026-12-05 11:34:51 UTC" (or ISO 8601, "2026-12-05T11:34:51Z") from the id's stamp.
std::string id_time(const std::string& id, bool iso) {
  return fmt::format(fmt::runtime(iso ? "{}-{}-{}T{}:{}:{}Z" : "{}-{}-{} {}:{}:{} UTC"), id.substr(0, 4), id.substr(4, 2), id.substr(6, 2),
                     id.substr(9, 2), id.substr(11, 2), id.substr(13, 2));
}

// The command as a user would type it: words with spaces or quotes in single quotes, control characters as '?'.
std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+@%") == std::string::npos) {
      out += w;
      continue;
    }
    out += '\'';
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return printable(out);
}

// One checkpoint as `list` shows it.
struct Listed {
  std::string id;
  json info;  // null if the checkpoint has none (made before it was recorded) or it is damaged
  std::string summary;
  std::vector<NotSaved> skipped;
  std::vector<NotSaved> excluded;
};

Listed read_listed(int store, const std::string& id) {
  Listed l{id, nullptr, "(damaged)", {}, {}};
  auto dir = open_listable(store, id.c_str());
  if (!dir.valid()) return l;
  if (auto text = read_store_file(dir.get(), "summary")) l.summary = *text;
  if (auto skipped = read_store_file(dir.get(), "skipped")) l.skipped = parse_skipped(*skipped);
  if (auto excluded = read_store_file(dir.get(), "excluded")) l.excluded = parse_skipped(*excluded);
  if (auto text = read_store_file(dir.get(), "info"))
    if (auto j = parse_bounded_json(*text, "info", 4); j && j->is_object() && j->value("command", json()).is_array() &&
                                                        j->value("bytes", json()).is_number_unsigned())
      l.info = std::move(*j);
  return l;
}

std::vector<std::string> command_of(const json& info) {
  std::vector<std::string> words;
  for (const auto& w : info["command"])
    if (w.is_string()) words.push_back(w.get<std::string>());
  return words;
}

void print_listed(const Listed& l) {
  auto size = l.info.is_null() ? std::string() : format_bytes(l.info["bytes"].get<std::uint64_t>()) + " in ";
  std::printf("  %s  %s  %s%s\n", l.id.c_str(), id_time(l.id, false).c_str(), size.c_str(), l.summary.c_str());
  if (!l.info.is_null()) std::printf("      before: %s\n", shell_words(command_of(l.info)).c_str());
  for (const auto& s : l.skipped) std::printf("      not saved: %s (%s)\n", printable(s.path).c_str(), s.why.c_str());
  for (const auto& s : l.excluded) std::printf("      excluded: %s (%s)\n", printable(s.path).c_str(), printable(s.why).c_str());
}

json listed_json(const Listed& l) {
  json not_saved = json::array();
  for (const auto& s : l.skipped) not_saved.push_back({{"path", s.path}, {"why", s.why}});
  json excluded = json::array();
  for (const auto& s : l.excluded) excluded.push_back({{"path", s.path}, {"pattern", s.why}});
  json out{{"id", l.id}, {"time", id_time(l.id, true)}, {"command", nullptr}, {"files", nullptr}, {"bytes", nullptr},
           {"copied", nullptr}, {"not_saved", std::move(not_saved)}, {"excluded", std::move(excluded)}};
  if (!l.info.is_null())
    for (const char* key : {"command", "files", "bytes", "copied"}) out[key] = l.info.value(key, json());
  return out;
}

// ---- Removing.

// Why `id` names no checkpoint of this store, or empty if it does. Only a well-formed id that is listed is
// taken: `../x` or `/etc` never reaches a path.
std::string not_a_checkpoint(const std::vector<std::string>& ids, const std::string& id, const std::string& workspace) {
  if (!parse_id(id))
    return fmt::format("`{}` is not a checkpoint id (ids look like 20260102T030405Z; `confine checkpoints list` shows "
                       "them)", printable(id));
  if (std::find(ids.begin(), ids.end(), id) == ids.end())
    return fmt::format("no checkpoint `{}` of {} (`confine checkpoints list` shows them)", id, workspace);
  return {};
}

// Deletes the directory `name` of `store` and everything in it.
sys::Status remove_tree(int store, const std::string& name) {
  auto dir = open_listable(store, name.c_str());
  if (!dir.valid()) return sys::errno_error("open");
  if (auto s = empty_directory(dir.get()); !s) return s;
  if (::unlinkat(store, name.c_str(), AT_REMOVEDIR) != 0) return sys::errno_error("rmdir");
  return sys::ok_status();
}

// Removes checkpoint `id` from `store`, whose checkpoints are `ids`. What the others refer to in it is theirs
// first. Then it is renamed out of the ids, so a removal cut short leaves no half checkpoint that `list` or
// `restore` would take for one (only a leftover that `prune` sweeps).
sys::Status remove_one(int store, const std::vector<std::string>& ids, const std::string& id) {
  if (auto s = hand_over_all(store, ids, id); !s) return s.error().wrap(fmt::format("removing checkpoint {}", id));
  auto temp = fmt::format("{}{}-{}", kRemovingPrefix, ::getpid(), id);
  // Out of the ids on the disk before anything in it is deleted: a crash leaves a leftover, never a part of one.
  if (::renameat2(store, id.c_str(), store, temp.c_str(), RENAME_NOREPLACE) != 0 || ::fsync(store) != 0)
    return sys::errno_error(fmt::format("removing checkpoint {}", id));
  if (auto s = remove_tree(store, temp); !s) return s.error().wrap(fmt::format("removing checkpoint {}", id));
  return sys::ok_status();
}

// The process that made `name` if it is the working directory of a save (`.new-PID`) or a removal
// (`.removing-PID-ID`).
std::optional<pid_t> working_directory_owner(const std::string& name) {
  std::string digits;
  if (name.starts_with(kNewPrefix)) {
    digits = name.substr(std::strlen(kNewPrefix));
  } else if (name.starts_with(kRemovingPrefix)) {
    auto rest = name.substr(std::strlen(kRemovingPrefix));
    digits = rest.substr(0, rest.find('-'));
  }
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<pid_t>(std::stol(digits));
}

// What a save or a removal cut short (Ctrl-C during a long save, a crash) left in `store`: their working
// directories whose process is gone. One whose process still runs is in progress and stays.
std::vector<std::string> leftovers(int store) {
  std::vector<std::string> out;
  if (auto names = names_in(store))
    for (const auto& name : *names)
      if (auto pid = working_directory_owner(name); pid && ::kill(*pid, 0) != 0 && errno == ESRCH) out.push_back(name);
  return out;
}

// The store of `workspace` and its checkpoint ids, newest first; nullopt after saying why not (as `what`).
struct OpenedStore {
  sys::UniqueFd fd;
  std::vector<std::string> ids;
};

// With `or_leftovers`, a store holding only what an interrupted save left (the first save of a workspace cut
// short) is taken too, so that prune can sweep it. Locked (see lock_store) before the ids are read, so that they
// are all there are while it is open.
std::optional<OpenedStore> open_existing_store(const std::string& what, const std::string& workspace, const std::string& data_home,
                                               bool alone, bool or_leftovers = false) {
  auto store = open_store(checkpoint_store(workspace, data_home));
  if (!store) {
    log::error("{}: {}", what, store.error().message());
    return std::nullopt;
  }
  if (*store) lock_store((*store)->get(), alone);
  if (!*store || (checkpoint_ids((*store)->get()).empty() && !(or_leftovers && !leftovers((*store)->get()).empty()))) {
    log::error("{}: no checkpoints of {} (make one with confine --checkpoint)", what, workspace);
    return std::nullopt;
  }
  auto ids = checkpoint_ids((*store)->get());
  return OpenedStore{std::move(**store), std::move(ids)};
}

// --keep's value: a whole number, 0 or more.
std::optional<unsigned long> parse_keep(const std::string& text) {
  if (text.empty()) return kDefaultKeep;
  if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoul(text);
}

}  // namespace

sys::Result<SavedCheckpoint> make_checkpoint(const Plan::CheckpointSave& save) {
  const auto& [workspace, data_home, exclude, argv] = save;
  if (data_home.empty()) return sys::plain_error("--checkpoint: no $HOME to keep checkpoints in");
  for (const auto& pattern : exclude)
    if (pattern.empty() || pattern.find('/') != std::string::npos)
      return sys::plain_error(fmt::format("--checkpoint-exclude `{}`: a pattern of one name (node_modules, *.o), without '/'",
                                          printable(pattern)));
  auto store = prepare_store(checkpoint_store(workspace, data_home));
  if (!store) return store.error();
  lock_store(store->get(), /*alone=*/false);
  auto ws = open_workspace(workspace);
  if (!ws.valid()) return sys::errno_error(fmt::format("--checkpoint: the workspace `{}`", workspace));
  // A run begins: until it ends (record_run_end), how the workspace is left is not known.
  if (::unlinkat(store->get(), kState, 0) != 0 && errno != ENOENT) return sys::errno_error("--checkpoint: the store");
  auto temp = fmt::format("{}{}", kNewPrefix, ::getpid());
  if (::mkdirat(store->get(), temp.c_str(), 0700) != 0) return sys::errno_error("--checkpoint: the store");
  auto dir = open_listable(store->get(), temp.c_str());
  auto saved = dir.valid() ? fill_checkpoint(dir.get(), ws.get(), store->get(), argv, exclude) : sys::errno_error("--checkpoint: the store");
  auto id = saved ? publish(store->get(), temp) : sys::Result<std::string>(saved.error());
  if (!id) {
    if (dir.valid()) (void)empty_directory(dir.get());
    ::unlinkat(store->get(), temp.c_str(), AT_REMOVEDIR);
    return id.error();
  }
  SavedCheckpoint out{*id, fmt::format("checkpoint {} saved ({}); to undo the run: confine checkpoints restore -w {} {}",
                                       *id, summary(*saved), workspace, *id), {}};
  if (!saved->skipped.empty())
    out.not_saved = fmt::format("checkpoint {} did not save {} (all: confine checkpoints list -w {})", *id,
                                list_not_saved(saved->skipped), workspace);
  return out;
}

void record_run_end(const std::string& workspace, const std::string& data_home) {
  auto store = open_store(checkpoint_store(workspace, data_home));
  auto ws = open_workspace(workspace);
  sys::Status s = !store ? sys::Status(store.error())
                  : !*store || !ws.valid() ? sys::Status(sys::errno_error("open"))
                                           : write_store_file_with((*store)->get(), kState, [&](int fd) { return write_snapshot(ws.get(), fd); });
  if (!s)
    log::warn("cannot record how the run left the workspace ({}): `confine checkpoints restore` will need --force",
              s.error().message());
}

std::string checkpoint_workspace(const std::string& dir, const std::string& data_home) {
  struct stat st {};
  for (std::string d = dir;; d = d.substr(0, std::max<std::size_t>(d.rfind('/'), 1))) {
    if (::lstat(checkpoint_store(d, data_home).c_str(), &st) == 0) return d;
    if (d == "/") return dir;
  }
}

int list_checkpoints(const std::string& workspace, const std::string& data_home, bool as_json) {
  auto path = checkpoint_store(workspace, data_home);
  auto store = open_store(path);
  if (!store) {
    log::error("{}", store.error().message());
    return 125;
  }
  std::vector<Listed> listed;
  for (const auto& id : *store ? checkpoint_ids((*store)->get()) : std::vector<std::string>{})
    listed.push_back(read_listed((*store)->get(), id));
  if (as_json) {
    json all = json::array();
    for (const auto& l : listed) all.push_back(listed_json(l));
    std::printf("%s\n", dump(json{{"workspace", workspace}, {"store", path}, {"checkpoints", std::move(all)}}, 2).c_str());
    return 0;
  }
  auto left = *store ? leftovers((*store)->get()) : std::vector<std::string>{};
  auto say_leftovers = [&] {
    if (!left.empty())
      std::printf("left by an interrupted save or removal: %zu director%s (confine checkpoints prune -w %s removes them)\n",
                  left.size(), left.size() == 1 ? "y" : "ies", workspace.c_str());
  };
  if (listed.empty()) {
    std::printf("no checkpoints of %s (make one with confine --checkpoint)\n", workspace.c_str());
    say_leftovers();
    return 0;
  }
  std::printf("checkpoints of %s, newest first (store %s):\n", workspace.c_str(), path.c_str());
  for (const auto& l : listed) print_listed(l);
  say_leftovers();
  std::printf("restore one: confine checkpoints restore -w %s [ID|latest] [--force]\n"
              "remove: confine checkpoints rm -w %s ID, or prune -w %s [--keep N]\n",
              workspace.c_str(), workspace.c_str(), workspace.c_str());
  return 0;
}

int remove_checkpoint(const std::string& workspace, const std::string& data_home, const std::string& id) {
  auto store = open_existing_store("checkpoints rm", workspace, data_home, /*alone=*/true);
  if (!store) return 125;
  auto chosen = id == "latest" ? store->ids.front() : id;
  if (auto why = not_a_checkpoint(store->ids, chosen, workspace); !why.empty()) {
    log::error("checkpoints rm: {}", why);
    return 125;
  }
  if (auto s = remove_one(store->fd.get(), store->ids, chosen); !s) {
    log::error("checkpoints rm: {}", s.error().message());
    return 125;
  }
  log::emit("confine: ", fmt::format("removed checkpoint {} of {}", chosen, workspace));
  return 0;
}

int prune_checkpoints(const std::string& workspace, const std::string& data_home, const std::string& keep_text) {
  auto keep = parse_keep(keep_text);
  if (!keep) {
    log::error("checkpoints prune: --keep `{}`: not a number of checkpoints to keep (a whole number, 0 or more)", printable(keep_text));
    return 125;
  }
  auto store = open_existing_store("checkpoints prune", workspace, data_home, /*alone=*/true, /*or_leftovers=*/true);
  if (!store) return 125;
  std::size_t removed = 0;
  auto left = store->ids;  // what a removal hands over to: the checkpoints not removed yet
  for (std::size_t i = *keep; i < store->ids.size(); ++i, ++removed) {
    if (auto s = remove_one(store->fd.get(), left, store->ids[i]); !s) {
      log::error("checkpoints prune: {} (removed {} before it)", s.error().message(), removed);
      return 125;
    }
    left.erase(std::find(left.begin(), left.end(), store->ids[i]));
  }
  auto swept = leftovers(store->fd.get());
  for (const auto& name : swept)
    if (auto s = remove_tree(store->fd.get(), name); !s) {
      log::error("checkpoints prune: what an interrupted save or removal left, `{}`: {}", name, s.error().message());
      return 125;
    }
  log::emit("confine: ", fmt::format("removed {} checkpoint{} of {}, kept {}{}", removed, removed == 1 ? "" : "s", workspace,
                                     store->ids.size() - removed,
                                     swept.empty() ? std::string()
                                                   : fmt::format("; removed {} left by an interrupted save or removal", swept.size())));
  return 0;
}

int restore_checkpoint(const std::string& workspace, const std::string& data_home, const std::string& id, bool force) {
  auto path = checkpoint_store(workspace, data_home);
  // A run on the workspace could have written there what a restore would write (a run refuses such a store:
  // resolve_checkpoint).
  if (is_within(path, workspace)) {
    log::error("checkpoints restore: the store `{}` is in the workspace, where a run could have planted it; set "
               "XDG_DATA_HOME to a directory outside the workspace", path);
    return 125;
  }
  auto store = open_existing_store("checkpoints restore", workspace, data_home, /*alone=*/false);
  if (!store) return 125;
  auto chosen = id.empty() || id == "latest" ? store->ids.front() : id;
  if (auto why = not_a_checkpoint(store->ids, chosen, workspace); !why.empty()) {
    log::error("checkpoints restore: {}", why);
    return 125;
  }
  auto ws = open_workspace(workspace);
  if (!ws.valid()) {
    log::error("checkpoints restore: the workspace `{}`: {}", workspace, std::strerror(errno));
    return 125;
  }
  auto gone = restore(store->fd.get(), ws.get(), chosen, force);
  if (!gone) {
    log::error("checkpoints restore {}: {}", chosen, gone.error().message());
    return 125;
  }
  // Data lost is said even with -q: the user must not believe the run fully undone.
  for (const auto& g : *gone)
    log::emit("confine: warning: ", fmt::format("not brought back: {} is gone and checkpoint {} did not save it ({})",
                                                printable(g.path), chosen, g.why));
  log::emit("confine: ", gone->empty() ? fmt::format("restored checkpoint {} into {}", chosen, workspace)
                                       : fmt::format("restored checkpoint {} into {}, but for the {} file{} named above", chosen,
                                                     workspace, gone->size(), gone->size() == 1 ? "" : "s"));
  return 0;
}

}  // namespace confine::run
