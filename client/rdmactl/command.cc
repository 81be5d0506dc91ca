// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/command.h"

namespace rdmactl {

rdmad::ClientOptions ClientOptionsFor(const Globals& globals) {
  rdmad::ClientOptions options;
  options.socket_path = globals.socket;
  if (globals.connect_timeout_ms > 0) {
    options.connect_timeout = std::chrono::milliseconds(globals.connect_timeout_ms);
  }
  return options;
}

std::unique_ptr<rdmad::Client> ConnectOrReport(Context& ctx, int* exit_code) {
  rdmad::ClientOptions options = ClientOptionsFor(ctx.globals);
  auto client = rdmad::Client::Open(options);
  if (client.ok()) return std::move(client).value();
  const rdmad::Status& st = client.status();
  const std::string code(rdmad::StatusCodeName(st.code()));
  if (st.code() == rdmad::StatusCode::kPermissionDenied) {
    *exit_code = PrintError(ctx, "", code, st.message(), kExitFailure);
  } else {
    *exit_code = PrintError(
        ctx, "", code,
        "rdmad is not reachable (" + st.message() + "); start it with 'systemctl start rdmad'",
        kExitUnreachable);
  }
  return nullptr;
}

int PrintError(Context& ctx, std::string_view verb, std::string_view code,
               const std::string& message, int exit) {
  if (ctx.globals.json) {
    std::fflush(ctx.out);  // after what the verb printed so far
    PrintJson(
        ctx,
        Json{{"error",
              {{"command", std::string(verb)}, {"code", std::string(code)}, {"message", message}}},
             {"exit_code", exit}});
    return exit;
  }
  std::fflush(ctx.out);
  if (verb.empty()) {
    std::fprintf(ctx.err, "rdmactl: %s\n", message.c_str());
  } else {
    std::fprintf(ctx.err, "rdmactl %.*s: %s\n", int(verb.size()), verb.data(), message.c_str());
  }
  return exit;
}

int ReportError(Context& ctx, const rdmad::Status& status) {
  int exit = status.code() == rdmad::StatusCode::kUnavailable ? kExitUnreachable : kExitFailure;
  return PrintError(ctx, "", rdmad::StatusCodeName(status.code()), status.ToString(), exit);
}

int Fail(Context& ctx, std::string_view verb, const std::string& message) {
  return PrintError(ctx, verb, "FAILED", message, kExitFailure);
}

int UsageError(Context& ctx, std::string_view verb, const std::string& message) {
  return PrintError(ctx, verb, "USAGE", message, kExitUsage);
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
