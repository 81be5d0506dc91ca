// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl top: a live view of the daemon's peers, rails and channels with
// the rates the applications' traffic makes (top_view.h), refreshed every
// interval; --once (or -n) for a set number of frames, --json for scripts.

#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "client/rdmactl/command.h"
#include "client/rdmactl/top_view.h"

namespace rdmactl {
namespace {

struct TopArgs {
  double interval_s = 2;  // the library reports about once a second
  uint64_t iterations = 0;
  bool once = false;
  size_t max_channels = 20;
};

rdmad::StatusOr<TopSample> Sample(rdmad::Client& client) {
  TopSample s;
  s.at = std::chrono::steady_clock::now();
  auto status = client.GetStatus();
  if (!status.ok()) return status.status();
  s.status = std::move(status).value();
  auto peers = client.ListPeers();
  if (!peers.ok()) return peers.status();
  s.peers = std::move(peers).value();
  auto channels = client.ListChannels();
  if (!channels.ok()) return channels.status();
  s.channels = std::move(channels).value();
  return s;
}

int Top(Context& ctx, const TopArgs& a) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  uint64_t frames = a.once ? 1 : a.iterations;  // 0: until interrupted
  bool screen = !ctx.globals.json && frames != 1 && isatty(fileno(ctx.out));
  auto interval = std::chrono::duration<double>(a.interval_s);
  auto before = Sample(*client);
  if (!before.ok()) return ReportError(ctx, before.status());
  for (uint64_t frame = 0; frames == 0 || frame < frames; ++frame) {
    std::this_thread::sleep_until(before->at +
                                  std::chrono::duration_cast<std::chrono::nanoseconds>(interval));
    auto now = Sample(*client);
    if (!now.ok()) return ReportError(ctx, now.status());
    TopView view = ComputeTopView(*before, *now);
    if (ctx.globals.json) {
      // One document per frame: on a line of its own when there are more.
      std::fprintf(ctx.out, "%s\n", DumpJson(TopJson(view), frames == 1 ? 2 : -1).c_str());
    } else {
      if (screen) std::fputs("\x1b[H\x1b[2J", ctx.out);  // home, clear: top's way
      if (frame > 0 && !screen) std::fputs("\n", ctx.out);
      std::fputs(RenderTop(view, a.max_channels).c_str(), ctx.out);
    }
    std::fflush(ctx.out);
    before = std::move(now);
  }
  return kExitOk;
}

}  // namespace

void DeclareTop(CLI::App& verb, Context& ctx) {
  auto a = std::make_shared<TopArgs>();
  verb.add_option("-d,--interval", a->interval_s, "seconds between frames (2)")
      ->check(CLI::Range(0.1, 3600.0));
  verb.add_option("-n,--iterations", a->iterations, "frames, then exit (0: until interrupted)");
  verb.add_flag("--once", a->once, "one frame (over one interval), then exit");
  verb.add_option("--channels", a->max_channels, "the busiest channels shown (20)")
      ->check(CLI::Range(size_t(0), size_t(100000)));
  RunsWith(verb, ctx, [&ctx, a] { return Top(ctx, *a); });
}

}  // namespace rdmactl
