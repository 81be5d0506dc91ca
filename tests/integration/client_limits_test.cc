// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The local API's per-client limits between two real daemons
// (docs/channels.md, "Local clients"): this test process, through raw gRPC
// calls, floods A with Connect handshakes that B's listener never answers
// and opens streams it never reads; another process (rdmactl) meanwhile
// gets its status, its channel table and a real channel to B's echo
// service at once. The flood is refused with RESOURCE_EXHAUSTED naming the
// limit, the process (by its pid) and the numbers.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/test_app.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Protobuf by hand (the generated code lives in rdmadclient): field
// numbers from proto/rdmad/v1/rdmad.proto.
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(char((v & 0x7f) | 0x80));
  out.push_back(char(v));
  return out;
}
std::string UintField(int field, uint64_t v) { return Varint(uint64_t(field) << 3) + Varint(v); }
std::string BytesField(int field, const std::string& bytes) {
  return Varint(uint64_t(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
// Reads a varint at bytes[*at]; 0 past the end.
uint64_t ReadVarint(const std::string& bytes, size_t* at) {
  uint64_t v = 0;
  for (int shift = 0; *at < bytes.size() && shift < 64; shift += 7) {
    uint8_t b = uint8_t(bytes[(*at)++]);
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}
// PlanChannelResponse.channel_ids' first (field 5, packed or not); 0 if none.
uint64_t FirstChannelId(const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    uint64_t tag = ReadVarint(bytes, &at);
    if (tag == (5 << 3 | 0)) return ReadVarint(bytes, &at);
    if (tag == (5 << 3 | 2)) {  // packed: the length, then the ids
      ReadVarint(bytes, &at);
      return ReadVarint(bytes, &at);
    }
    if ((tag & 7) == 0) {
      ReadVarint(bytes, &at);
    } else if ((tag & 7) == 2) {
      at += ReadVarint(bytes, &at);
    } else {
      return 0;
    }
  }
  return 0;
}
std::string ListenRequest(const std::string& service) { return BytesField(1, service); }
std::string PlanRequest(const std::string& peer, const std::string& service) {
  return BytesField(1, peer) + BytesField(2, service) + UintField(3, 1);  // force_tcp
}
// An initiator planning TCP: channels[0] = {channel_id, Endpoint{tcp:
// {token: 32 bytes}}}.
std::string ConnectRequest(uint64_t channel_id) {
  std::string tcp = BytesField(3, std::string(32, '\x5a'));
  return BytesField(4, UintField(1, channel_id) + BytesField(2, BytesField(2, tcp)));
}

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

struct Reply {
  grpc::Status status;
  std::string bytes;
  Clock::time_point at;
};

// A local API client speaking raw gRPC on its own connection. Its calls
// are cancelled and awaited on destruction.
class RawClient {
 public:
  explicit RawClient(const std::string& socket)
      : channel_(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials())),
        stub_(channel_) {}
  ~RawClient() {
    for (auto& c : calls_) c->context.TryCancel();
    for (auto& c : calls_) c->done.wait();
    for (auto& s : streams_) s->context.TryCancel();
    for (auto& s : streams_) s->ended.wait();
  }

  std::shared_future<Reply> Start(const std::string& method, const std::string& request) {
    auto call = std::make_shared<Unary>();
    call->context.set_deadline(std::chrono::system_clock::now() + 30s);
    grpc::Slice slice(request);
    call->request = grpc::ByteBuffer(&slice, 1);
    call->done = call->promise.get_future().share();
    Unary* c = call.get();
    stub_.UnaryCall(&c->context, "/rdmad.v1.Rdmad/" + method, grpc::StubOptions(), &c->request,
                    &c->response, [c](grpc::Status s) {
                      c->promise.set_value({s, Bytes(c->response), Clock::now()});
                    });
    calls_.push_back(call);
    return call->done;
  }
  Reply Call(const std::string& method, const std::string& request) {
    return Start(method, request).get();
  }

  // Opens a server stream and never reads from it. The future is ready
  // when the stream ends (at once when it is refused).
  std::shared_future<grpc::Status> OpenUnread(const std::string& method,
                                              const std::string& request) {
    auto stream = std::make_unique<Stream>();
    grpc::Slice slice(request);
    stream->out = grpc::ByteBuffer(&slice, 1);
    stream->ended = stream->status.get_future().share();
    stub_.PrepareBidiStreamingCall(&stream->context, "/rdmad.v1.Rdmad/" + method,
                                   grpc::StubOptions(), stream.get());
    stream->StartWrite(&stream->out, grpc::WriteOptions().set_last_message());
    stream->StartCall();
    streams_.push_back(std::move(stream));
    return streams_.back()->ended;
  }

 private:
  struct Unary {
    grpc::ClientContext context;
    grpc::ByteBuffer request, response;
    std::promise<Reply> promise;
    std::shared_future<Reply> done;
  };
  struct Stream : grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
    void OnDone(const grpc::Status& s) override { status.set_value(s); }
    grpc::ClientContext context;
    grpc::ByteBuffer out;
    std::promise<grpc::Status> status;
    std::shared_future<grpc::Status> ended;
  };
  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  std::vector<std::shared_ptr<Unary>> calls_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of text that contain every one of parts.
int CountLines(const std::string& text, const std::vector<std::string>& parts) {
  int n = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, end - at);
    bool all = true;
    for (const std::string& p : parts) all = all && Contains(line, p);
    n += all;
    at = end + 1;
  }
  return n;
}

constexpr int kConnectsPerClient = 4;
constexpr int kStreamsPerClient = 6;
constexpr int kPlansPerClient = 16;

class ClientLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started =
        pair_.Start("[limits]\nmax_connects_per_client = " + std::to_string(kConnectsPerClient) +
                    "\nmax_streams_per_client = " + std::to_string(kStreamsPerClient) +
                    "\nmax_plans_per_client = " + std::to_string(kPlansPerClient) + "\n");
    ASSERT_TRUE(started.ok()) << started.ToString();
    ASSERT_TRUE(testing::DaemonPair::WaitForLog(pair_.b(), "echo service: listening")) << Logs();
  }

  // rdmactl (another process) against A; its exit code, *out its output,
  // *took how long it ran.
  int Rdmactl(std::vector<std::string> args, std::string* out, Clock::duration* took) {
    args.insert(args.begin(), {"--socket", pair_.a().socket});
    auto t0 = Clock::now();
    int code = testing::RunCommand(RDMACTL_BINARY, args, out);
    *took = Clock::now() - t0;
    return code;
  }

  // A channel id planned on A to service on B, by the raw client; retried
  // while A's session to B comes up.
  uint64_t Plan(RawClient& raw, const std::string& service) {
    for (auto end = Clock::now() + 5s; Clock::now() < end; std::this_thread::sleep_for(100ms)) {
      Reply planned = raw.Call("PlanChannel", PlanRequest("B", service));
      if (planned.status.ok()) return FirstChannelId(planned.bytes);
      if (planned.status.error_code() != grpc::StatusCode::UNAVAILABLE) {
        ADD_FAILURE() << planned.status.error_message();
        return 0;
      }
    }
    ADD_FAILURE() << "A never planned a channel to B\n" << Logs();
    return 0;
  }

  std::string Logs() const { return pair_.Logs(); }
  std::string Pid() const { return std::to_string(getpid()); }

  testing::DaemonPair pair_;
};

// A flood of Connects whose handshakes hang (B's listener never reads nor
// answers): kConnectsPerClient go through, the rest are refused at once;
// another process's calls and channel are not held up.
TEST_F(ClientLimitsTest, AConnectFloodIsRefusedAndOthersStillConnect) {
  auto on_b = std::make_unique<RawClient>(pair_.b().socket);
  auto listener = on_b->OpenUnread("Listen", ListenRequest("sink"));
  RawClient flood(pair_.a().socket);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3 * kConnectsPerClient; ++i) ids.push_back(Plan(flood, "sink"));
  ASSERT_NE(ids.back(), 0u);

  auto t0 = Clock::now();
  std::vector<std::shared_future<Reply>> connects;
  for (uint64_t id : ids) connects.push_back(flood.Start("Connect", ConnectRequest(id)));
  int refused = 0;
  for (auto& c : connects) {
    if (c.wait_until(t0 + 2s) != std::future_status::ready) continue;  // in flight
    const Reply& r = c.get();
    ASSERT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << r.status.error_message() << "\n"
        << Logs();
    EXPECT_EQ(r.status.error_message(),
              "client pid " + Pid() + " has " + std::to_string(kConnectsPerClient) +
                  " Connect handshakes in flight, its limit (limits.max_connects_per_client = " +
                  std::to_string(kConnectsPerClient) + ")");
    EXPECT_LT(r.at - t0, 2s) << "refused at once";
    ++refused;
  }
  EXPECT_EQ(refused, 2 * kConnectsPerClient) << Logs();

  // Meanwhile another process: GetStatus, ListChannels, a channel to B's
  // echo service with messages both ways.
  std::string out;
  Clock::duration took;
  EXPECT_EQ(Rdmactl({"status"}, &out, &took), 0) << out;
  EXPECT_LT(took, 5s);
  EXPECT_EQ(Rdmactl({"channels"}, &out, &took), 0) << out;
  EXPECT_LT(took, 5s);
  EXPECT_EQ(CountLines(out, {"sink", "opening"}), kConnectsPerClient) << out;      // in flight
  EXPECT_EQ(CountLines(out, {"sink", "planned"}), 2 * kConnectsPerClient) << out;  // refused
  EXPECT_EQ(Rdmactl({"ping", "B", "-c", "3", "-i", "0"}, &out, &took), 0) << out << Logs();
  EXPECT_TRUE(Contains(out, "3 sent, 3 received, 0 lost")) << out;
  EXPECT_LT(took, 5s);
  EXPECT_TRUE(testing::DaemonPair::WaitForLog(pair_.a(), "refused: client pid " + Pid(), 1s));

  // The hung handshakes end with the listener; their slots come back.
  EXPECT_NE(listener.wait_for(0s), std::future_status::ready) << "B's listener is open";
  on_b.reset();
  for (auto& c : connects) ASSERT_EQ(c.wait_for(15s), std::future_status::ready);
  uint64_t again = Plan(flood, "sink");
  Reply later = flood.Call("Connect", ConnectRequest(again));
  EXPECT_EQ(later.status.error_code(), grpc::StatusCode::NOT_FOUND)
      << later.status.error_message() << " (no listener now, and no limit)";
}

// Streams this process opens and never reads count against its limit;
// beyond it they are refused at once, while another process still opens
// its channel's lifeline and uses the channel.
TEST_F(ClientLimitsTest, UnreadStreamsAreLimitedPerProcess) {
  RawClient raw(pair_.a().socket);
  std::vector<std::shared_future<grpc::Status>> streams;
  for (int i = 0; i < kStreamsPerClient / 2; ++i) {
    streams.push_back(raw.OpenUnread("WatchEvents", ""));
    streams.push_back(raw.OpenUnread("Listen", ListenRequest("unread." + std::to_string(i))));
  }
  for (int i = 0; i < 3; ++i) streams.push_back(raw.OpenUnread("WatchEvents", ""));
  std::this_thread::sleep_for(1s);
  int open = 0, refused = 0;
  for (auto& s : streams) {
    if (s.wait_for(0s) != std::future_status::ready) {
      ++open;
      continue;
    }
    ASSERT_EQ(s.get().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << s.get().error_message();
    EXPECT_EQ(s.get().error_message(),
              "client pid " + Pid() + " has " + std::to_string(kStreamsPerClient) +
                  " streams open, its limit (limits.max_streams_per_client = " +
                  std::to_string(kStreamsPerClient) + ")");
    ++refused;
  }
  EXPECT_EQ(open, kStreamsPerClient) << Logs();
  EXPECT_EQ(refused, 3);

  std::string out;
  auto t0 = Clock::now();
  EXPECT_EQ(
      testing::RunCommand(RDMACTL_BINARY,
                          {"--socket", pair_.a().socket, "ping", "B", "-c", "3", "-i", "0"}, &out),
      0)
      << out << Logs();
  EXPECT_LT(Clock::now() - t0, 5s);
  EXPECT_TRUE(Contains(out, "3 sent, 3 received, 0 lost")) << out;
}

// The p-th percentile of samples, in ms.
double Percentile(std::vector<Clock::duration> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t at = std::min(samples.size() - 1, size_t(p / 100 * double(samples.size())));
  return std::chrono::duration<double, std::milli>(samples[at]).count();
}

// Another process plans channels to B as fast as it can and never
// connects them: beyond limits.max_plans_per_client it is refused at once,
// and meanwhile this process's GetStatus calls and channels are served.
// Their latency is printed (FLOOD lines); the gate is that they are served.
TEST_F(ClientLimitsTest, APlanFloodIsRefusedAndOthersAreServed) {
  ASSERT_TRUE(testing::DaemonPair::WaitForLog(pair_.b(), "echo service: listening")) << Logs();
  ASSERT_TRUE(pair_.ConnectAB("rdmad.echo").ok()) << Logs();  // the session is up
  // GetStatus calls back to back, and a channel to B's echo service every
  // tenth, for a while: their latencies.
  int failed = 0;
  auto measure = [&](const char* label, Clock::duration how_long) {
    std::vector<Clock::duration> status_took, connect_took;
    for (auto end = Clock::now() + how_long; Clock::now() < end;) {
      auto t0 = Clock::now();
      failed += !pair_.a().client->GetStatus().ok();
      status_took.push_back(Clock::now() - t0);
      if (status_took.size() % 10 != 0) continue;
      t0 = Clock::now();
      auto channel = pair_.a().client->Connect("B", "rdmad.echo");
      connect_took.push_back(Clock::now() - t0);
      if (!channel.ok()) {
        ADD_FAILURE() << label << ": " << channel.status().ToString();
        ++failed;
      }
    }
    std::printf(
        "FLOOD %s: GetStatus %zu calls, p50 %.2f ms, p99 %.2f ms; Connect %zu channels, "
        "p50 %.2f ms, p99 %.2f ms\n",
        label, status_took.size(), Percentile(status_took, 50), Percentile(status_took, 99),
        connect_took.size(), Percentile(connect_took, 50), Percentile(connect_took, 99));
    return connect_took.size();
  };
  measure("without a flood (anchor)", 1s);
  std::string flood_out;
  std::jthread flood([&] {
    testing::RunCommand(LOCAL_API_PROBE, {pair_.a().socket, "flood-plan", "B", "rdmad.echo", "3"},
                        &flood_out);
  });
  size_t connected = measure("during another process's PlanChannel flood", 3s);
  flood.join();
  std::printf("%s", flood_out.c_str());
  EXPECT_EQ(failed, 0);
  EXPECT_GT(connected, 0u);
  EXPECT_TRUE(Contains(flood_out, "PROBE FLOOD ok=" + std::to_string(kPlansPerClient) + " "))
      << flood_out;
  EXPECT_FALSE(Contains(flood_out, "exhausted=0 ")) << flood_out;
  EXPECT_TRUE(Contains(flood_out, "other=0 ")) << flood_out;
  EXPECT_TRUE(Contains(flood_out,
                       "channels planned and not connected, its limit "
                       "(limits.max_plans_per_client = " +
                           std::to_string(kPlansPerClient) + ")"))
      << flood_out;
}

// B's application may have one channel (limits.max_channels_per_client on
// B): its listener cannot accept a second one, and A's application hears
// why at once, not after the listener's deadline.
TEST(AcceptorQuotaTest, AnAcceptorOverItsQuotaFailsTheInitiatorAtOnce) {
  testing::DaemonPair pair;
  Status started = pair.Start("", "[limits]\nmax_channels_per_client = 1\n");
  ASSERT_TRUE(started.ok()) << started.ToString();
  ClientOptions options;
  options.socket_path = pair.b().socket;
  auto b_app = Client::Open(options);
  ASSERT_TRUE(b_app.ok());
  testing::AcceptAll server(b_app.value().get(), "svc");
  auto first = pair.ConnectAB("svc");
  ASSERT_TRUE(first.ok()) << first.status().ToString() << pair.Logs();
  auto t0 = Clock::now();
  auto second = pair.a().client->Connect("B", "svc");
  EXPECT_LT(Clock::now() - t0, 5s) << "not the listener's 10 s deadline";
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted) << second.status().ToString();
  EXPECT_TRUE(Contains(second.status().message(), "limits.max_channels_per_client = 1"))
      << second.status().ToString();
}

}  // namespace
}  // namespace rdmad
