// ortrun runs an ONNX model in ONNX Runtime (npm's onnxruntime-node, CPU
// execution provider), for volt's ONNX export tests (package onnxcheck).
//
//   ORT_NODE_MODULE=DIR/node_modules/onnxruntime-node node ortrun.js REQUEST.json
//
// REQUEST.json is {"model": PATH, "inputs": [{"name", "type", "dims",
// "file"}], "out_dir": DIR}: each input's data is in its file, raw and
// little-endian, of type float32, float64, int32 or int64. Every output is
// written to DIR/output_<i>.bin the same way, and stdout receives
// {"version": ORT's version, "outputs": [{"name", "type", "dims", "file"}]}.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const arrays = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  int64: BigInt64Array,
};

async function main(requestPath) {
  const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');
  const req = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  // ORT's default graph optimizations (what a user gets), on one thread.
  const session = await ort.InferenceSession.create(req.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const feeds = {};
  for (const input of req.inputs) {
    const Array = arrays[input.type];
    if (!Array) {
      throw new Error(`input ${input.name}: type ${input.type} is not one of ${Object.keys(arrays)}`);
    }
    const buf = fs.readFileSync(input.file);
    const data = new Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[input.name] = new ort.Tensor(input.type, data, input.dims);
  }
  const results = await session.run(feeds);
  const outputs = session.outputNames.map((name, i) => {
    const t = results[name];
    const file = path.join(req.out_dir, `output_${i}.bin`);
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    return { name, type: t.type, dims: t.dims.map(Number), file };
  });
  process.stdout.write(JSON.stringify({ version: ort.env.versions.common, outputs }));
}

main(process.argv[2]).catch((err) => {
  process.stderr.write(`ortrun: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
