// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ParseConfig: TOML text to Config, every problem reported as
// "FILE:LINE:COLUMN: message" in document order.

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "daemon/config/config.h"
#include "daemon/config/config_checks.h"
#include "daemon/config/config_toml.h"
#include "daemon/config/settings.h"

namespace rdmad {
namespace {

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string SectionNames() {
  std::string out;
  for (const SettingSection& s : SettingSections()) {
    out += (out.empty() ? "" : ", ") + std::string(s.name);
  }
  return out;
}

std::string KeysOf(const SettingSection& section) {
  std::string out;
  for (const Setting& s : Settings()) {
    if (s.section() != section.name) continue;
    out += (out.empty() ? "" : ", ") + std::string(s.name());
  }
  return out;
}

std::string Header(const SettingSection& section) {
  std::string name(section.name);
  return section.array ? "[[" + name + "]]" : "[" + name + "]";
}

// Walks the parsed document, storing values into config and collecting
// issues. One use per document; not thread-safe.
class FileParser {
 public:
  explicit FileParser(Config* config) : config_(config) {}

  std::vector<ConfigIssue> Parse(const toml::table& root) {
    for (auto&& [key, node] : root) {
      const SettingSection* section = FindSection(key.str());
      if (section == nullptr) {
        UnknownTopLevel(key, node);
      } else if (section->array) {
        ParseArraySection(*section, node);
      } else {
        ParseSection(*section, node);
      }
    }
    CheckPeerNames(root);
    CheckPoolPeers(root);
    return std::move(issues_);
  }

 private:
  void UnknownTopLevel(const toml::key& key, const toml::node& node) {
    if (!node.is_table()) {
      UnknownKey(key, key.str(), nullptr);
      return;
    }
    std::string suggestion = SuggestSection(key.str());
    std::string message = "unknown section " + Quote(key.str());
    message += suggestion.empty() ? "; known sections: " + SectionNames()
                                  : "; did you mean " + Quote(suggestion) + "?";
    AddIssue(key.source(), message, &issues_);
  }

  void UnknownKey(const toml::key& key, std::string_view full_key, const SettingSection* section) {
    if (full_key == "daemon.peer_insecure") {
      AddIssue(key.source(),
               "daemon.peer_insecure was removed: every peer call is authenticated, by mutual "
               "TLS (daemon.tls_*) or a shared key (daemon.peer_key_file; rdmactl peer-key "
               "FILE makes one)",
               &issues_);
      return;
    }
    std::string suggestion = SuggestKey(full_key);
    std::string message = "unknown key " + Quote(full_key);
    if (!suggestion.empty()) {
      message += "; did you mean " + Quote(suggestion) + "?";
    } else if (section != nullptr) {
      message += "; known keys in " + Header(*section) + ": " + KeysOf(*section);
    } else {
      message += "; settings belong in a section: " + SectionNames();
    }
    AddIssue(key.source(), message, &issues_);
  }

  void WrongType(std::string_view what, std::string_view expected, const toml::node& node) {
    AddIssue(node.source(),
             std::string(what) + ": expected " + std::string(expected) + ", got " +
                 std::string(TomlTypeName(node)),
             &issues_);
  }

  void ParseSection(const SettingSection& section, const toml::node& node) {
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      WrongType(section.name, "a table", node);
      return;
    }
    for (auto&& [key, value] : *table) {
      std::string full = std::string(section.name) + "." + std::string(key.str());
      const Setting* setting = FindSetting(full);
      if (setting == nullptr) {
        UnknownKey(key, full, &section);
        continue;
      }
      std::optional<SettingValue> decoded = DecodeTomlSetting(*setting, full, value, &issues_);
      if (decoded) setting->store(*decoded, config_);
    }
  }

  void ParseArraySection(const SettingSection& section, const toml::node& node) {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      WrongType(section.name, "an array of tables (" + Header(section) + ")", node);
      return;
    }
    for (size_t i = 0; i < array->size(); ++i) {
      std::string entry_key = std::string(section.name) + "[" + std::to_string(i) + "]";
      const toml::table* entry = (*array)[i].as_table();
      if (entry == nullptr) {
        WrongType(entry_key, "a table", (*array)[i]);
        continue;
      }
      section.add_entry(config_);
      ParseEntry(section, entry_key, *entry);
    }
  }

  void ParseEntry(const SettingSection& section, const std::string& entry_key,
                  const toml::table& entry) {
    for (auto&& [key, value] : entry) {
      std::string full = std::string(section.name) + "." + std::string(key.str());
      const Setting* setting = FindSetting(full);
      if (setting == nullptr) {
        UnknownKey(key, full, &section);
        continue;
      }
      std::string shown = entry_key + "." + std::string(key.str());
      std::optional<SettingValue> decoded = DecodeTomlSetting(*setting, shown, value, &issues_);
      if (decoded) setting->store(*decoded, config_);
    }
    for (const Setting& s : Settings()) {
      if (s.section() != section.name || entry.contains(s.name())) continue;
      if (s.required) {
        AddIssue(entry.source(),
                 entry_key + " (" + Header(section) + "): missing required key " + Quote(s.name()),
                 &issues_);
      } else if (StatusOr<SettingValue> def = DefaultSettingValue(s); def.ok()) {
        s.store(*def, config_);
      }
    }
  }

  // Each [[peers]] name is unique: later duplicates are errors.
  void CheckPeerNames(const toml::table& root) {
    std::map<std::string, uint32_t> first_line;
    ForEachString(root, "peers", "name", [&](size_t i, const toml::value<std::string>& name) {
      auto [it, inserted] = first_line.emplace(name.get(), name.source().begin.line);
      if (inserted) return;
      AddIssue(name.source(),
               "peers[" + std::to_string(i) + "].name = " + QuoteToml(name.get()) +
                   " is a duplicate of the peer at line " + std::to_string(it->second),
               &issues_);
    });
  }

  // Each [[pool]] peer names a [[peers]] entry.
  void CheckPoolPeers(const toml::table& root) {
    std::set<std::string> names;
    ForEachString(root, "peers", "name",
                  [&](size_t, const toml::value<std::string>& name) { names.insert(name.get()); });
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    ForEachString(root, "pool", "peer", [&](size_t i, const toml::value<std::string>& peer) {
      if (names.count(peer.get()) > 0 || !CheckPeerName(peer.get()).empty()) return;
      AddIssue(peer.source(),
               "pool[" + std::to_string(i) + "].peer = " + QuoteToml(peer.get()) +
                   " is not the name of a [[peers]] entry" +
                   (known.empty() ? "; none are defined" : "; known peers: " + known),
               &issues_);
    });
  }

  // Calls fn(index, value) for each string root[array][index][key].
  template <typename Fn>
  static void ForEachString(const toml::table& root, std::string_view array_name,
                            std::string_view key, Fn fn) {
    const toml::array* array = root[array_name].as_array();
    if (array == nullptr) return;
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table* entry = (*array)[i].as_table();
      const toml::node* node = entry == nullptr ? nullptr : entry->get(key);
      if (node != nullptr && node->is_string()) fn(i, *node->as_string());
    }
  }

  Config* config_;
  std::vector<ConfigIssue> issues_;
};

std::string FormatIssue(std::string_view source, const ConfigIssue& issue) {
  return std::string(source) + ":" + std::to_string(issue.line) + ":" +
         std::to_string(issue.column) + ": " + issue.message;
}

}  // namespace

StatusOr<Config> ParseConfig(std::string_view text, std::string_view source_name) {
  ConfigIssue syntax;
  std::optional<toml::table> root = ParseTomlText(text, source_name, &syntax);
  if (!root) return Status::InvalidArgument(FormatIssue(source_name, syntax));
  Config config = DefaultConfig();
  config.source = std::string(source_name);
  std::vector<ConfigIssue> issues = FileParser(&config).Parse(*root);
  if (issues.empty()) return config;
  std::stable_sort(issues.begin(), issues.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  std::string message;
  for (const ConfigIssue& issue : issues) {
    message += (message.empty() ? "" : "\n") + FormatIssue(source_name, issue);
  }
  return Status::InvalidArgument(message);
}

}  // namespace rdmad
