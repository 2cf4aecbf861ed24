#!/usr/bin/python3
"""Turns a BERT model directory (encoder-cli make-model's) into a cross-encoder.

Adds what a BertForSequenceClassification checkpoint with one label carries
(cross-encoder/ms-marco-MiniLM-L-6-v2's layout): random pooler.dense and
classifier tensors in model.safetensors, "architectures" and "id2label" in
config.json. The weights are random: this is for timing and for checking the
engine against ONNX Runtime, not for relevance.

  /usr/bin/python3 bench/peer/add_classifier.py --model DIR [--seed 7]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    config_path = os.path.join(args.model, "config.json")
    with open(config_path) as f:
        config = json.load(f)
    hidden = config["hidden_size"]
    rng = np.random.default_rng(args.seed)
    weights_path = os.path.join(args.model, "model.safetensors")
    tensors = read_safetensors(weights_path)
    scale = 1.0 / np.sqrt(hidden)
    tensors["pooler.dense.weight"] = (rng.standard_normal((hidden, hidden)) * scale).astype(np.float32)
    tensors["pooler.dense.bias"] = (rng.standard_normal(hidden) * 0.02).astype(np.float32)
    tensors["classifier.weight"] = (rng.standard_normal((1, hidden)) * scale).astype(np.float32)
    tensors["classifier.bias"] = np.zeros(1, dtype=np.float32)
    write_safetensors(weights_path, tensors)
    config["architectures"] = ["BertForSequenceClassification"]
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    print(f"{args.model}: pooler and a one-label classifier added", file=sys.stderr)


if __name__ == "__main__":
    main()
