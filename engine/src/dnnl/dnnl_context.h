// The one oneDNN CPU engine and stream an encoder runs on, and the one
// scratchpad its primitives share.
//
// Primitives made with UserScratchpadAttr() do not own a scratchpad; they
// get this context's buffer at every execution (DNNL_ARG_SCRATCHPAD). One
// encoder runs one primitive at a time, so one buffer, grown to the largest
// scratchpad of any primitive when that primitive is created (at load or
// on a row bucket's first use), serves them all and execution allocates
// nothing for it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#include "oneapi/dnnl/dnnl.hpp"

namespace engine {

struct DnnlContext {
  DnnlContext() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}
  dnnl::engine engine;
  dnnl::stream stream;

  static dnnl::primitive_attr UserScratchpadAttr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
  }

  // Grows the shared scratchpad to at least `bytes` (64-byte aligned). Call
  // when creating a primitive, never while executing one.
  void ReserveScratchpad(size_t bytes) {
    if (bytes <= scratchpad_bytes_) return;
    const size_t rounded = (bytes + 63) / 64 * 64;
    scratchpad_.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    if (scratchpad_ == nullptr) throw std::bad_alloc();
    scratchpad_bytes_ = rounded;
  }
  void* scratchpad() const { return scratchpad_.get(); }
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> scratchpad_;
  size_t scratchpad_bytes_ = 0;
};

}  // namespace engine
