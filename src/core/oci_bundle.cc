#include "core/oci_bundle.h"

#include <string>

#include "core/ids.h"
#include "core/json_text.h"

namespace confine {
namespace {

using nlohmann::json;
using sys::Result;

constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
constexpr int kMaxDepth = 32;  // a runtime config nests about five deep

Result<std::vector<std::string>> strings_at(const json& process, const char* key, const std::string& source) {
  std::vector<std::string> out;
  auto it = process.find(key);
  if (it == process.end() || it->is_null()) return out;
  auto bad = sys::plain_error(source + ": process." + key + ": must be an array of strings");
  if (!it->is_array()) return bad;
  for (const auto& v : *it) {
    if (!v.is_string()) return bad;
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<unsigned> id_at(const json& user, const char* key, const std::string& source) {
  auto it = user.find(key);
  // A negative or fractional number is no id at all; the range is every parser's (core/ids.h).
  if (it == user.end() || !it->is_number_unsigned() || !is_valid_id(it->get<std::uint64_t>()))
    return sys::plain_error(source + ": process.user." + key + ": must be a user id (a number below " +
                            std::to_string(kMaxId + 1ull) + ")");
  return static_cast<unsigned>(it->get<std::uint64_t>());
}

Result<BundleProcess> convert(const json& doc, const std::string& source) {
  BundleProcess p;
  if (!doc.is_object()) return sys::plain_error(source + ": top level: must be an object");
  auto process = doc.find("process");
  if (process == doc.end() || process->is_null()) return p;
  if (!process->is_object()) return sys::plain_error(source + ": process: must be an object");
  auto args = strings_at(*process, "args", source);
  if (!args) return args.error();
  p.args = std::move(*args);
  auto env = strings_at(*process, "env", source);
  if (!env) return env.error();
  for (std::size_t i = 0; i < env->size(); ++i) {
    const auto& e = (*env)[i];
    if (e.find('=') == std::string::npos || e.front() == '=' || e.find('\0') != std::string::npos)
      return sys::plain_error(source + ": process.env[" + std::to_string(i) + "]: expected NAME=VALUE");
  }
  p.env = std::move(*env);
  if (auto cwd = process->find("cwd"); cwd != process->end() && !cwd->is_null()) {
    if (!cwd->is_string() || !cwd->get<std::string>().starts_with("/"))
      return sys::plain_error(source + ": process.cwd: must be an absolute path");
    p.cwd = cwd->get<std::string>();
  }
  if (auto user = process->find("user"); user != process->end() && !user->is_null()) {
    if (!user->is_object()) return sys::plain_error(source + ": process.user: must be an object");
    auto uid = id_at(*user, "uid", source);
    if (!uid) return uid.error();
    auto gid = id_at(*user, "gid", source);
    if (!gid) return gid.error();
    p.user = std::pair{*uid, *gid};
  }
  return p;
}

}  // namespace

Result<BundleProcess> parse_bundle_config(std::string_view text, const std::string& source) {
  if (text.size() > kMaxBytes) return sys::plain_error(source + ": file: larger than 1 MiB");
  auto doc = parse_bounded_json(text, source, kMaxDepth);
  if (!doc) return doc.error();
  try {
    return convert(*doc, source);
  } catch (const json::exception& e) {  // every access checks the type first; this only keeps one from escaping
    return sys::plain_error(source + ": " + e.what());
  }
}

}  // namespace confine
