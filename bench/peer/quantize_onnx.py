#!/usr/bin/python3
"""Dynamic int8 quantization of an exported encoder, the way ONNX Runtime's
`onnxruntime.quantization.quantize_dynamic` does it with its default settings,
written with the `onnx` package alone (ORT's Python package is not installed here).

  /usr/bin/python3 bench/peer/quantize_onnx.py --model M.onnx --out M.int8.onnx

The defaults mirrored (onnxruntime/python/tools/quantization/: quantize.py,
onnx_quantizer.py, base_quantizer.py, quant_utils.py, operators/matmul.py and
gather.py, registry.py): weight_type QInt8, activations QUInt8 (the only dynamic
choice), per_channel False, reduce_range False, MatMulConstBOnly True (default
in dynamic mode), WeightSymmetric True (the default for QInt8 weights), op types
= every type in IntegerOpsRegistry, of which these exports contain MatMul and Gather.

- Gemm (alpha = beta = 1, transA = 0) is first rewritten as MatMul + Add, with a
  transB weight transposed, as ORT's ONNXModel.replace_gemm_with_matmul does.
- MatMul whose B is a float initializer (the dense layers: Q, K, V, attention
  output, FFN in and out, a pooler or classifier): the activation goes through
  DynamicQuantizeLinear (u8, per tensor, one node per activation tensor shared
  by all its consumers, as Q, K and V share the LayerNorm output); the weight
  becomes int8, symmetric per tensor: scale = max|w| / 127 (ORT computes
  (rmax - rmin) / (qmax - qmin) over [-absmax, absmax] and [-127, 127] in
  float64 and stores it as float32), zero point 0, q = round(w / scale) with
  numpy's round half to even. Then MatMulInteger(x_q, w_q, x_zp, w_zp) -> int32,
  Cast to float, Mul by Mul(x_scale, w_scale); the bias Add stays as it was.
  MatMuls of two activations (attention's Q.K^T and P.V) stay in float.
- Gather from a float initializer (the word, position and token-type embedding
  tables): ORT's GatherQuant quantizes the table as an *activation* initializer,
  so u8 with the weight's symmetric range [0, 254]: scale = max|w| / 127, zero
  point 127; the Gather reads the u8 table and a DequantizeLinear restores float.
  --op-types MatMul leaves the embeddings in float.

Node and tensor names follow ORT's (x_quantized, x_scale, x_zero_point,
W_quantized, ..., <node>_quant), so ORT's graph optimizer sees the graph it sees
after quantize_dynamic and fuses it the same way (DynamicQuantizeMatMul and
friends). Ops quantize_dynamic would also touch but these exports do not contain
(Conv, Attention, LSTM, EmbedLayerNormalization, a Transpose of an already
quantized tensor) are refused rather than silently left in float.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NOT_MIRRORED = {"Conv", "Attention", "LSTM", "EmbedLayerNormalization"}


def quantize_weight(w, qtype):
    """ORT's quantize_data(w.flatten(), qtype, symmetric=True): (q, scale, zero_point)."""
    qmin, qmax, lo, hi, dtype = ((-127, 127, -128, 127, np.int8) if qtype == TensorProto.INT8
                                 else (0, 254, 0, 255, np.uint8))
    absmax = max(abs(min(float(w.min()), 0.0)), abs(max(float(w.max()), 0.0)))
    scale = np.float32(np.float64(np.float32(2 * absmax)) / (qmax - qmin))
    if scale < np.finfo(np.float32).tiny:  # an all-zero tensor
        scale, zero_point = np.float32(1.0), 0
    else:
        zero_point = int(np.round((qmin + qmax) / 2.0))
    q = np.round(w.astype(np.float32) / scale) + zero_point  # half to even
    return np.clip(q, lo, hi).astype(dtype), scale, zero_point


def replace_gemm_with_matmul(graph, inits):
    nodes = []
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type != "Gemm" or attrs.get("alpha", 1.0) != 1.0 or \
                attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0) != 0:
            nodes.append(node)
            continue
        b = node.input[1]
        if attrs.get("transB", 0):
            if b in inits:  # ORT assumes no other node uses B
                transposed = numpy_helper.from_array(numpy_helper.to_array(inits[b]).T.copy(), b)
                inits[b].CopyFrom(transposed)
            else:
                nodes.append(helper.make_node("Transpose", [b], [b + "_Transposed"],
                                              node.name + "_Transpose" if node.name else ""))
                b += "_Transposed"
        has_bias = len(node.input) > 2 and node.input[2]
        out = node.output[0] + ("_MatMul" if has_bias else "")
        nodes.append(helper.make_node("MatMul", [node.input[0], b], [out],
                                      node.name + "_MatMul" if node.name else ""))
        if has_bias:
            nodes.append(helper.make_node("Add", [out, node.input[2]], list(node.output),
                                          node.name + "_Add" if node.name else ""))
    graph.ClearField("node")
    graph.node.extend(nodes)


def quantize(model, op_types):
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    replace_gemm_with_matmul(graph, inits)

    def is_float_init(name):
        return name in inits and inits[name].data_type == TensorProto.FLOAT

    quantized = {}  # tensor -> (q, scale, zero point) names, like ORT's quantized_value_map
    new_inits, nodes = [], []
    counts = {"MatMul": 0, "Gather": 0, "MatMul kept in float": 0}

    def quantize_init(name, qtype):
        if name not in quantized:
            q, scale, zp = quantize_weight(numpy_helper.to_array(inits[name]), qtype)
            new_inits.extend([numpy_helper.from_array(q, name + "_quantized"),
                              helper.make_tensor(name + "_scale", TensorProto.FLOAT, [], [scale]),
                              helper.make_tensor(name + "_zero_point", qtype, [], [zp])])
            quantized[name] = (name + "_quantized", name + "_scale", name + "_zero_point")
        return quantized[name]

    for node in graph.node:
        if node.op_type in NOT_MIRRORED or (node.op_type == "Transpose" and node.input[0] in quantized):
            raise SystemExit(f"{node.name or node.op_type}: {node.op_type} is quantized by ORT's "
                             "quantize_dynamic but not mirrored here")
        if "MatMul" in op_types and node.op_type == "MatMul" and is_float_init(node.input[1]):
            x = node.input[0]
            if x not in quantized:
                nodes.append(helper.make_node("DynamicQuantizeLinear", [x],
                                              [x + "_quantized", x + "_scale", x + "_zero_point"],
                                              x + "_QuantizeLinear"))
                quantized[x] = (x + "_quantized", x + "_scale", x + "_zero_point")
            xq, xs, xzp = quantized[x]
            wq, ws, wzp = quantize_init(node.input[1], TensorProto.INT8)
            name = node.name + "_quant" if node.name else ""
            out = node.output[0]
            scales = (name + "_scales_mul") if name else f"{xs}_{ws}_mul"
            nodes += [
                helper.make_node("MatMulInteger", [xq, wq, xzp, wzp], [out + "_output_quantized"], name),
                helper.make_node("Cast", [out + "_output_quantized"], [out + "_output_quantized_cast_output"],
                                 out + "_output_quantized_cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [xs, ws], [scales + ":0"], scales),
                helper.make_node("Mul", [out + "_output_quantized_cast_output", scales + ":0"], [out],
                                 name + "_output_scale_mul" if name else ""),
            ]
            counts["MatMul"] += 1
        elif "Gather" in op_types and node.op_type == "Gather" and is_float_init(node.input[0]):
            # ORT quantizes the table with the activation type (u8) and inserts
            # the DequantizeLinear before the first float consumer; in these
            # exports that is the embeddings' Add, so right after the Gather.
            tq, ts, tzp = quantize_init(node.input[0], TensorProto.UINT8)
            out = node.output[0]
            gather = helper.make_node("Gather", [tq, node.input[1]], [out + "_quantized"], node.name)
            gather.attribute.extend(node.attribute)
            nodes += [gather, helper.make_node("DequantizeLinear", [out + "_quantized", ts, tzp], [out],
                                               out + "_DequantizeLinear")]
            counts["Gather"] += 1
        else:
            if node.op_type == "MatMul":
                counts["MatMul kept in float"] += 1
            nodes.append(node)

    graph.ClearField("node")
    graph.node.extend(nodes)
    graph.initializer.extend(new_inits)
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    unused = [i for i in graph.initializer if i.name not in used]  # the float weights
    for init in unused:
        graph.initializer.remove(init)
    for graph_input in [i for i in graph.input if i.name in {u.name for u in unused}]:
        graph.input.remove(graph_input)
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="fp32 .onnx (export_onnx.py)")
    parser.add_argument("--out", required=True, help="quantized .onnx to write")
    parser.add_argument("--op-types", default="MatMul,Gather",
                        help="comma list of MatMul, Gather (default both, as quantize_dynamic)")
    args = parser.parse_args()
    op_types = set(args.op_types.split(","))
    if not op_types <= {"MatMul", "Gather"}:
        parser.error("--op-types: MatMul and/or Gather")

    model = onnx.load(args.model)
    counts = quantize(model, op_types)
    onnx.save(model, args.out)
    onnx.checker.check_model(args.out, full_check=True)
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.0f} MB): "
          f"{counts['MatMul']} MatMul -> MatMulInteger (s8 weights, u8 activations), "
          f"{counts['Gather']} Gather tables -> u8, {counts['MatMul kept in float']} MatMul "
          f"of two activations kept in float; checked with onnx {onnx.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
