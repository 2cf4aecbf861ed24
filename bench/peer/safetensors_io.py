"""Minimal safetensors reader and writer (numpy only) for the peer scripts.

Format: 8-byte little-endian header length, a JSON header mapping tensor names
to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data
that follows the header), then the raw little-endian tensor data.
"""
import json
import os
import struct

import numpy as np

# safetensors dtype -> numpy dtype; BF16 is read as uint16 and widened by hand.
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "BF16": np.uint16}


def read_safetensors(path):
    """Returns {name: float32 np.ndarray} for one .safetensors file."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = bytearray(f.read())  # writable, so torch.from_numpy can share it
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        if dtype not in _DTYPES:
            raise SystemExit(f"{path}: tensor {name} has unsupported dtype {dtype}")
        begin, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=_DTYPES[dtype], count=(end - begin) // np.dtype(_DTYPES[dtype]).itemsize,
                              offset=begin).reshape(info["shape"])
        if dtype == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        elif dtype != "F32":
            array = array.astype(np.float32)
        tensors[name] = array
    return tensors


def read_checkpoint(model_dir):
    """Reads model.safetensors or the shards named by model.safetensors.index.json.

    Names are normalized as the engine does for BERT: a "bert." prefix (BertFor*
    checkpoints) is dropped, LayerNorm gamma/beta become weight/bias.
    """
    single = os.path.join(model_dir, "model.safetensors")
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(single):
        tensors = read_safetensors(single)
    elif os.path.exists(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        tensors = {}
        for shard in shards:
            tensors.update(read_safetensors(os.path.join(model_dir, shard)))
    else:
        raise SystemExit(f"{model_dir}: no model.safetensors or model.safetensors.index.json")
    out = {}
    for name, value in tensors.items():
        if name.startswith("bert."):
            name = name[len("bert."):]
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        out[name] = value
    return out


def write_safetensors(path, tensors):
    """Writes {name: np.ndarray} as F32 safetensors."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for chunk in chunks:
            f.write(chunk)
