#!/usr/bin/python3
"""Generates the sentence-transformers pipeline fixture in tests/golden/pipelines/.

Run with Debian's interpreter (python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_pipelines.py

A small random BERT (make_golden.py's TorchBert, imported) saved as a
sentence-transformers model directory: modules.json (Transformer, Pooling,
Dense, Normalize), 1_Pooling/config.json (max + mean, include_prompt false),
2_Dense/config.json + model.safetensors (linear.weight, linear.bias, Tanh),
3_Normalize, config_sentence_transformers.json with prompts and
default_prompt_name. sentence-transformers cannot be installed here, so its
Pooling / Dense / Normalize semantics are reproduced in torch from its source
(sentence_transformers/models/Pooling.py, the padded path: a padded batch,
attention_mask with [:, :prompt_length] cleared for include_prompt false, cls
= the first kept token, max over kept tokens, mean / mean_sqrt_len over kept
tokens, weightedmean with weights = absolute position + 1, lasttoken = the
last kept token; modes concatenated in the order cls, max, mean,
mean_sqrt_len, weightedmean, lasttoken; Dense = act(linear(x)); Normalize =
F.normalize). Matryoshka `dimensions` keeps the first values before the L2
normalization (as text-embeddings-inference does).

reference.json: the inputs and, per case, the options and the float64
embedding of every input. Self-checks that fail the run:
  (a) padded batch == each input alone (< 1e-10);
  (b) every case differs from every other case's answer for some input by
      more than 10x the parity test's 1e-4 (so a wrong mode, order, skip,
      activation or truncation cannot pass);
  (c) float32 torch stays 10x inside the tolerance.
"""

import json
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pipelines")
sys.path.insert(0, HERE)
from make_golden import Spec, TorchBert, check, config_json, hf_tensors, init_weights, write_safetensors  # noqa: E402

PARITY_MAX_ABS = 1e-4
MARGIN = 10.0
SEED = 1301
SPEC = Spec("pipelines", seed=SEED, layers=2, hidden=32, heads=4, intermediate=64,
            vocab=97, max_positions=40, type_vocab=2, hidden_act="gelu",
            eps=1e-12, dtype="F32", placement="post", pooler=True)
DENSE_OUT = 24
PROMPT_TOKENS = 4   # [CLS] + 3 prompt tokens, as ST's len(tokenize(prompt)) - 1
ORDER = ["cls", "max", "mean", "mean_sqrt_len", "weightedmean", "lasttoken"]

CASES = [
    # name, modes, skip, dense, normalize, dimensions
    ("cls", ["cls"], 0, False, False, 0),
    ("max", ["max"], 0, False, False, 0),
    ("mean", ["mean"], 0, False, False, 0),
    ("mean_sqrt_len", ["mean_sqrt_len"], 0, False, False, 0),
    ("weightedmean", ["weightedmean"], 0, False, False, 0),
    ("lasttoken", ["lasttoken"], 0, False, False, 0),
    ("all_modes", ORDER, 0, False, False, 0),
    ("cls_skip", ["cls"], PROMPT_TOKENS, False, False, 0),
    ("mean_skip", ["mean"], PROMPT_TOKENS, False, False, 0),
    ("weightedmean_skip", ["weightedmean"], PROMPT_TOKENS, False, False, 0),
    ("all_modes_skip", ORDER, PROMPT_TOKENS, False, False, 0),
    ("pipeline", None, PROMPT_TOKENS, True, True, 0),        # the model's own
    ("pipeline_no_normalize", None, PROMPT_TOKENS, True, False, 0),
    ("pipeline_no_dense", None, PROMPT_TOKENS, False, True, 0),
    ("pipeline_dimensions", None, PROMPT_TOKENS, True, True, 10),
    ("mean_dimensions_raw", ["mean"], 0, False, False, 7),
]
PIPELINE_MODES = ["max", "mean"]


def make_inputs(rng):
    inputs = []
    for n in (5, 6, 11, 23, 40):
        ids = rng.randint(5, SPEC.vocab, size=n).tolist()
        ids[0], ids[-1] = 2, 3   # pretend [CLS] ... [SEP]
        inputs.append({"ids": ids})
    return inputs


def st_pool(states, mask, modes):
    """sentence-transformers Pooling._forward_padded, states [B, L, H], mask [B, L]."""
    B, L, H = states.shape
    m = mask.unsqueeze(-1).to(states.dtype)
    out = []
    for mode in ORDER:
        if mode not in modes:
            continue
        if mode == "cls":
            first = mask.to(torch.int).argmax(dim=1)
            out.append(torch.gather(states, 1, first.view(B, 1, 1).expand(B, 1, H)).squeeze(1))
        elif mode == "max":
            out.append(states.masked_fill(m == 0, float("-inf")).max(dim=1).values)
        elif mode in ("mean", "mean_sqrt_len"):
            total = (states * m).sum(1)
            count = torch.clamp(m.sum(1), min=1e-9)
            out.append(total / count if mode == "mean" else total / torch.sqrt(count))
        elif mode == "weightedmean":
            w = torch.arange(1, L + 1, dtype=states.dtype).view(1, L, 1) * m
            out.append((states * w).sum(1) / torch.clamp(w.sum(1), min=1e-9))
        elif mode == "lasttoken":
            values, idx = mask.flip(1).max(1)
            idx = torch.where(values == 0, L - 1, idx)
            gather = (L - idx - 1).view(B, 1, 1).expand(B, 1, H)
            out.append(torch.gather(states * m, 1, gather).squeeze(1))
    return torch.cat(out, dim=1)


def run(model, dense, inputs, dtype, case):
    _, modes, skip, use_dense, normalize, dims = case
    modes = PIPELINE_MODES if modes is None else modes
    B, L = len(inputs), max(len(x["ids"]) for x in inputs)
    ids = torch.zeros(B, L, dtype=torch.long)
    types = torch.zeros(B, L, dtype=torch.long)
    pad = torch.ones(B, L, dtype=torch.bool)
    for b, x in enumerate(inputs):
        ids[b, :len(x["ids"])] = torch.tensor(x["ids"])
        pad[b, :len(x["ids"])] = False
    model = model.to(dtype)
    dense = dense.to(dtype)
    with torch.no_grad():
        states, _ = model(ids, types, pad)
        mask = (~pad).to(torch.long)
        mask[:, :skip] = 0
        v = st_pool(states, mask, modes)
        if use_dense:
            v = torch.tanh(dense(v))
        if dims:
            v = v[:, :dims]
        if normalize:
            v = F.normalize(v, p=2, dim=1)
    return v.to(torch.float64).numpy()


def write_pooling_dense_normalize(model_dir, hidden, dense, dense_out, mean, max_,
                                  include_prompt):
    """The sentence-transformers files of Transformer, Pooling (mean and/or
    max), a Dense layer of `dense` (Tanh) and Normalize; no 3_Normalize
    folder (Normalize has no files)."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
        {"idx": 3, "name": "3", "path": "3_Normalize",
         "type": "sentence_transformers.models.Normalize"},
    ]
    with open(os.path.join(model_dir, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(model_dir, "1_Pooling"))
    with open(os.path.join(model_dir, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": mean, "pooling_mode_max_tokens": max_,
                   "pooling_mode_mean_sqrt_len_tokens": False,
                   "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False,
                   "include_prompt": include_prompt}, f, indent=2)
    os.makedirs(os.path.join(model_dir, "2_Dense"))
    with open(os.path.join(model_dir, "2_Dense", "config.json"), "w") as f:
        json.dump({"in_features": dense.in_features, "out_features": dense_out, "bias": True,
                   "activation_function": "torch.nn.modules.activation.Tanh"}, f, indent=2)
    write_safetensors(os.path.join(model_dir, "2_Dense", "model.safetensors"),
                      {"linear.weight": dense.weight.detach().clone(),
                       "linear.bias": dense.bias.detach().clone()}, "F32")


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    model_dir = os.path.join(OUT, "model")
    os.makedirs(model_dir)
    gen = torch.Generator().manual_seed(SEED)
    model = TorchBert(SPEC)
    init_weights(model, gen, "F32")
    model.eval()
    dense = torch.nn.Linear(SPEC.hidden * len(PIPELINE_MODES), DENSE_OUT)
    with torch.no_grad():
        dense.weight.copy_(torch.randn(dense.weight.shape, generator=gen) * 2.0 /
                           np.sqrt(dense.weight.shape[1]))
        dense.bias.copy_(torch.randn(dense.bias.shape, generator=gen) * 0.5)

    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(config_json(SPEC), f, indent=2)
    write_safetensors(os.path.join(model_dir, "model.safetensors"), hf_tensors(model), "F32")
    write_pooling_dense_normalize(model_dir, SPEC.hidden, dense, DENSE_OUT, mean=True,
                                  max_=True, include_prompt=False)
    # No 3_Normalize folder: Normalize has no files (git keeps no empty folder).
    with open(os.path.join(model_dir, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": {"query": "query: ", "passage": "passage: "},
                   "default_prompt_name": "query", "similarity_fn_name": "cosine"}, f, indent=2)

    inputs = make_inputs(np.random.RandomState(SEED))
    cases, answers = [], {}
    for case in CASES:
        ref = run(model, dense, inputs, torch.float64, case)
        for b, x in enumerate(inputs):   # (a)
            alone = run(model, dense, [x], torch.float64, case)[0]
            check(np.abs(alone - ref[b]).max() < 1e-10, f"{case[0]}: batch vs alone")
        f32 = run(model, dense, inputs, torch.float32, case)   # (c)
        err = np.abs(f32 - ref).max()
        check(err * MARGIN < PARITY_MAX_ABS, f"{case[0]}: float32 torch {err:.2e} from the reference")
        answers[case[0]] = ref
        name, modes, skip, use_dense, normalize, dims = case
        cases.append({"name": name, "pooling": modes, "skip_tokens": skip, "dense": use_dense,
                      "normalize": normalize, "dimensions": dims,
                      "embeddings": [r.tolist() for r in ref]})
    # (b) cases of one shape are far apart.
    for a in answers:
        for b in answers:
            if a < b and answers[a].shape == answers[b].shape:
                d = np.abs(answers[a] - answers[b]).max()
                check(d > MARGIN * PARITY_MAX_ABS, f"{a} and {b} differ by only {d:.2e}")
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump({"inputs": inputs, "prompt_tokens": PROMPT_TOKENS, "cases": cases}, f,
                  separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
