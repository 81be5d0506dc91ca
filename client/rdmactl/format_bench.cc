// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_bench.h"

#include <cstdio>

#include "client/rdmactl/format.h"
#include "client/rdmactl/format_connect.h"

namespace rdmactl {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool Sized(BenchTest t) { return t != BenchTest::kIdle && t != BenchTest::kConnect; }

// "over RDMA (rxe0, MTU 1024)" or "over TCP (why)".
std::string Transport(const rdmad::ChannelInfo& i) {
  std::string name = rdmad::ChannelTransportName(i.transport);
  if (i.transport == rdmad::ChannelTransport::kRdma) {
    return "over " + name + " (" + Dash(i.local_device) + ", MTU " + std::to_string(i.mtu) + ")";
  }
  return "over " + name + " (" + Dash(i.transport_reason) + ")";
}

// "1000 round trips per size" / "for 5.00 s per size".
std::string Amount(const BenchArgs& a) {
  const char* unit = a.test == BenchTest::kLat  ? "round trips"
                     : a.test == BenchTest::kBw ? "messages"
                     : a.test == BenchTest::kKv ? "batches"
                                                : "operations";
  if (a.iters > 0) return std::to_string(a.iters) + " " + unit + " per size and channel";
  return "for " + Fixed(a.duration_s, 2) + " s per size";
}

std::string Header(const BenchReport& r) {
  const BenchArgs& a = r.args;
  std::string text = "bench " + std::string(BenchTestName(a.test)) + " to " + a.peer + " (" +
                     r.channel.service + ") " + Transport(r.channel) + ", " +
                     Plural(a.channels, "channel", "channels");
  if (Sized(a.test)) text += ", " + Amount(a);
  if (a.depth > 1) text += ", " + std::to_string(a.depth) + " in flight";
  if (a.test == BenchTest::kKv) text += ", " + std::to_string(a.blocks) + " writes per batch";
  return text + "\n";
}

std::string LatencyTable(const BenchReport& r) {
  Table t({"#bytes", "#iters", "t_min[us]", "t_typical[us]", "t_avg[us]", "t_p99[us]",
           "t_p99.9[us]", "t_max[us]", "t_stdev[us]"});
  for (const SizeResult& s : r.sizes) {
    const LatencySummary& l = s.latency;
    t.AddRow({std::to_string(s.size), std::to_string(s.iters), Fixed(l.min_us, 2),
              Fixed(l.p50_us, 2), Fixed(l.avg_us, 2), Fixed(l.p99_us, 2), Fixed(l.p999_us, 2),
              Fixed(l.max_us, 2), Fixed(l.stddev_us, 2)});
  }
  return t.Render() + "latency: half round trips (as ib_send_lat); t_typical is the median\n";
}

std::string BandwidthTable(const BenchReport& r) {
  Table t({"#bytes", "#iters", "BW peak[MB/s]", "BW average[MB/s]", "BW peak[Gb/s]",
           "BW average[Gb/s]", "MsgRate[Mmsg/s]", "time[s]"});
  for (const SizeResult& s : r.sizes) {
    const Throughput& b = s.throughput;
    t.AddRow({std::to_string(s.size), std::to_string(s.iters), Fixed(b.peak_mbps, 2),
              Fixed(b.avg_mbps, 2), Fixed(b.peak_gbps, 3), Fixed(b.avg_gbps, 3),
              Fixed(b.msg_rate_mps, 6), Fixed(b.seconds, 3)});
  }
  return t.Render() +
         "MB = 2^20 bytes, Gb = 10^9 bits (as perftest); peak: the best rate over 1/20 of "
         "the run (at least 10 ms)\n";
}

// kv: the bandwidth, then how long each batch took to its notification.
std::string KvText(const BenchReport& r) {
  Table t({"#bytes", "#batches", "batch[MiB]", "BW average[MB/s]", "t_min[us]", "t_typical[us]",
           "t_avg[us]", "t_max[us]"});
  for (const SizeResult& s : r.sizes) {
    const LatencySummary& l = s.latency;
    double mib = double(s.size) * r.args.blocks / (1 << 20);
    t.AddRow({std::to_string(s.size), std::to_string(s.iters), Fixed(mib, 2),
              Fixed(s.throughput.avg_mbps, 2), Fixed(l.min_us, 0), Fixed(l.p50_us, 0),
              Fixed(l.avg_us, 0), Fixed(l.max_us, 0)});
  }
  return t.Render() +
         "t: one Submit of the batch's writes to the echo of its notification; MB = 2^20 bytes\n";
}

std::string IdleText(const BenchReport& r) {
  const IdleResult& i = r.idle;
  return Plural(r.args.channels, "channel", "channels") + " blocked in Recv for " +
         Fixed(i.wall_s, 2) + " s: CPU " + Fixed(i.cpu_percent, 3) + " % of one core (user " +
         Fixed(i.user_s, 3) + " s, system " + Fixed(i.system_s, 3) +
         " s; the whole rdmactl process)\n";
}

std::string ConnectText(const BenchReport& r) {
  const ConnectResult& c = r.connect;
  const LatencySummary& h = c.handshake;
  Table t({});
  t.AddRow({"cycles", std::to_string(c.cycles) + (c.pooled ? " pooled" : "") + " Connect+Close, " +
                          Plural(r.args.channels, "thread", "threads") + ", " +
                          Fixed(c.seconds, 3) + " s"});
  t.AddRow({"rate", Fixed(c.per_second, 2) + " connects/s"});
  t.AddRow({"Connect", "min " + FormatMicros(h.min_us) + ", p50 " + FormatMicros(h.p50_us) +
                           ", avg " + FormatMicros(h.avg_us) + ", p99 " + FormatMicros(h.p99_us) +
                           ", max " + FormatMicros(h.max_us)});
  return t.Render();
}

Json SizeJson(BenchTest test, const SizeResult& s) {
  Json j{{"size", s.size}, {"iters", s.iters}, {"seconds", s.seconds}};
  if (test == BenchTest::kLat) {
    const LatencySummary& l = s.latency;
    j["latency_us"] =
        Json{{"min", l.min_us},   {"typical", l.p50_us}, {"avg", l.avg_us},      {"p99", l.p99_us},
             {"p999", l.p999_us}, {"max", l.max_us},     {"stddev", l.stddev_us}};
    return j;
  }
  if (test == BenchTest::kKv) {
    const LatencySummary& l = s.latency;
    j["batch_us"] = Json{{"min", l.min_us},
                         {"typical", l.p50_us},
                         {"avg", l.avg_us},
                         {"p99", l.p99_us},
                         {"max", l.max_us}};
  }
  const Throughput& b = s.throughput;
  j["bytes"] = b.bytes;
  j["bw_peak_mbps"] = b.peak_mbps;
  j["bw_avg_mbps"] = b.avg_mbps;
  j["bw_peak_gbps"] = b.peak_gbps;
  j["bw_avg_gbps"] = b.avg_gbps;
  j["msg_rate_mps"] = b.msg_rate_mps;
  return j;
}

Json MillisJson(const LatencySummary& h) {
  return Json{{"min", h.min_us / 1000},
              {"p50", h.p50_us / 1000},
              {"avg", h.avg_us / 1000},
              {"p99", h.p99_us / 1000},
              {"max", h.max_us / 1000}};
}

}  // namespace

std::string FormatBench(const BenchReport& r) {
  std::string text = Header(r);
  switch (r.args.test) {
    case BenchTest::kLat: return text + LatencyTable(r);
    case BenchTest::kBw:
    case BenchTest::kWrite:
    case BenchTest::kRead: return text + BandwidthTable(r);
    case BenchTest::kKv: return text + KvText(r);
    case BenchTest::kIdle: return text + IdleText(r);
    case BenchTest::kConnect: return text + ConnectText(r);
  }
  return text;
}

Json BenchJson(const BenchReport& r) {
  const BenchArgs& a = r.args;
  Json j{{"test", BenchTestName(a.test)},
         {"peer", a.peer},
         {"channels", a.channels},
         {"iters", a.iters},
         {"depth", a.depth},
         {"blocks", a.blocks},
         {"duration_s", a.duration_s},
         {"channel", ChannelInfoJson(r.channel)}};
  if (Sized(a.test)) {
    Json results = Json::array();
    for (const SizeResult& s : r.sizes) results.push_back(SizeJson(a.test, s));
    j["results"] = results;
  } else if (a.test == BenchTest::kIdle) {
    j["idle"] = Json{{"seconds", r.idle.wall_s},
                     {"user_s", r.idle.user_s},
                     {"system_s", r.idle.system_s},
                     {"cpu_percent", r.idle.cpu_percent}};
  } else {
    const ConnectResult& c = r.connect;
    j["connect"] = Json{{"cycles", c.cycles},
                        {"seconds", c.seconds},
                        {"per_second", c.per_second},
                        {"pooled", c.pooled},
                        {"handshake_ms", MillisJson(c.handshake)}};
  }
  return j;
}

}  // namespace rdmactl
