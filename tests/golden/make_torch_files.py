#!/usr/bin/python3
"""Writes the torch.save fixtures of tests/golden/torch_files/ and their
expected values (expected.json), for engine/src/io/torch_file.cc's tests
(tests/engine/torch_file_test.cc) and the fuzz_torch_file seeds.

Run with Debian's interpreter, which sees python3-torch (1.13):

    /usr/bin/python3 tests/golden/make_torch_files.py

Good files (torch.save of what BAAI/bge-m3's heads look like, and the
tensor layouts torch writes):
  linear_f32.pt, linear_f16.pt, linear_bf16.pt
                a Linear(3, 4) state_dict (OrderedDict with _metadata, which
                the pickle sets with BUILD)
  transposed.pt {"t": a 3x5 tensor's .t()} saved as is: strides (1, 5)
  offset_view.pt {"slice": big[2:5, 1:3]}: storage offset 9, strides (4, 1);
                torch saves the whole 6x4 storage
  bare_f64.pt   a bare float64 tensor (the entry "")
  parameter.pt  {"p": nn.Parameter} (torch._utils._rebuild_parameter)
  shared.pt     {"a": x, "b": x[1]}: two views of one storage
  deflated.pt   linear_f32.pt rewritten with every record deflated (the
                same expected values)
expected.json holds, per good file and tensor, torch's dtype name, the shape
and the values converted by torch to float32 (row-major), so the C++ reader
is checked against torch, not against itself.

Bad files (each must be refused with an error naming the cause):
  evil_posix_system.pt  torch.save of an object whose __reduce__ is
                        (os.system, ("echo hi",)); pickle names it
                        "posix system" on Linux
  evil_os_system.pt     the same with the global rewritten to "os system"
  evil_eval.pt          __reduce__ = (eval, ("1+1",)); protocol 2 names it
                        "__builtin__ eval" (Python 2's module name)
  evil_builtins_eval.pt the same with the global rewritten to "builtins eval"
  truncated.pt          the first half of linear_f32.pt
  past_storage.pt       a 5x7 tensor whose size tuple was rewritten to
                        (5, 8): a view past its 35-element storage
  list_top_level.pt     torch.save of a list of two tensors
  bad_opcode.pt         linear_f32.pt with its final BUILD (b) turned into a
                        POP (0), an opcode the reader does not accept
  big_endian.pt         linear_f32.pt with a byteorder record "big"
  missing_storage.pt    linear_f32.pt without its record data/1 (the bias)
  zip_bomb.pt           linear_f32.pt whose data/0 is 16 MiB of zeros, bzip2
                        compressed to a few hundred bytes

torch.save's zip writer (PyTorchFileWriter) stores no timestamps, and the
rewritten files go through zipfile with a fixed date, so a rerun writes the
same bytes (checked with torch 1.13: two runs, identical sha256sums).
"""

import io
import json
import os
import zipfile
from collections import OrderedDict
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parent / "torch_files"


def save(obj, name):
    torch.save(obj, OUT / name)


def expected_entry(t):
    t = t.detach()
    return {
        "dtype": str(t.dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "values": t.to(torch.float32).contiguous().flatten().tolist(),
    }


def rewrite_pickle(src, dst, old=b"", new=b"", add=(), drop=(), replace=(),
                   compression=zipfile.ZIP_STORED):
    """Copies the zip `src` to `dst` with bytes `old` of data.pkl replaced by
    `new`, the records `add` ((suffix, bytes) after the root folder) added
    and those whose names end with a suffix in `drop` left out, those ending
    with a suffix in `replace` ((suffix, bytes)) given new bytes; every
    record compressed with `compression`."""
    with zipfile.ZipFile(OUT / src) as zin:
        entries = [(info.filename, zin.read(info.filename)) for info in zin.infolist()]
    root = entries[0][0].split("/")[0]
    entries += [(f"{root}/{suffix}", data) for suffix, data in add]
    with zipfile.ZipFile(OUT / dst, "w", compression) as zout:
        for name, data in entries:
            if any(name.endswith(suffix) for suffix in drop):
                continue
            for suffix, new_data in replace:
                if name.endswith(suffix):
                    data = new_data
            if name.endswith("/data.pkl") and old:
                assert data.count(old) == 1, (src, old)
                data = data.replace(old, new)
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = compression
            zout.writestr(info, data)


class PosixSystem:
    def __reduce__(self):
        return (os.system, ("echo hi",))


class Eval:
    def __reduce__(self):
        return (eval, ("1+1",))


def main():
    OUT.mkdir(exist_ok=True)
    torch.manual_seed(20261127)
    expected = {}

    linear = torch.nn.Linear(3, 4)
    for name, dtype in (("linear_f32.pt", torch.float32), ("linear_f16.pt", torch.float16),
                        ("linear_bf16.pt", torch.bfloat16)):
        state = linear.to(dtype).state_dict()
        save(state, name)
        expected[name] = {k: expected_entry(v) for k, v in state.items()}
        linear = linear.to(torch.float32)

    base = torch.randn(3, 5)
    t = base.t()
    assert t.stride() == (1, 5)
    save({"t": t}, "transposed.pt")
    expected["transposed.pt"] = {"t": expected_entry(t)}

    big = torch.randn(6, 4)
    part = big[2:5, 1:3]
    assert part.storage_offset() == 9 and part.stride() == (4, 1)
    save({"slice": part}, "offset_view.pt")
    expected["offset_view.pt"] = {"slice": expected_entry(part)}

    bare = torch.randn(2, 3, dtype=torch.float64)
    save(bare, "bare_f64.pt")
    expected["bare_f64.pt"] = {"": expected_entry(bare)}

    param = torch.nn.Parameter(torch.randn(2, 3))
    save({"p": param}, "parameter.pt")
    expected["parameter.pt"] = {"p": expected_entry(param)}

    x = torch.randn(3, 2)
    save(OrderedDict([("a", x), ("b", x[1])]), "shared.pt")
    expected["shared.pt"] = {"a": expected_entry(x), "b": expected_entry(x[1])}

    save({"x": PosixSystem()}, "evil_posix_system.pt")
    rewrite_pickle("evil_posix_system.pt", "evil_os_system.pt", b"cposix\nsystem\n",
                   b"cos\nsystem\n")
    save({"x": Eval()}, "evil_eval.pt")
    rewrite_pickle("evil_eval.pt", "evil_builtins_eval.pt", b"c__builtin__\neval\n",
                   b"cbuiltins\neval\n")
    whole = (OUT / "linear_f32.pt").read_bytes()
    (OUT / "truncated.pt").write_bytes(whole[:len(whole) // 2])
    save({"w": torch.randn(5, 7)}, "past_storage_src.pt")
    # BININT1 5, BININT1 7, TUPLE2: the size tuple (the stride tuple is (7, 1)).
    rewrite_pickle("past_storage_src.pt", "past_storage.pt", b"K\x05K\x07\x86", b"K\x05K\x08\x86")
    (OUT / "past_storage_src.pt").unlink()
    save([torch.randn(2), torch.randn(2)], "list_top_level.pt")
    rewrite_pickle("linear_f32.pt", "bad_opcode.pt", b"sb.", b"s0.")
    rewrite_pickle("linear_f32.pt", "big_endian.pt", add=[("byteorder", b"big")])
    rewrite_pickle("linear_f32.pt", "missing_storage.pt", drop=["/data/1"])
    rewrite_pickle("linear_f32.pt", "zip_bomb.pt", replace=[("/data/0", bytes(16 << 20))],
                   compression=zipfile.ZIP_BZIP2)
    rewrite_pickle("linear_f32.pt", "deflated.pt", compression=zipfile.ZIP_DEFLATED)
    expected["deflated.pt"] = expected["linear_f32.pt"]

    with open(OUT / "expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
