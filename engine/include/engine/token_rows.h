// Which token rows of a pass's last layer are computed and kept.
//
// A cross-encoder, a CLS-pooled embedder or a last-token-pooled decoder reads
// one token per sequence from the last layer. Every row of that layer still
// needs its Q/K/V (the kept token attends to all), but the attention output
// projection, both Add & Norms and the FFN run on the kept rows only: about
// 3/4 of the last layer's matmul work is saved (Encoder::Encode).
#pragma once

namespace engine {

enum class TokenRows {
  kAll,    // every token's state (the default)
  kFirst,  // the first token of each sequence ([CLS])
  kLast,   // the last token of each sequence (causal LMs' pooled token)
};

const char* TokenRowsName(TokenRows rows);

}  // namespace engine
