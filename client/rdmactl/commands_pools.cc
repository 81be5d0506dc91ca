// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl pools: rdmad's pool table, one row per following client and
// (peer, service): the target, where it came from, and what the client's
// library reported (warm, in use, its last refill error).

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/format_pools.h"

namespace rdmactl {

std::string FormatPools(const std::vector<rdmad::PoolSummary>& pools) {
  if (pools.empty()) return std::string(kNoPoolsLine) + "\n";
  Table table(
      {"CLIENT", "PID", "PEER", "SERVICE", "TARGET", "SOURCE", "WARM", "IN USE", "LAST ERROR"});
  for (const rdmad::PoolSummary& p : pools) {
    table.AddRow({std::to_string(p.client_id), std::to_string(p.pid), p.peer, p.service,
                  std::to_string(p.target), Dash(p.source), std::to_string(p.warm),
                  std::to_string(p.in_use), Dash(p.last_error)});
  }
  return table.Render();
}

Json PoolsJson(const std::vector<rdmad::PoolSummary>& pools) {
  Json list = Json::array();
  for (const rdmad::PoolSummary& p : pools) list.push_back(RecordJson(p));
  return Json{{"pools", list}};
}

namespace {

int Pools(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto pools = client->ListPools();
  if (!pools.ok()) return ReportError(ctx, pools.status());
  if (ctx.globals.json) {
    PrintJson(ctx, PoolsJson(*pools));
  } else {
    PrintText(ctx, FormatPools(*pools));
  }
  return kExitOk;
}

}  // namespace

void DeclarePools(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return Pools(ctx); });
}

}  // namespace rdmactl
