// The one oneDNN CPU engine and stream an encoder runs on.
#pragma once

#include "oneapi/dnnl/dnnl.hpp"

namespace engine {

struct DnnlContext {
  DnnlContext() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}
  dnnl::engine engine;
  dnnl::stream stream;
};

}  // namespace engine
