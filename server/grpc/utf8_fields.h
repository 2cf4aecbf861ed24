// The one UTF-8 rule of every RPC that carries text: each string field of a
// request must be UTF-8, else INVALID_ARGUMENT naming the field and, in a
// repeated field, the element: "input 3: text_pair is not valid UTF-8 (at
// byte 5)", "text 1 is not valid UTF-8 (at byte 0)" (RerankRequest.texts[1]).
// The adapter checks, not protobuf alone: proto3 parsers check string fields
// in some builds only, and never say which field failed.
#pragma once

#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "absl/status/status.h"

namespace server {

// The first string field of a parsed `message` that is not UTF-8 (for
// parsers that let it through).
absl::Status CheckUtf8Fields(const google::protobuf::Message& message);

// The same over wire bytes that protobuf refused to parse: OK when no string
// field of `descriptor`'s message is at fault (the bytes are bad otherwise).
absl::Status CheckUtf8Fields(const std::string& bytes,
                             const google::protobuf::Descriptor* descriptor);

// Whether this build's protobuf refuses to parse a proto3 string field that
// is not UTF-8 (tried once per process).
bool ParserChecksUtf8();

}  // namespace server
