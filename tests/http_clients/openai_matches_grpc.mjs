// The official OpenAI client against encoder-server's HTTP API: its
// embeddings (float and base64, with and without `dimensions`) must equal the
// gRPC API's for the same texts (encoder-client encode --normalize, one JSON
// line per text), and TEI's /embed answer (curl's output) too. Then what the
// client makes of the server's answers beyond embeddings: its error classes
// with OpenAI's param and code, models.retrieve, and a too-long input cut by
// the server's default --auto-truncate (usage = the model's maximum) or
// refused with "truncate": false.
//
// Exact equality for the full vectors: both APIs run the same engine on the
// same batch and send float32 values (gRPC as the shortest text that reads
// back as the same float, HTTP as JSON numbers or base64 bytes), so every
// value must be the same float. With `dimensions`, the server re-normalizes
// the first N in float32; the reference here does it in double: 1e-6
// absolute (a few float32 ulps at unit scale).
//
// Usage: node openai_matches_grpc.mjs BASE_URL TEXTS_JSON GRPC_JSONL TEI_JSON
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const [baseURL, textsFile, grpcFile, teiFile] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
const grpc = readFileSync(grpcFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l).embedding);
const tei = JSON.parse(readFileSync(teiFile, 'utf8'));

let failures = 0;
function fail(message) {
  console.error(`openai_matches_grpc: FAIL: ${message}`);
  failures += 1;
}

function compare(what, got, want, tolerance) {
  if (got.length !== want.length) return fail(`${what}: ${got.length} values, want ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs(Math.fround(got[i]) - Math.fround(want[i]));
    if (!(diff <= tolerance)) return fail(`${what}[${i}]: ${got[i]} != ${want[i]}`);
  }
}

function matryoshka(values, n) {
  const cut = values.slice(0, n);
  const norm = Math.sqrt(cut.reduce((s, v) => s + v * v, 0));
  return cut.map((v) => v / norm);
}

const client = new OpenAI({ baseURL, apiKey: 'not-checked', maxRetries: 0 });
if (grpc.length !== texts.length) fail(`gRPC gave ${grpc.length} lines for ${texts.length} texts`);

const asFloat = await client.embeddings.create({ model: 'any', input: texts, encoding_format: 'float' });
if (asFloat.object !== 'list') fail(`object is ${asFloat.object}`);
if (!(asFloat.usage.prompt_tokens > 0)) fail(`usage: ${JSON.stringify(asFloat.usage)}`);
asFloat.data.forEach((d, i) => {
  if (d.index !== i || d.object !== 'embedding') fail(`data[${i}]: ${JSON.stringify(d).slice(0, 80)}`);
  compare(`float ${i}`, d.embedding, grpc[i], 0);
});

// Without encoding_format the client asks for base64 and decodes it itself
// (little-endian float32); with an explicit "base64" it hands the string over.
const decoded = await client.embeddings.create({ model: 'any', input: texts });
decoded.data.forEach((d, i) => compare(`base64 (client-decoded) ${i}`, Array.from(d.embedding), grpc[i], 0));
const fromBase64 = (text) => {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, k) => bytes.readFloatLE(4 * k));
};
const asBase64 = await client.embeddings.create({ model: 'any', input: texts, encoding_format: 'base64' });
asBase64.data.forEach((d, i) => compare(`base64 ${i}`, fromBase64(d.embedding), grpc[i], 0));

const dims = 16;
for (const format of ['float', 'base64', undefined]) {
  const request = { model: 'any', input: texts, dimensions: dims };
  if (format) request.encoding_format = format;
  const cut = await client.embeddings.create(request);
  cut.data.forEach((d, i) => {
    const values = format === 'base64' ? fromBase64(d.embedding) : Array.from(d.embedding);
    compare(`${format ?? 'default'} dimensions=${dims} ${i}`, values, matryoshka(grpc[i], dims), 1e-6);
  });
}

// A single string, as most callers send it.
const single = await client.embeddings.create({ model: 'any', input: texts[0] });
compare('single string', single.data[0].embedding, grpc[0], 0);

// The client surfaces the server's error as its error class, with OpenAI's
// param and code. `call` must fail.
async function expectError(what, call, { status, param, code, message }) {
  try {
    await call();
    fail(`${what}: accepted`);
  } catch (error) {
    if (error.status !== status) fail(`${what}: status ${error.status} (${error.message})`);
    if (error.param !== param) fail(`${what}: param ${error.param}`);
    if (error.code !== code) fail(`${what}: code ${error.code}`);
    if (error.type !== 'invalid_request_error') fail(`${what}: type ${error.type}`);
    if (!String(error.message).includes(message)) fail(`${what}: ${error.message}`);
  }
}
await expectError('empty text', () => client.embeddings.create({ model: 'any', input: ['fine', ''] }),
  { status: 400, param: 'input[1]', code: 'invalid_value', message: 'input 1: text is empty' });
await expectError('dimensions', () => client.embeddings.create({ model: 'any', input: 'a', dimensions: 100000 }),
  { status: 400, param: 'dimensions', code: 'invalid_value', message: '"dimensions" must be' });

// Longer than the model's maximum (/info): cut by default, usage counts what
// was encoded; "truncate": false (the server's extension) asks for the error.
const info = await (await fetch(new URL('../info', `${baseURL}/`))).json();
const long = 'hello '.repeat(info.max_input_length + 50);
const cut = await client.embeddings.create({ model: 'any', input: long });
if (cut.usage.prompt_tokens !== info.max_input_length) fail(`cut usage: ${JSON.stringify(cut.usage)}`);
await expectError('too long', () => client.embeddings.create({ model: 'any', input: long, truncate: false }),
  { status: 400, param: 'input', code: 'context_length_exceeded',
    message: `more than the model's maximum of ${info.max_input_length}` });

tei.forEach((v, i) => compare(`TEI /embed ${i}`, v, grpc[i], 0));

const models = await client.models.list();
if (models.data.length !== 1) fail(`models: ${JSON.stringify(models.data)}`);
const served = models.data[0].id;
const model = await client.models.retrieve(served);
if (model.id !== served || model.object !== 'model') fail(`models.retrieve: ${JSON.stringify(model)}`);
await expectError('another model', () => client.models.retrieve('no-such-model'),
  { status: 404, param: 'model', code: 'model_not_found', message: "'no-such-model' does not exist" });

if (failures > 0) process.exit(1);
console.log(`openai_matches_grpc: ${texts.length} texts equal over gRPC, OpenAI (float, base64, dimensions) and TEI`);
