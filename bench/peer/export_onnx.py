#!/usr/bin/python3
"""Export a Hugging Face layout BERT checkpoint to ONNX for the ONNX Runtime peer.

Reads DIR/config.json and DIR/model.safetensors (or a sharded
model.safetensors.index.json) with the small reader in safetensors_io.py, loads
the weights into a torch module that performs the same computation as Hugging
Face's BertModel (post-LN, absolute positions, no pooler) and exports it with
torch.onnx.export, the way `transformers` models are exported:

  inputs  input_ids, attention_mask, token_type_ids   int64 [batch, seq]
  output  last_hidden_state                           float [batch, seq, hidden]

The module keeps Hugging Face's graph pattern on purpose, so that ONNX Runtime's
built-in graph optimizer (level 'all') fuses it as it fuses a real exported BERT:
attention mask as (1 - mask[:, None, None, :]) * -10000 added to the scores,
scores divided by sqrt(head_size), heads split with view + permute, GELU as
x * 0.5 * (1 + erf(x / sqrt(2))), LayerNorm over the last axis, and Linear's bias
Add written as Add(x, bias). With the default opset 12 and dynamic batch and
sequence axes, ONNX Runtime 1.30 fuses each layer's self-attention into one
com.microsoft.Attention, the FFN's bias + GELU into BiasGelu and every LayerNorm
into LayerNormalization (`compare.py` prints the fused op counts). Its
SkipLayerNormFusion (residual Add + LayerNorm) needs a static sequence length, as
with any dynamic-axis BERT export; pinning the shapes instead makes ORT turn the
Linear layers into Gemm and lose the Attention fusion, which measured no faster.

With --head classifier the export is BertForSequenceClassification's
forward instead: the pooler (tanh of pooler.dense on the first token) and the
classifier on top, with the output `logits` [batch, num_labels]; this is the
cross-encoder (reranker) that bench/peer/rerank.sh serves.

Run with Debian's interpreter (it sees python3-torch and python3-numpy):
  /usr/bin/python3 bench/peer/export_onnx.py --model DIR --out DIR/model.onnx [--head classifier]
"""
import argparse
import json
import math
import os
import sys

import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_checkpoint  # noqa: E402


class Config:
    def __init__(self, path):
        with open(path) as f:
            c = json.load(f)
        self.hidden_size = c["hidden_size"]
        self.num_layers = c["num_hidden_layers"]
        self.num_heads = c["num_attention_heads"]
        self.intermediate_size = c["intermediate_size"]
        self.vocab_size = c["vocab_size"]
        self.max_position = c.get("max_position_embeddings", 512)
        # The RoBERTa family (roberta, xlm-roberta, camembert: e5, bge-m3)
        # numbers positions from pad_token_id + 1 over the real tokens
        # (transformers' create_position_ids_from_input_ids).
        self.model_type = c.get("model_type", "bert")
        if self.model_type not in ("bert", "roberta", "xlm-roberta", "camembert"):
            raise SystemExit(f"model_type {self.model_type!r}: the peer export covers bert and "
                             "the roberta family")
        self.positions_after_pad = self.model_type != "bert"
        self.pad_token_id = c.get("pad_token_id", 1 if self.positions_after_pad else 0)
        self.type_vocab_size = c.get("type_vocab_size", 2)
        self.eps = c.get("layer_norm_eps", 1e-12)
        self.hidden_act = c.get("hidden_act", "gelu")
        placement = c.get("layer_norm_placement", "post")
        if placement != "post":
            raise SystemExit(f"layer_norm_placement {placement!r}: the peer export is BERT (post-LN) only")
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise SystemExit("only absolute position embeddings are supported")
        if self.hidden_size % self.num_heads:
            raise SystemExit("hidden_size must be a multiple of num_attention_heads")
        if self.hidden_act not in ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu"):
            raise SystemExit(f"hidden_act {self.hidden_act!r} not supported")


# --- The model: Hugging Face BertModel's forward, written out -----------------


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.eps)
        self.positions_after_pad = c.positions_after_pad
        self.pad_token_id = c.pad_token_id
        self.register_buffer("position_ids", torch.arange(c.max_position).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size(1)
        if self.positions_after_pad:
            mask = input_ids.ne(self.pad_token_id).int()
            position_ids = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.pad_token_id
        else:
            position_ids = self.position_ids[:, :seq_length]
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads = c.num_heads
        self.head_size = c.hidden_size // c.num_heads
        self.all_head_size = c.hidden_size
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)

    def transpose_for_scores(self, x):
        new_shape = x.size()[:-1] + (self.num_heads, self.head_size)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_size)
        scores = scores + extended_mask
        probs = nn.functional.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        new_shape = context.size()[:-2] + (self.all_head_size,)
        return context.view(new_shape)


class SelfOutput(nn.Module):  # attention.output: dense, then Add & LayerNorm
    def __init__(self, c, in_size):
        super().__init__()
        self.dense = nn.Linear(in_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.eps)

    def forward(self, hidden_states, residual):
        return self.LayerNorm(self.dense(hidden_states) + residual)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttention(c)
        self.output = SelfOutput(c, c.hidden_size)

    def forward(self, hidden_states, extended_mask):
        return self.output(self.self(hidden_states, extended_mask), hidden_states)


def activation(x, name):
    if name == "gelu":  # erf form, as transformers' GELUActivation exports
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    return torch.relu(x)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
        self.act = c.hidden_act

    def forward(self, x):
        return activation(self.dense(x), self.act)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = SelfOutput(c, c.intermediate_size)

    def forward(self, hidden_states, extended_mask):
        attention_output = self.attention(hidden_states, extended_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c.num_layers)])


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # transformers' get_extended_attention_mask (the -10000 form that ORT's
        # AttentionFusion recognizes; same softmax as finfo.min for any row
        # with at least one real token).
        extended_mask = attention_mask[:, None, None, :]
        extended_mask = extended_mask.to(dtype=torch.float32)
        extended_mask = (1.0 - extended_mask) * -10000.0
        hidden_states = self.embeddings(input_ids, token_type_ids)
        for layer in self.encoder.layer:
            hidden_states = layer(hidden_states, extended_mask)
        return hidden_states


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, hidden_states):
        return torch.tanh(self.dense(hidden_states[:, 0]))


class BertForSequenceClassification(nn.Module):
    """transformers' class: BertModel with its pooler, then the classifier."""

    def __init__(self, c, num_labels):
        super().__init__()
        self.bert = BertModel(c)
        self.bert.pooler = Pooler(c)
        self.classifier = nn.Linear(c.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden_states = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.bert.pooler(hidden_states))


def load_model(model_dir, head=None):
    config = Config(os.path.join(model_dir, "config.json"))
    if head == "classifier":
        with open(os.path.join(model_dir, "config.json")) as f:
            num_labels = len(json.load(f).get("id2label", {"0": "LABEL_0", "1": "LABEL_1"}))
        model = BertForSequenceClassification(config, num_labels).eval()
    else:
        model = BertModel(config).eval()
    tensors = read_checkpoint(model_dir)
    expected = model.state_dict()
    if head == "classifier":  # checkpoints of the task model may or may not say "bert."
        tensors = {**{"bert." + k: v for k, v in tensors.items() if not k.startswith("bert.")},
                   **tensors}
    missing = [name for name in expected if name not in tensors]
    if missing:
        raise SystemExit(f"{model_dir}: missing tensors: {', '.join(missing[:8])}"
                         f"{' ...' if len(missing) > 8 else ''}")
    state = {}
    for name, param in expected.items():
        value = tensors[name]
        if tuple(value.shape) != tuple(param.shape):
            raise SystemExit(f"{name}: shape {list(value.shape)}, expected {list(param.shape)}")
        state[name] = torch.from_numpy(value)
    model.load_state_dict(state, strict=True)
    return config, model


def canonicalize_bias_adds(path):
    """Puts the constant operand of each Add second: Add(x, bias).

    torch 1.13 exports nn.Linear on 3-D inputs as MatMul then Add(bias, x). The
    addition is the same, but ORT's AttentionFusion and SkipLayerNormFusion match
    Add(x, bias) (as older torch exports wrote it), so reorder to let ORT fuse.
    """
    model = onnx.load(path)
    constants = {i.name for i in model.graph.initializer}
    for node in model.graph.node:  # nodes are in topological order
        # Constant nodes, and Identity of a constant (torch's export shares equal
        # initializers, e.g. all-zero biases, through Identity nodes).
        if node.op_type == "Constant" or (node.op_type == "Identity" and node.input[0] in constants):
            constants.update(node.output)
    swapped = 0
    for node in model.graph.node:
        if node.op_type == "Add" and node.input[0] in constants and node.input[1] not in constants:
            node.input[0], node.input[1] = node.input[1], node.input[0]
            swapped += 1
    onnx.save(model, path)
    return swapped


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model directory (config.json + safetensors)")
    parser.add_argument("--out", required=True, help="output .onnx file")
    parser.add_argument("--head", choices=["classifier"],
                        help="export BertForSequenceClassification (output: logits)")
    parser.add_argument("--opset", type=int, default=12,
                        help="ONNX opset (default 12: the pattern ORT's AttentionFusion matches)")
    args = parser.parse_args()

    torch.set_grad_enabled(False)
    config, model = load_model(args.model, args.head)
    batch, seq = 2, 16
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(0, config.vocab_size, (batch, seq), generator=generator)
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    attention_mask[1, seq // 2:] = 0
    token_type_ids = torch.zeros(batch, seq, dtype=torch.int64)

    dynamic = {0: "batch", 1: "sequence"}
    output = "logits" if args.head == "classifier" else "last_hidden_state"
    torch.onnx.export(
        model, (input_ids, attention_mask, token_type_ids), args.out,
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=[output],
        dynamic_axes={"input_ids": dynamic, "attention_mask": dynamic,
                      "token_type_ids": dynamic,
                      output: {0: "batch"} if args.head else dynamic},
        opset_version=args.opset, do_constant_folding=True)

    swapped = canonicalize_bias_adds(args.out)
    onnx.checker.check_model(args.out)
    checked = f"{swapped} bias Adds reordered; checked with onnx {onnx.__version__}"
    print(f"wrote {args.out} (opset {args.opset}, hidden {config.hidden_size}, "
          f"layers {config.num_layers}, heads {config.num_heads}, "
          f"intermediate {config.intermediate_size}, act {config.hidden_act}; {checked})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
