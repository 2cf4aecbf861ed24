#include "server/grpc/protobuf_log.h"

#include <string>

#include <google/protobuf/stubs/logging.h>

#include "absl/strings/str_cat.h"
#include "server/core/log.h"

namespace server {
namespace {

void HandleProtobufLog(google::protobuf::LogLevel level, const char* /*filename*/, int /*line*/,
                       const std::string& message) {
  if (level < google::protobuf::LOGLEVEL_WARNING) return;
  if (message.find("invalid UTF-8 data when parsing") != std::string::npos) return;
  core::LogError(absl::StrCat("protobuf: ", message));
}

}  // namespace

void RouteProtobufLogs() { google::protobuf::SetLogHandler(&HandleProtobufLog); }

}  // namespace server
