/**
 * A minimal reader and writer for ONNX model files (protobuf wire format), so the PP-OCR loader can rewrite a model's
 * graph in memory before onnxruntime sees it (see ppocr-graph-rewrite.ts) without a protobuf dependency or a
 * generated model file. Only the messages a rewrite touches are decoded — the model's graph, its nodes, their
 * attributes and scalar initialisers; everything else (weights, metadata, value infos) is carried through as the
 * original bytes, field order kept.
 */

/** One protobuf field: varints as bigint (int64 may be negative), every other wire type as its raw bytes. */
export interface WireField {
  no: number;
  wire: 0 | 1 | 2 | 5;
  value: bigint | Uint8Array;
}

/** Splits a protobuf message into its fields, in order. */
export function decodeMessage(bytes: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let pos = 0;
  // Tags and lengths fit in a number; only int64 values need bigint (negative ones take 10 bytes).
  const small = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (pos >= bytes.length) throw new Error('ONNX model is truncated (varint)');
      const b = bytes[pos++] as number;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
      if (mul > 2 ** 49) throw new Error('ONNX model has an oversized length');
    }
  };
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw new Error('ONNX model is truncated (varint)');
      const b = bytes[pos++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  const take = (n: number): Uint8Array => {
    if (pos + n > bytes.length) throw new Error('ONNX model is truncated');
    const out = bytes.subarray(pos, pos + n);
    pos += n;
    return out;
  };
  while (pos < bytes.length) {
    const tag = small();
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) fields.push({ no, wire, value: BigInt.asIntN(64, varint()) });
    else if (wire === 1) fields.push({ no, wire, value: take(8) });
    else if (wire === 2) fields.push({ no, wire, value: take(small()) });
    else if (wire === 5) fields.push({ no, wire, value: take(4) });
    else throw new Error(`ONNX model uses unsupported protobuf wire type ${wire}`);
  }
  return fields;
}

function varintSize(value: bigint | number): number {
  if (typeof value === 'number' && value >= 0 && value < 2 ** 31) {
    let n = 1;
    for (let v = value; v >= 0x80; v = Math.floor(v / 128)) n += 1;
    return n;
  }
  let v = BigInt.asUintN(64, BigInt(value));
  let n = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    n += 1;
  }
  return n;
}

function writeVarint(out: Uint8Array, at: number, value: bigint | number): number {
  if (typeof value === 'number' && value >= 0 && value < 2 ** 31) {
    let v = value;
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[at++] = v;
    return at;
  }
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out[at++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[at++] = Number(v);
  return at;
}

/** Joins fields back into a message (sizes first, then one buffer written in place). */
export function encodeMessage(fields: readonly WireField[]): Uint8Array {
  let size = 0;
  for (const f of fields) {
    size += varintSize((f.no << 3) | f.wire);
    if (f.wire === 0) size += varintSize(f.value as bigint);
    else {
      const len = (f.value as Uint8Array).length;
      size += len + (f.wire === 2 ? varintSize(len) : 0);
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const f of fields) {
    at = writeVarint(out, at, (f.no << 3) | f.wire);
    if (f.wire === 0) at = writeVarint(out, at, f.value as bigint);
    else {
      const raw = f.value as Uint8Array;
      if (f.wire === 2) at = writeVarint(out, at, raw.length);
      out.set(raw, at);
      at += raw.length;
    }
  }
  return out;
}

const utf8 = new TextDecoder();
const toUtf8 = new TextEncoder();
const bytesField = (no: number, value: Uint8Array): WireField => ({ no, wire: 2, value });
const stringField = (no: number, value: string): WireField => bytesField(no, toUtf8.encode(value));
const asBytes = (f: WireField): Uint8Array => f.value as Uint8Array;
// A Node Buffer's subarray shares a larger pool: views must carry the offset.
const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
// ONNX stores tensors little-endian; on such hosts (x86, ARM) bytes copy straight into a Float32Array.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** TensorProto data_type of float32. */
const FLOAT = 1;

/** An ONNX NodeProto with the fields a rewrite reads; `rest` keeps the others (doc strings, …) untouched. */
export interface OnnxNode {
  opType: string;
  name: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  /** Raw AttributeProto messages. */
  attributes: Uint8Array[];
  rest: WireField[];
}

export function decodeNode(bytes: Uint8Array): OnnxNode {
  const node: OnnxNode = { opType: '', name: '', domain: '', inputs: [], outputs: [], attributes: [], rest: [] };
  for (const f of decodeMessage(bytes)) {
    if (f.no === 1 && f.wire === 2) node.inputs.push(utf8.decode(asBytes(f)));
    else if (f.no === 2 && f.wire === 2) node.outputs.push(utf8.decode(asBytes(f)));
    else if (f.no === 3 && f.wire === 2) node.name = utf8.decode(asBytes(f));
    else if (f.no === 4 && f.wire === 2) node.opType = utf8.decode(asBytes(f));
    else if (f.no === 5 && f.wire === 2) node.attributes.push(asBytes(f));
    else if (f.no === 7 && f.wire === 2) node.domain = utf8.decode(asBytes(f));
    else node.rest.push(f);
  }
  return node;
}

export function encodeNode(node: OnnxNode): Uint8Array {
  const fields: WireField[] = [
    ...node.inputs.map((s) => stringField(1, s)),
    ...node.outputs.map((s) => stringField(2, s)),
  ];
  if (node.name !== '') fields.push(stringField(3, node.name));
  fields.push(stringField(4, node.opType));
  for (const a of node.attributes) fields.push(bytesField(5, a));
  if (node.domain !== '') fields.push(stringField(7, node.domain));
  return encodeMessage([...fields, ...node.rest]);
}

/** An AttributeProto holding one float (`type` FLOAT = 1), e.g. HardSigmoid's `alpha`. */
export function floatAttribute(name: string, value: number): Uint8Array {
  const f = new Uint8Array(4);
  new DataView(f.buffer).setFloat32(0, value, true);
  return encodeMessage([stringField(1, name), { no: 2, wire: 5, value: f }, { no: 20, wire: 0, value: 1n }]);
}

/** Name and float value (`f`) of an AttributeProto; `value` is undefined when it holds no float. */
export function attributeFloat(attribute: Uint8Array): { name: string; value?: number } {
  let name = '';
  let value: number | undefined;
  for (const f of decodeMessage(attribute)) {
    if (f.no === 1 && f.wire === 2) name = utf8.decode(asBytes(f));
    else if (f.no === 2 && f.wire === 5) value = view(asBytes(f)).getFloat32(0, true);
  }
  return value === undefined ? { name } : { name, value };
}

/** Name and integers (`i` or `ints`, packed or not) of an AttributeProto. */
export function attributeInts(attribute: Uint8Array): { name: string; ints: number[] } {
  let name = '';
  const ints: number[] = [];
  for (const f of decodeMessage(attribute)) {
    if (f.no === 1 && f.wire === 2) name = utf8.decode(asBytes(f));
    else if ((f.no === 3 || f.no === 8) && f.wire === 0) ints.push(Number(f.value));
    else if (f.no === 8 && f.wire === 2) {
      for (const g of decodeMessage(packedAsFields(asBytes(f)))) ints.push(Number(g.value));
    }
  }
  return { name, ints };
}

/** Packed varints re-tagged as field 1 so decodeMessage can split them. */
function packedAsFields(packed: Uint8Array): Uint8Array {
  const out: number[] = [];
  let start = true;
  for (const b of packed) {
    if (start) out.push(0x08);
    out.push(b);
    start = (b & 0x80) === 0;
  }
  return Uint8Array.from(out);
}

/** A float32 TensorProto in full: name, dims and a copy of its values. */
export interface FloatTensorValue {
  name: string;
  dims: number[];
  data: Float32Array;
}

/** Decodes a float32 TensorProto (raw or `float_data`); undefined for other element types. */
export function decodeFullFloatTensor(bytes: Uint8Array): FloatTensorValue | undefined {
  let name = '';
  let type = 0;
  const dims: number[] = [];
  let raw: Uint8Array | undefined;
  const floats: number[] = [];
  for (const f of decodeMessage(bytes)) {
    if (f.no === 8 && f.wire === 2) name = utf8.decode(asBytes(f));
    else if (f.no === 2 && f.wire === 0) type = Number(f.value);
    else if (f.no === 1 && f.wire === 0) dims.push(Number(f.value));
    else if (f.no === 1 && f.wire === 2) {
      for (const g of decodeMessage(packedAsFields(asBytes(f)))) dims.push(Number(g.value));
    } else if (f.no === 9 && f.wire === 2) raw = asBytes(f);
    else if (f.no === 4 && f.wire === 5) floats.push(view(asBytes(f)).getFloat32(0, true));
    else if (f.no === 4 && f.wire === 2) {
      const b = asBytes(f);
      const v = view(b);
      for (let i = 0; i + 4 <= b.length; i += 4) floats.push(v.getFloat32(i, true));
    }
  }
  if (type !== FLOAT) return undefined;
  if (raw) {
    const data = new Float32Array(raw.length / 4);
    if (LITTLE_ENDIAN) new Uint8Array(data.buffer).set(raw);
    else {
      const v = view(raw);
      for (let i = 0; i < data.length; i += 1) data[i] = v.getFloat32(i * 4, true);
    }
    return { name, dims, data };
  }
  return { name, dims, data: Float32Array.from(floats) };
}

/** A float32 TensorProto with raw little-endian data. */
export function encodeFloatTensor(tensor: FloatTensorValue): Uint8Array {
  const raw = new Uint8Array(tensor.data.length * 4);
  if (LITTLE_ENDIAN) raw.set(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, raw.length));
  else {
    const v = view(raw);
    tensor.data.forEach((x, i) => v.setFloat32(i * 4, x, true));
  }
  return encodeMessage([
    ...tensor.dims.map((d): WireField => ({ no: 1, wire: 0, value: BigInt(d) })),
    { no: 2, wire: 0, value: BigInt(FLOAT) },
    ...(tensor.name === '' ? [] : [stringField(8, tensor.name)]),
    bytesField(9, raw),
  ]);
}

/** A `Constant` node whose `value` is `tensor`, producing `output`. */
export function constantNode(output: string, tensor: FloatTensorValue): OnnxNode {
  const attribute = encodeMessage([
    stringField(1, 'value'),
    bytesField(5, encodeFloatTensor(tensor)),
    { no: 20, wire: 0, value: 4n }, // AttributeType TENSOR
  ]);
  return { opType: 'Constant', name: '', domain: '', inputs: [], outputs: [output], attributes: [attribute], rest: [] };
}

/** An AttributeProto holding integers (`ints`, type INTS = 7), e.g. ReduceMax's `axes`. */
export function intsAttribute(name: string, values: readonly number[]): Uint8Array {
  return encodeMessage([
    stringField(1, name),
    ...values.map((v): WireField => ({ no: 8, wire: 0, value: BigInt(v) })),
    { no: 20, wire: 0, value: 7n },
  ]);
}

/** An AttributeProto holding one integer (`i`, type INT = 2), e.g. ArgMax's `axis`. */
export function intAttribute(name: string, value: number): Uint8Array {
  return encodeMessage([
    stringField(1, name),
    { no: 3, wire: 0, value: BigInt(value) },
    { no: 20, wire: 0, value: 2n },
  ]);
}

/** TensorProto element types used here. */
export const ELEM = { float: 1, int32: 6, int64: 7 } as const;

/** A graph input/output (ValueInfoProto) of a tensor of `elemType`, shape left open. */
export function tensorValueInfo(name: string, elemType: number): Uint8Array {
  const tensorType = encodeMessage([{ no: 1, wire: 0, value: BigInt(elemType) }]);
  const type = encodeMessage([bytesField(1, tensorType)]);
  return encodeMessage([stringField(1, name), bytesField(2, type)]);
}

/** Name of a ValueInfoProto. */
export function valueInfoName(bytes: Uint8Array): string {
  const f = decodeMessage(bytes).find((x) => x.no === 1 && x.wire === 2);
  return f ? utf8.decode(asBytes(f)) : '';
}

/** Name and values of an AttributeProto that is a tensor (`t`), or undefined. */
export function attributeTensor(attribute: Uint8Array): { name: string; tensor: Uint8Array } | undefined {
  let name = '';
  let tensor: Uint8Array | undefined;
  for (const f of decodeMessage(attribute)) {
    if (f.no === 1 && f.wire === 2) name = utf8.decode(asBytes(f));
    else if (f.no === 5 && f.wire === 2) tensor = asBytes(f);
  }
  return tensor ? { name, tensor } : undefined;
}

/** A TensorProto's name and, when it is float32 and small (at most `limit` values), its values. */
export function decodeFloatTensor(bytes: Uint8Array, limit = 16): { name: string; values?: number[] } {
  let name = '';
  let type = 0;
  let raw: Uint8Array | undefined;
  const floats: number[] = [];
  for (const f of decodeMessage(bytes)) {
    if (f.no === 8 && f.wire === 2) name = utf8.decode(asBytes(f));
    else if (f.no === 2 && f.wire === 0) type = Number(f.value);
    else if (f.no === 9 && f.wire === 2) raw = asBytes(f);
    else if (f.no === 4 && f.wire === 5) floats.push(view(asBytes(f)).getFloat32(0, true));
    else if (f.no === 4 && f.wire === 2) {
      const b = asBytes(f);
      const v = view(b);
      for (let i = 0; i + 4 <= b.length; i += 4) floats.push(v.getFloat32(i, true));
    }
  }
  if (type !== FLOAT) return { name };
  if (raw) {
    if (raw.length / 4 > limit) return { name };
    const v = view(raw);
    const values: number[] = [];
    for (let i = 0; i + 4 <= raw.length; i += 4) values.push(v.getFloat32(i, true));
    return { name, values };
  }
  return floats.length <= limit ? { name, values: floats } : { name };
}

/** A model split into the graph's nodes (decoded) and everything else (kept as bytes). */
export interface OnnxModel {
  /** ModelProto fields other than the graph. */
  modelRest: WireField[];
  /** GraphProto fields other than its nodes, in order. */
  graphRest: WireField[];
  nodes: OnnxNode[];
}

export function decodeModel(bytes: Uint8Array): OnnxModel {
  const modelRest: WireField[] = [];
  let graph: Uint8Array | undefined;
  for (const f of decodeMessage(bytes)) {
    if (f.no === 7 && f.wire === 2) graph = asBytes(f);
    else modelRest.push(f);
  }
  if (!graph) throw new Error('ONNX model has no graph');
  const graphRest: WireField[] = [];
  const nodes: OnnxNode[] = [];
  for (const f of decodeMessage(graph)) {
    if (f.no === 1 && f.wire === 2) nodes.push(decodeNode(asBytes(f)));
    else graphRest.push(f);
  }
  return { modelRest, graphRest, nodes };
}

export function encodeModel(model: OnnxModel): Uint8Array {
  const graph = encodeMessage([...model.nodes.map((n) => bytesField(1, encodeNode(n))), ...model.graphRest]);
  // The graph goes where ModelProto puts it (field 7); field order does not matter to protobuf readers.
  return encodeMessage([...model.modelRest, bytesField(7, graph)]);
}

/** Scalar float constants of a graph by value name: small float initialisers and `Constant` nodes. */
export function scalarConstants(model: OnnxModel): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of model.graphRest) {
    if (f.no !== 5 || f.wire !== 2) continue;
    const t = decodeFloatTensor(asBytes(f), 1);
    if (t.values?.length === 1) out.set(t.name, t.values[0] as number);
  }
  for (const node of model.nodes) {
    if (node.opType !== 'Constant' || node.outputs.length !== 1) continue;
    for (const a of node.attributes) {
      const at = attributeTensor(a);
      if (!at || at.name !== 'value') continue;
      const t = decodeFloatTensor(at.tensor, 1);
      if (t.values?.length === 1) out.set(node.outputs[0] as string, t.values[0] as number);
    }
  }
  return out;
}
