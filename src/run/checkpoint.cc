#include "run/checkpoint.h"

#include <fcntl.h>
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
#include <optional>
#include <set>
#include <vector>

#include "core/limits.h"
#include "core/resolve.h"
#include "run/checkpoint_tree.h"
#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

constexpr const char* kState = "state";
constexpr std::size_t kNamesShown = 3;  // in a one-line message; `confine checkpoints list` shows them all

std::string store_for(const std::string& workspace, const std::string& data_home) {
  return normalize_absolute(fmt::format("{}/confine/checkpoints/{:016x}", data_home, std::hash<std::string>{}(workspace)));
}

// A directory to list and create entries in: `dir` (an O_PATH fd, or a parent) opened for reading.
sys::UniqueFd open_listable(int dir, const char* name = ".") {
  return sys::UniqueFd(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

sys::Result<std::string> read_store_file(int dir, const char* name) {
  auto fd = sys::open_owned_file_for_reading(dir, name);
  if (!fd.valid()) return sys::errno_error(fmt::format("reading `{}`", name));
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) return sys::errno_error(fmt::format("reading `{}`", name));
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Writes `bytes` to a new file `name` in `dir`, replacing one there at once (a rename): a reader sees the old
// content or the new, never a part.
sys::Status write_store_file(int dir, const std::string& name, const std::string& bytes) {
  auto temp = fmt::format(".{}.{}", name, ::getpid());
  ::unlinkat(dir, temp.c_str(), 0);
  sys::UniqueFd fd(::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return sys::errno_error(fmt::format("writing `{}`", name));
  for (std::size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0) return sys::errno_error(fmt::format("writing `{}`", name));
    done += static_cast<std::size_t>(n);
  }
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) return sys::errno_error(fmt::format("writing `{}`", name));
  return sys::ok_status();
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

std::string serialize_skipped(const std::vector<NotSaved>& skipped) {
  std::string out;
  for (const auto& s : skipped) {
    out += s.path;
    out += '\0';
    out += s.why;
    out += '\0';
  }
  return out;
}

std::vector<NotSaved> parse_skipped(const std::string& bytes) {
  std::vector<NotSaved> out;
  for (std::size_t pos = 0; pos < bytes.size();) {
    auto a = bytes.find('\0', pos);
    auto b = a == std::string::npos ? a : bytes.find('\0', a + 1);
    if (b == std::string::npos) break;
    out.push_back({bytes.substr(pos, a - pos), bytes.substr(a + 1, b - a - 1)});
    pos = b + 1;
  }
  return out;
}

std::string summary(const SavedTree& t) {
  auto text = fmt::format("{} files, {} copied", t.files, format_bytes(t.copied));
  if (t.cloned > 0) text += fmt::format(", {} cloned", t.cloned);
  if (t.shared > 0) text += fmt::format(", {} unchanged since the previous checkpoint", t.shared);
  if (!t.skipped.empty()) text += fmt::format(", {} not saved", t.skipped.size());
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

// The newest checkpoint's manifest and tree, for the new one to share what has not changed since.
struct Previous {
  Manifest manifest;
  sys::UniqueFd tree;
};

std::optional<Previous> latest_checkpoint(int store) {
  auto ids = checkpoint_ids(store);
  if (ids.empty()) return std::nullopt;
  auto dir = open_listable(store, ids.front().c_str());
  auto bytes = dir.valid() ? read_store_file(dir.get(), "manifest") : sys::errno_error("open");
  if (!bytes) return std::nullopt;
  auto manifest = parse_manifest(*bytes);
  auto tree = open_listable(dir.get(), "tree");
  if (!manifest || !tree.valid()) return std::nullopt;
  return Previous{std::move(*manifest), std::move(tree)};
}

// Fills the new, empty checkpoint directory `dir`.
sys::Result<SavedTree> fill_checkpoint(int dir, int workspace, int store) {
  if (::mkdirat(dir, "tree", 0700) != 0) return sys::errno_error("--checkpoint: the store");
  auto tree = open_listable(dir, "tree");
  if (!tree.valid()) return sys::errno_error("--checkpoint: the store");
  auto previous = latest_checkpoint(store);
  auto saved = save_tree(workspace, tree.get(), previous ? PreviousTree{&previous->manifest, previous->tree.get()} : PreviousTree{});
  if (!saved) return saved;
  for (auto [name, bytes] : {std::pair{"manifest", serialize(saved->manifest)}, std::pair{"skipped", serialize_skipped(saved->skipped)},
                             std::pair{"summary", summary(*saved)}})
    if (auto s = write_store_file(dir, name, bytes); !s) return s.error().wrap("--checkpoint");
  return saved;
}

// ---- The store.

// The store is confine's own and out of the sandbox's reach, made if missing: a store the sandbox could write
// would let it plant the files a restore writes into the workspace.
sys::Result<sys::UniqueFd> prepare_store(const Policy& p, const std::string& store) {
  // Inside the workspace even read-only, a checkpoint would copy the store into itself, and a restore remove it.
  if (sandbox_can_write(p, store) || is_within(store, p.fs.workspace))
    return sys::plain_error(fmt::format("--checkpoint: the store `{}` would be {} the sandbox; set XDG_DATA_HOME to a "
                                        "directory outside the workspace and the --rw binds", store,
                                        is_within(store, p.fs.workspace) ? "in the workspace of" : "writable inside"));
  // make_owned_directory follows no link, so the store's lexical path is where it is.
  auto dir = sys::make_owned_directory("--checkpoint store", store);
  if (!dir) return dir.error();
  auto fd = open_listable(dir->get());
  if (!fd.valid()) return sys::errno_error(fmt::format("--checkpoint store `{}`", store));
  return fd;
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

sys::Status restore(int store, int workspace, const std::string& id, bool force) {
  auto dir = open_listable(store, id.c_str());
  if (!dir.valid()) return sys::errno_error(fmt::format("checkpoint `{}`", id));
  auto bytes = read_store_file(dir.get(), "manifest");
  if (!bytes) return bytes.error().wrap(fmt::format("checkpoint `{}`", id));
  auto manifest = parse_manifest(*bytes);
  if (!manifest) return manifest.error().wrap(fmt::format("checkpoint `{}`", id));
  auto skipped = read_store_file(dir.get(), "skipped");
  std::set<std::string> keep;
  for (auto& s : parse_skipped(skipped ? *skipped : std::string{})) keep.insert(std::move(s.path));
  // Checked before anything is written: a refusal changes nothing.
  if (!force)
    if (auto why = refusal(store, workspace); !why.empty()) return sys::plain_error(why);
  auto tree = open_listable(dir.get(), "tree");
  if (!tree.valid()) return sys::errno_error(fmt::format("checkpoint `{}`", id));
  if (auto s = restore_tree(tree.get(), workspace, *manifest, keep); !s)
    return s.error().wrap("the workspace is partly restored (run the same command with --force once the cause is fixed)");
  // The workspace is now as the checkpoint was: a known state, so a second restore needs no --force.
  if (auto s = write_store_file(store, kState, serialize(snapshot(workspace))); !s)
    log::warn("cannot record the restored workspace ({}); the next restore will need --force", s.error().message());
  return sys::ok_status();
}

}  // namespace

std::string checkpoints_data_home(const std::string& home, const CallerEnvironment& env) {
  if (!env.xdg_data_home.empty()) return env.xdg_data_home;
  return home.empty() ? std::string() : home + "/.local/share";
}

sys::Result<SavedCheckpoint> make_checkpoint(const Policy& p, const std::string& data_home) {
  if (data_home.empty()) return sys::plain_error("--checkpoint: no $HOME to keep checkpoints in");
  const auto& workspace = p.fs.workspace;
  auto store = prepare_store(p, store_for(workspace, data_home));
  if (!store) return store.error();
  auto ws = open_workspace(workspace);
  if (!ws.valid()) return sys::errno_error(fmt::format("--checkpoint: the workspace `{}`", workspace));
  // A run begins: until it ends (record_run_end), how the workspace is left is not known.
  if (::unlinkat(store->get(), kState, 0) != 0 && errno != ENOENT) return sys::errno_error("--checkpoint: the store");
  auto temp = fmt::format(".new-{}", ::getpid());
  if (::mkdirat(store->get(), temp.c_str(), 0700) != 0) return sys::errno_error("--checkpoint: the store");
  auto dir = open_listable(store->get(), temp.c_str());
  auto saved = dir.valid() ? fill_checkpoint(dir.get(), ws.get(), store->get()) : sys::errno_error("--checkpoint: the store");
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
  auto store = open_store(store_for(workspace, data_home));
  auto ws = open_workspace(workspace);
  sys::Status s = !store ? sys::Status(store.error())
                  : !*store || !ws.valid() ? sys::Status(sys::errno_error("open"))
                                           : write_store_file((*store)->get(), kState, serialize(snapshot(ws.get())));
  if (!s)
    log::warn("cannot record how the run left the workspace ({}): `confine checkpoints restore` will need --force",
              s.error().message());
}

int list_checkpoints(const std::string& workspace, const std::string& data_home) {
  auto path = store_for(workspace, data_home);
  auto store = open_store(path);
  if (!store) {
    log::error("{}", store.error().message());
    return 125;
  }
  auto ids = *store ? checkpoint_ids((*store)->get()) : std::vector<std::string>{};
  if (ids.empty()) {
    std::printf("no checkpoints of %s (make one with confine --checkpoint)\n", workspace.c_str());
    return 0;
  }
  std::printf("checkpoints of %s, newest first (store %s):\n", workspace.c_str(), path.c_str());
  for (const auto& id : ids) {
    auto dir = open_listable((*store)->get(), id.c_str());
    auto text = dir.valid() ? read_store_file(dir.get(), "summary") : sys::errno_error("open");
    std::printf("  %s  %s\n", id.c_str(), text ? text->c_str() : "(damaged)");
    auto skipped = dir.valid() ? read_store_file(dir.get(), "skipped") : sys::errno_error("open");
    for (const auto& s : parse_skipped(skipped ? *skipped : std::string{}))
      std::printf("      not saved: %s (%s)\n", printable(s.path).c_str(), s.why.c_str());
  }
  std::printf("restore one: confine checkpoints restore -w %s [ID|latest] [--force]\n", workspace.c_str());
  return 0;
}

int restore_checkpoint(const std::string& workspace, const std::string& data_home, const std::string& id, bool force) {
  auto path = store_for(workspace, data_home);
  // A run on the workspace could have written there what a restore would write (see prepare_store).
  if (is_within(path, workspace)) {
    log::error("checkpoints restore: the store `{}` is in the workspace, where a run could have planted it; set "
               "XDG_DATA_HOME to a directory outside the workspace", path);
    return 125;
  }
  auto store = open_store(path);
  if (!store) {
    log::error("checkpoints restore: {}", store.error().message());
    return 125;
  }
  auto ids = *store ? checkpoint_ids((*store)->get()) : std::vector<std::string>{};
  if (ids.empty()) {
    log::error("checkpoints restore: no checkpoints of {} (make one with confine --checkpoint)", workspace);
    return 125;
  }
  auto chosen = id.empty() || id == "latest" ? ids.front() : id;
  if (std::find(ids.begin(), ids.end(), chosen) == ids.end()) {
    log::error("checkpoints restore: no checkpoint `{}` of {} (`confine checkpoints list` shows them)", printable(chosen), workspace);
    return 125;
  }
  auto ws = open_workspace(workspace);
  if (!ws.valid()) {
    log::error("checkpoints restore: the workspace `{}`: {}", workspace, std::strerror(errno));
    return 125;
  }
  if (auto s = restore((*store)->get(), ws.get(), chosen, force); !s) {
    log::error("checkpoints restore {}: {}", chosen, s.error().message());
    return 125;
  }
  log::emit("confine: ", fmt::format("restored checkpoint {} into {}", chosen, workspace));
  return 0;
}

}  // namespace confine::run
