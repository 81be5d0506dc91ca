// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The settings table is consistent, and the shipped etc/rdmad/rdmad.toml and
// the table in docs/configuration.md are what it renders. After changing the
// table, regenerate both files with:
//   RDMAD_REGENERATE=1 rdmad_unit_tests --gtest_filter='SettingsSyncTest.*'

#include "daemon/config/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace rdmad {
namespace {

constexpr std::string_view kBegin = "<!-- settings-table:begin -->\n";
constexpr std::string_view kEnd = "<!-- settings-table:end -->";
constexpr std::string_view kRegenerate =
    "RDMAD_REGENERATE=1 rdmad_unit_tests "
    "--gtest_filter='SettingsSyncTest.*'";

std::string SourcePath(std::string_view relative) {
  return std::string(RDMAD_SOURCE_DIR) + "/" + std::string(relative);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Regenerating() {
  const char* value = std::getenv("RDMAD_REGENERATE");
  return value != nullptr && std::string_view(value) == "1";
}

bool IsArraySetting(const Setting& s) {
  const SettingSection* section = FindSection(s.section());
  return section != nullptr && section->array;
}

TEST(SettingsTest, KeysAreUniqueAndInKnownSections) {
  std::set<std::string_view> keys;
  for (const Setting& s : Settings()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_NE(FindSection(s.section()), nullptr) << s.key;
    EXPECT_NE(s.store, nullptr) << s.key;
    EXPECT_EQ(FindSetting(s.key), &s);
  }
}

TEST(SettingsTest, EveryKeyHasOneLineHelp) {
  for (const Setting& s : Settings()) {
    EXPECT_FALSE(s.help.empty()) << s.key;
    EXPECT_EQ(s.help.find('\n'), std::string_view::npos) << s.key;
    EXPECT_LE(s.help.size(), 90u) << s.key;
  }
  for (const SettingSection& s : SettingSections()) {
    EXPECT_FALSE(s.help.empty()) << s.name;
  }
}

TEST(SettingsTest, DefaultsAreValidAndCanonical) {
  for (const Setting& s : Settings()) {
    if (s.required) {
      EXPECT_TRUE(IsArraySetting(s)) << s.key << ": only array entries";
      EXPECT_TRUE(s.default_toml.empty()) << s.key;
      continue;
    }
    StatusOr<SettingValue> value = DefaultSettingValue(s);
    ASSERT_TRUE(value.ok()) << s.key << ": " << value.status().ToString();
    EXPECT_EQ(FormatSettingValue(s, *value), s.default_toml) << s.key;
  }
}

TEST(SettingsTest, EnvNamesFollowTheConvention) {
  std::set<std::string_view> names;
  for (const Setting& s : Settings()) {
    if (IsArraySetting(s)) {
      EXPECT_TRUE(s.env.empty()) << s.key;
      EXPECT_FALSE(s.example.empty()) << s.key;
      continue;
    }
    std::string expected = "RDMAD_";
    for (char c : s.key) {
      expected += c == '.' ? '_' : static_cast<char>(std::toupper(c));
    }
    EXPECT_EQ(s.env, expected) << s.key;
    EXPECT_TRUE(names.insert(s.env).second) << s.env;
  }
  for (const EnvAlias& alias : EnvAliases()) {
    EXPECT_TRUE(names.insert(alias.name).second) << alias.name;
    EXPECT_FALSE(alias.help.empty()) << alias.name;
    if (alias.kind != EnvAlias::Kind::kDeviceFilter) {
      EXPECT_NE(FindSetting(alias.key), nullptr) << alias.name;
    }
  }
}

TEST(SettingsTest, SuggestsCloseKeysOnly) {
  EXPECT_EQ(SuggestKey("qp.timout"), "qp.timeout");
  EXPECT_EQ(SuggestKey("qp.log_level"), "daemon.log_level");
  EXPECT_EQ(SuggestKey("QP.Timeout"), "qp.timeout");
  EXPECT_EQ(SuggestKey("qp.retry_count"), "qp.retry_cnt");
  EXPECT_EQ(SuggestKey("qp.zzzzzzzz"), "");
  EXPECT_EQ(SuggestSection("dameon"), "daemon");
  EXPECT_EQ(SuggestSection("peer"), "peers");
  EXPECT_EQ(SuggestSection("zzzz"), "");
}

TEST(SettingsTest, CheckSettingItemReasons) {
  const Setting* timeout = FindSetting("qp.timeout");
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(CheckSettingItem(*timeout, int64_t{31}), "");
  EXPECT_EQ(CheckSettingItem(*timeout, int64_t{32}), "out of range; allowed 0..31");
  const Setting* mode = FindSetting("daemon.socket_mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(FormatSettingValue(*mode, int64_t{0640}), "0o640");
  EXPECT_EQ(QuoteToml("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

TEST(SettingsTest, DocTableHasOneRowPerKey) {
  std::string table = RenderSettingsDocTable();
  for (const Setting& s : Settings()) {
    EXPECT_NE(table.find("| `" + std::string(s.key) + "` |"), std::string::npos) << s.key;
  }
}

// Compares a checked-in file with its rendering, or rewrites it when
// RDMAD_REGENERATE=1.
void ExpectInSync(const std::string& path, const std::string& expected) {
  if (Regenerating()) {
    std::ofstream(path) << expected;
    return;
  }
  EXPECT_TRUE(ReadFile(path) == expected)
      << path << " is out of date with the settings table "
      << "(daemon/config/settings.cc); regenerate it with:\n  " << kRegenerate;
}

TEST(SettingsSyncTest, ShippedConfigIsTheTemplate) {
  ExpectInSync(SourcePath("etc/rdmad/rdmad.toml"), RenderConfigTemplate());
}

TEST(SettingsSyncTest, DocsTableIsTheRenderedTable) {
  std::string path = SourcePath("docs/configuration.md");
  std::string doc = ReadFile(path);
  size_t begin = doc.find(kBegin);
  size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << path << " lacks " << kBegin;
  ASSERT_NE(end, std::string::npos) << path << " lacks " << kEnd;
  ASSERT_LT(begin, end);
  begin += kBegin.size();
  std::string expected = doc.substr(0, begin) + RenderSettingsDocTable() + doc.substr(end);
  ExpectInSync(path, expected);
}

TEST(SettingsSyncTest, DocsNameEveryEnvironmentVariable) {
  std::string doc = ReadFile(SourcePath("docs/configuration.md"));
  ASSERT_FALSE(doc.empty());
  for (const Setting& s : Settings()) {
    if (s.env.empty()) continue;
    EXPECT_NE(doc.find(s.env), std::string::npos) << s.env;
  }
  for (const EnvAlias& alias : EnvAliases()) {
    EXPECT_NE(doc.find(alias.name), std::string::npos) << alias.name;
  }
}

}  // namespace
}  // namespace rdmad
