// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/command.h"

#include <charconv>

namespace rdmactl {

std::unique_ptr<rdmad::Client> ConnectOrReport(Context& ctx, int* exit_code) {
  rdmad::ClientOptions options;
  options.socket_path = ctx.globals.socket;
  auto client = rdmad::Client::Open(options);
  if (client.ok()) return std::move(client).value();
  const rdmad::Status& st = client.status();
  if (st.code() == rdmad::StatusCode::kPermissionDenied) {
    std::fprintf(ctx.err, "rdmactl: %s\n", st.message().c_str());
    *exit_code = kExitFailure;
  } else {
    std::fprintf(ctx.err,
                 "rdmactl: rdmad is not reachable (%s); start it with "
                 "'systemctl start rdmad'\n",
                 st.message().c_str());
    *exit_code = kExitUnreachable;
  }
  return nullptr;
}

int ReportError(Context& ctx, const rdmad::Status& status) {
  std::fprintf(ctx.err, "rdmactl: %s\n", status.ToString().c_str());
  return status.code() == rdmad::StatusCode::kUnavailable ? kExitUnreachable : kExitFailure;
}

int UsageError(Context& ctx, std::string_view verb, const std::string& message) {
  std::fprintf(ctx.err, "rdmactl %.*s: %s\n", int(verb.size()), verb.data(), message.c_str());
  return kExitUsage;
}

bool ArgCountIs(Context& ctx, std::string_view verb, size_t min, size_t max,
                std::string_view usage) {
  if (ctx.args.size() >= min && ctx.args.size() <= max) return true;
  std::string message = "usage: rdmactl " + std::string(verb);
  if (!usage.empty()) message += " " + std::string(usage);
  UsageError(ctx, verb, message);
  return false;
}

bool ParseUint(std::string_view text, uint64_t max, uint64_t* value) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v > max) {
    return false;
  }
  *value = v;
  return true;
}

std::string DaemonMessage(const rdmad::Status& status, std::string_view method) {
  const std::string& message = status.message();
  std::string prefix = std::string(method) + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

void PrintText(Context& ctx, const std::string& text) { std::fputs(text.c_str(), ctx.out); }

void PrintJson(Context& ctx, const Json& json) {
  std::fprintf(ctx.out, "%s\n", DumpJson(json, 2).c_str());
}

}  // namespace rdmactl
