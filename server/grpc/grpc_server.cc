#include "server/grpc/grpc_server.h"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/ext/proto_server_reflection_plugin.h>

#include "absl/strings/str_cat.h"

namespace server {
namespace {

int ToIntMs(std::chrono::milliseconds duration) {
  return static_cast<int>(std::clamp<int64_t>(duration.count(), 0, INT_MAX));
}

void SetLimits(const GrpcOptions& options, grpc::ServerBuilder* builder) {
  // gRPC sets SO_REUSEPORT by default, which would let a second server share
  // the port silently instead of failing.
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder->SetMaxReceiveMessageSize(
      static_cast<int>(std::clamp<int64_t>(options.max_receive_message_bytes, 0, INT_MAX)));
  // Streams past this per connection wait on the client for a free slot.
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  // A connection without calls for this long gets GOAWAY and is closed.
  builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                              ToIntMs(options.max_connection_idle));
  // A connection that never completes its handshake is closed after this
  // (gRPC's default, 120 s, lets silent sockets pile up).
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                              ToIntMs(options.handshake_timeout));
  // Keepalive: find dead peers of open streams; accept client pings up to
  // min_client_ping_interval apart while calls are open (gRPC's own default,
  // 5 min, sends GOAWAY to clients that ping every 10 s or 1 min). Pings on a
  // connection without calls stay refused: idle connections are closed anyway.
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, ToIntMs(options.keepalive_time));
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ToIntMs(options.keepalive_timeout));
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              ToIntMs(options.min_client_ping_interval));
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcOptions& options,
                                                              core::ServedModels* models,
                                                              core::Clock* clock) {
  std::unique_ptr<GrpcServer> server(new GrpcServer(models, clock));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, MakeServerCredentials(options.tls), &server->port_);
  SetLimits(options, &builder);
  builder.RegisterService(&server->service_);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot listen on ", options.address,
        options.tls.cert_chain.empty() ? "" : " (gRPC refused --tls-cert or --tls-key)"));
  }
  std::vector<std::string> names;
  for (const core::ModelRoute& route : models->routes()) names.push_back(route.description.name);
  server->health_ =
      std::make_unique<HealthReporter>(server->server_->GetHealthCheckService(), std::move(names));
  server->health_->SetServing(true);
  return server;
}

GrpcServer::~GrpcServer() {
  if (server_ != nullptr) server_->Shutdown();
}

void GrpcServer::SetServing(bool serving) { health_->SetServing(serving); }

void GrpcServer::StopAccepting() { service_.StopAccepting(); }

void GrpcServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  server_->Shutdown(deadline);
}

}  // namespace server
