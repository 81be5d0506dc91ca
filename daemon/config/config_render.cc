// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Renders the shipped configuration file and the docs table from the
// settings table (declared in settings.h).

#include <string>

#include "daemon/config/settings.h"

namespace rdmad {
namespace {

constexpr std::string_view kTemplateHeader =
    "# rdmad configuration (/etc/rdmad/rdmad.toml).\n"
    "#\n"
    "# Every setting is shown commented out at its default value: uncomment\n"
    "# and edit a line to change it. Precedence, lowest first: defaults,\n"
    "# this file, RDMA_* variables, RDMAD_<SECTION>_<KEY> variables (e.g.\n"
    "# RDMAD_QP_TIMEOUT), command-line flags.\n"
    "#\n"
    "# Check a file with: rdmad --check-config /etc/rdmad/rdmad.toml\n"
    "# Reload a running daemon with SIGHUP; a bad file keeps the old config.\n"
    "# Reference: docs/configuration.md\n";

void AppendSection(const SettingSection& section, std::string* out) {
  *out += "\n# " + std::string(section.help) + "\n";
  if (section.array) {
    *out += "# [[" + std::string(section.name) + "]]\n";
  } else {
    *out += "[" + std::string(section.name) + "]\n";
  }
  for (const Setting& s : Settings()) {
    if (s.section() != section.name) continue;
    if (section.array) {
      std::string_view value = s.example.empty() ? s.default_toml : s.example;
      std::string note =
          s.required ? " Required." : " Default: " + std::string(s.default_toml) + ".";
      *out += "# # " + std::string(s.help) + note + "\n";
      *out += "# " + std::string(s.name()) + " = " + std::string(value) + "\n";
    } else {
      *out += "\n# " + std::string(s.help) + "\n";
      *out += "# " + std::string(s.name()) + " = " + std::string(s.default_toml) + "\n";
    }
  }
}

// Escapes text for a Markdown table cell.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Code(std::string_view text) {
  return text.empty() ? std::string() : "`" + Cell(text) + "`";
}

}  // namespace

std::string RenderConfigTemplate() {
  std::string out(kTemplateHeader);
  for (const SettingSection& section : SettingSections()) {
    AppendSection(section, &out);
  }
  return out;
}

std::string RenderSettingsDocTable() {
  std::string out =
      "| Key | Type | Default | Allowed | Environment | Description |\n"
      "|---|---|---|---|---|---|\n";
  for (const Setting& s : Settings()) {
    std::string def = s.required ? "(required)" : Code(s.default_toml);
    out += "| " + Code(s.key) + " | " + Cell(SettingTypeName(s)) + " | " + def + " | " +
           Cell(SettingAllowedText(s)) + " | " + Code(s.env) + " | " + Cell(s.help) + " |\n";
  }
  return out;
}

}  // namespace rdmad
