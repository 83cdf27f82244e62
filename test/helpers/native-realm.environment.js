// The Jest environment of every test: Node's, with the main context's typed arrays (onnxruntime-node needs them).
// Jest runs test code in a vm context with its own typed-array constructors, while a native addon creates its arrays
// in Node's main context, so onnxruntime's `instanceof Float32Array` checks fail inside Jest only. This environment
// hands the test context the main context's typed arrays so both sides agree. Plain Node never needs it.
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class NativeRealmEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = NativeRealmEnvironment;
