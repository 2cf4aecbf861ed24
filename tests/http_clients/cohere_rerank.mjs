// The official Cohere client (npm cohere-ai, its V1 CohereClient) against
// encoder-server's POST /v1/rerank: one rerank call through the SDK, and what
// it got printed as one JSON object on stdout, for tests/server/e2e_cohere.sh
// to compare with the raw routes:
//   {"url": where the SDK posted, "sent": the body it sent (the wire's
//    snake_case), "response": the SDK's answer (its camelCase: id, results
//    [{index, relevanceScore, document?}], meta), "raw": the server's body}
// The SDK parses the answer without validating it (skipValidation), so a
// missing or mistyped field would pass unnoticed: the script also checks the
// raw body against the SDK's own RerankResponse schema with validation on,
// and fails when it does not pass, naming the fields.
//
// Any SDK error (a 4xx or 5xx from the server, a refused connection, a
// timeout) exits 1 with the error's class, status and the server's body on
// stderr: the e2e test's error path.
//
// Usage: node cohere_rerank.mjs BASE_URL [--api-key KEY] [--request JSON]
//   BASE_URL   the server's HTTP root, e.g. http://127.0.0.1:8080 (a trailing
//              /v1 is dropped by the SDK itself)
//   --api-key  the server's key; without it no Authorization header is sent
//   --request  the SDK's request (its camelCase: query, documents, topN,
//              returnDocuments, model); default: a query and five documents,
//              strings and {text} objects, topN 3, returnDocuments true
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { CohereClient, CohereError } from 'cohere-ai';

function die(message) {
  console.error(`cohere_rerank: FAIL: ${message}`);
  process.exit(1);
}

let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: { 'api-key': { type: 'string' }, request: { type: 'string' } },
  });
} catch (error) {
  die(`${error.message}\nusage: node cohere_rerank.mjs BASE_URL [--api-key KEY] [--request JSON]`);
}
if (args.positionals.length !== 1) {
  die('usage: node cohere_rerank.mjs BASE_URL [--api-key KEY] [--request JSON]');
}
const [baseUrl] = args.positionals;
const request = args.values.request
  ? JSON.parse(args.values.request)
  : {
      model: 'rerank',
      query: 'what is the city by the river',
      documents: [
        'the city is by the river',
        { text: 'music and books' },
        'a quick brown fox jumps over the lazy dog',
        { text: 'the old town lies on both banks of the river' },
        'search query',
      ],
      topN: 3,
      returnDocuments: true,
    };

// The SDK's own response schema (not among the package's exports: loaded by
// its path inside the package).
const require = createRequire(import.meta.url);
const serialization = require(join(dirname(require.resolve('cohere-ai')), 'serialization'));

// What went over the wire, through the SDK's `fetch` option.
let exchange = null;
async function recordingFetch(url, init) {
  exchange = { url: String(url), sent: init?.body == null ? null : String(init.body), raw: null };
  const response = await fetch(url, init);
  exchange.raw = await response.clone().text();
  return response;
}

const client = new CohereClient({
  environment: baseUrl,
  // "" sends no Authorization header (the SDK's optional auth): a server
  // without keys; a key is sent as "Bearer KEY".
  token: args.values['api-key'] ?? '',
  fetch: recordingFetch,
  timeoutInSeconds: 30,
  maxRetries: 0,
});

let response;
try {
  response = await client.rerank(request);
} catch (error) {
  const where = exchange ? ` (POST ${exchange.url})` : '';
  if (error instanceof CohereError && error.statusCode != null) {
    die(`the SDK raised ${error.constructor.name}${where}, status ${error.statusCode}: ` +
      `${JSON.stringify(error.body ?? null)}`);
  }
  die(`the SDK raised ${error?.constructor?.name ?? typeof error}${where}: ${error?.message ?? error}`);
}

if (!exchange) die('the SDK answered without calling fetch');
let raw;
try {
  raw = JSON.parse(exchange.raw);
} catch (error) {
  die(`the server's answer is not JSON (${error.message}): ${exchange.raw.slice(0, 300)}`);
}
const strict = serialization.RerankResponse.parse(raw, {
  unrecognizedObjectKeys: 'passthrough',
  breadcrumbsPrefix: ['response'],
});
if (!strict.ok) {
  die(`the answer does not pass the SDK's RerankResponse schema: ` +
    `${strict.errors.map((e) => `${e.path.join('.')}: ${e.message}`).join('; ')}\n${exchange.raw}`);
}
if (!Array.isArray(response.results)) die(`the SDK's answer has no results: ${JSON.stringify(response)}`);

console.log(JSON.stringify({
  url: exchange.url,
  sent: exchange.sent == null ? null : JSON.parse(exchange.sent),
  response,
  raw,
}));
