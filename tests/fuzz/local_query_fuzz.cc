// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the local API's queries that take arguments: GetDevice,
// GetPortCounters and ResolvePath, with the handlers' checks (as in
// local_service.cc) and the real path policy over a fake inventory
// (channel_world.h), under a running config that the script may replace
// with fuzzed TOML (as a reload would). Input: a script of records
// (fuzz_support.h); ops in local_query_fuzz.h.

#include "tests/fuzz/local_query_fuzz.h"

#include <algorithm>

#include "common/endpoint_convert.h"
#include "daemon/config/config.h"
#include "daemon/policy/path_policy.h"
#include "daemon/rpc/proto_convert.h"
#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;
using fuzz::QueryOp;

namespace {

struct World final : SourceAddressLookup {
  Inventory inventory = fuzz::FakeInventory();
  Config config = DefaultConfig();
  std::optional<std::string> source;  // the kernel's for every peer

  std::optional<std::string> SourceAddressFor(const std::string&) const override { return source; }

  void Run(QueryOp op, std::string_view payload) {
    switch (op) {
      case QueryOp::kGetDevice: {
        v1::GetDeviceRequest req;
        if (!fuzz::Parse(payload, &req) || req.name().empty()) return;
        const DeviceInfo* device = inventory.Find(req.name());
        if (device == nullptr) return;
        FUZZ_CHECK(device->name == req.name());
        v1::Device out;
        ToProto(*device, &out);
        break;
      }
      case QueryOp::kGetPortCounters: {
        v1::GetPortCountersRequest req;
        if (!fuzz::Parse(payload, &req)) return;
        if (req.device().empty() || req.port() == 0 || req.port() > 255) return;
        // Daemon::PortCounters: only an inventory device's own port reaches sysfs.
        const DeviceInfo* d = inventory.Find(req.device());
        if (d == nullptr) return;
        FUZZ_CHECK(req.device().find('/') == std::string::npos);
        break;
      }
      case QueryOp::kResolvePath: {
        v1::ResolvePathRequest req;
        if (!fuzz::Parse(payload, &req) || req.peer_address().empty()) return;
        PathRequest request{req.peer_address(),
                            int(std::min<uint32_t>(req.peer_active_mtu(), 1u << 20))};
        auto path = ResolvePath(inventory, config, request, this);
        fuzz::CheckStatus(path.status());
        if (!path.ok()) return;
        const PathDecision& p = path.value();
        FUZZ_CHECK(inventory.Find(p.device) != nullptr);
        FUZZ_CHECK(p.port >= 1 && p.port <= 255);
        FUZZ_CHECK(IsIbMtu(p.mtu.mtu));
        FUZZ_CHECK(p.mtu.mtu <= config.mtu.cap);
        FUZZ_CHECK(!p.reasons.empty());
        v1::Path out;
        ToProto(p, &out);
        internal::RdmaPlan plan = internal::PlanFromPath(out);
        FUZZ_CHECK(plan.path_mtu_cap == uint32_t(p.mtu.mtu));
        break;
      }
      case QueryOp::kSetConfig: {
        StatusOr<Config> parsed = ParseConfig(payload, "fuzz.toml");
        fuzz::CheckStatus(parsed.status());
        if (!parsed.ok()) return;
        Status valid = ValidateConfig(parsed.value());
        fuzz::CheckStatus(valid);
        if (valid.ok()) config = std::move(parsed).value();
        break;
      }
      case QueryOp::kSetSource: {
        if (payload.empty()) {
          source.reset();
        } else {
          source = std::string(payload);
        }
        break;
      }
      case QueryOp::kCount: break;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  World world;
  fuzz::Script script(data, size, /*max_calls=*/32);
  uint8_t op;
  std::string_view payload;
  while (script.Next(&op, &payload)) {
    world.Run(static_cast<QueryOp>(op % uint8_t(QueryOp::kCount)), payload);
  }
  return 0;
}
