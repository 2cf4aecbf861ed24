#!/usr/bin/env bash
# POST /v1/rerank with the official Cohere client, end to end on 127.0.0.1:
# encoder-cli make-model writes a reranker (--head classifier --labels 1),
# encoder-server serves it with HTTP on, and the cohere-ai npm package's V1
# CohereClient (tests/http_clients/cohere_rerank.mjs) reranks through it:
#   - the SDK posts to ENVIRONMENT/v1/rerank with Cohere's snake_case body
#     (top_n, return_documents, the documents as given: strings and {text}
#     objects), and the server's answer passes the SDK's own response schema
#     with validation on (the SDK itself skips it);
#   - what the SDK gives equals the raw routes, checked with curl + jq: the
#     same body POSTed to /v1/rerank, and TEI's POST /rerank on the same
#     texts; the same indices in the same order, scores within 1e-6, the
#     documents' texts when return_documents asks, none otherwise, at most
#     top_n results (every document without it), best first;
#   - a 4xx from the server (an empty documents list, top_n 0) is an SDK
#     error (BadRequestError with the server's message, in Cohere's
#     {"message"}): the script exits 1; so is a refused connection;
#   - a server with --api-key: the SDK with the key answers as the server
#     without keys, without a key or with a wrong one UnauthorizedError (401);
#   - SIGTERM ends each server with 0.
# Installs Node.js (Debian) when missing and the pinned npm packages (npm ci
# --ignore-scripts) when package-lock.json changed, as e2e_http.sh does.
# Every curl and SDK call has a timeout.
#
# Usage: e2e_cohere.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
clients="$root/tests/http_clients"

name=e2e_cohere
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl jq

install_npm_packages "$clients"

"$cli_bin" make-model --out "$work/rerank" --hidden 64 --layers 2 --heads 4 --intermediate 128 \
  --max-position 128 --seed 11 --head classifier --labels 1 >/dev/null

# Starts the server with HTTP on a free port; sets port (gRPC) and http.
start_http_server() {
  http=$(free_port)
  start_server "$work/rerank" --http-port "$http" --threads 1 "$@"
  check "the start line names the HTTP port and /v1/rerank" \
    grep -q "HTTP API on http://127.0.0.1:$http (.*POST /v1/rerank" "$work/server.log"
}
stop_cleanly() {
  local status=0
  stop_server || status=$?
  check "SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
}

# sdk OUT ARGS...: cohere_rerank.mjs against this server (ARGS: --request,
# --api-key); its JSON in OUT, its stderr in OUT.err; its exit status.
sdk() {
  local out=$1
  shift
  timeout 60 node "$clients/cohere_rerank.mjs" "http://127.0.0.1:$http" "$@" >"$out" 2>"$out.err"
}
# post PATH BODY OUT [curl args...]: prints the status ("000": no answer within 10 s).
post() {
  local path=$1 body=$2 out=$3
  shift 3
  curl -s --max-time 10 -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "$body" "$@" "http://127.0.0.1:$http$path" || true
}

# What differs between the SDK's answer ($1, cohere_rerank.mjs's output), the
# raw /v1/rerank's ($2) and TEI /rerank's ($3, with return_text) to the
# request $4 (the SDK's camelCase), one line each; nothing when all agree.
# shellcheck disable=SC2016  # jq's variables, not the shell's
problems() {
  jq -rn --slurpfile s "$1" --slurpfile r "$2" --slurpfile t "$3" --argjson request "$4" \
    --arg url "http://127.0.0.1:$http/v1/rerank" '
    def scores_differ($a; $b; $what):
      range(0; [$a, $b] | map(length) | min) as $i
      | select((($a[$i].score - $b[$i].score) | fabs) > 1e-6)
      | "result \($i) (document \($a[$i].index)): SDK score \($a[$i].score), \($what) \($b[$i].score)";
    def indices_differ($a; $b; $what):
      select(($a | map(.index)) != ($b | map(.index)))
      | "indices: SDK \($a | map(.index)), \($what) \($b | map(.index))";
    $s[0] as $sdk | $r[0] as $raw | $t[0] as $tei
    | ($request.documents | map(if type == "string" then . else .text end)) as $texts
    | ([($texts | length), ($request.topN // ($texts | length))] | min) as $n
    | ($sdk.response.results | map({index, score: .relevanceScore, text: .document.text})) as $got
    | ($raw.results | map({index, score: .relevance_score, text: .document.text})) as $want
    | ($tei[:$n] | map({index, score, text})) as $teis
    | (select($sdk.url != $url) | "the SDK posted to \($sdk.url), not \($url)"),
      (select($sdk.sent.query != $request.query or $sdk.sent.documents != $request.documents
          or $sdk.sent.top_n != $request.topN or $sdk.sent.return_documents != $request.returnDocuments)
        | "the SDK sent \($sdk.sent | tojson)"),
      (select(($got | length) != $n) | "\($got | length) results, want \($n) (top_n \($request.topN))"),
      indices_differ($got; $want; "/v1/rerank"),
      scores_differ($got; $want; "/v1/rerank"),
      indices_differ($got; $teis; "TEI /rerank"),
      scores_differ($got; $teis; "TEI /rerank"),
      (select(($got | map(.text)) != ($want | map(.text)))
        | "documents: SDK \($got | map(.text)), /v1/rerank \($want | map(.text))"),
      (if $request.returnDocuments then
         ($got[] | select(.text != $texts[.index])
           | "document \(.index): SDK text \(.text | tojson), sent \($texts[.index] | tojson)"),
         (select(($got | map(.text)) != ($teis | map(.text)))
           | "documents: SDK \($got | map(.text)), TEI /rerank \($teis | map(.text))")
       else
         $sdk.response.results[] | select(has("document")) | "a document without return_documents: \(tojson)"
       end),
      (select(($got | map(.score)) != ($got | map(.score) | sort | reverse))
        | "not best first: \($got | map(.score))"),
      (select(($sdk.response.id | test("^rerank-[0-9]+$")) | not) | "id \($sdk.response.id)"),
      (select($sdk.response.meta.apiVersion.version != "2" or $sdk.response.meta.billedUnits.searchUnits != 1)
        | "meta \($sdk.response.meta | tojson)")'
}

# rerank_case LABEL REQUEST [--api-key KEY]: REQUEST (the SDK's camelCase)
# through the SDK, the body it sent through curl to /v1/rerank, its texts to
# TEI /rerank; every answer must agree (problems). The SDK's output stays in
# $work/sdk.json.
rerank_case() {
  local label=$1 request=$2 sent status found curl_auth=()
  shift 2
  if [ $# -eq 2 ]; then curl_auth=(-H "Authorization: Bearer $2"); fi
  sdk "$work/sdk.json" --request "$request" "$@" ||
    fail "$label: the Cohere SDK failed: $(cat "$work/sdk.json.err")"
  sent=$(jq -c .sent "$work/sdk.json")
  status=$(post /v1/rerank "$sent" "$work/raw.json" "${curl_auth[@]}")
  check "$label: the raw /v1/rerank of the SDK's body is 200 (got $status): $(head -c 300 "$work/raw.json")" \
    test "$status" = 200
  status=$(post /rerank "$(jq -c '{query, texts: (.documents | map(if type == "string" then . else .text end)),
    return_text: true}' <<<"$sent")" "$work/tei.json" "${curl_auth[@]}")
  check "$label: TEI /rerank is 200 (got $status): $(head -c 300 "$work/tei.json")" test "$status" = 200
  found=$(problems "$work/sdk.json" "$work/raw.json" "$work/tei.json" "$request") ||
    fail "$label: jq failed on the answers"
  check "$label: the SDK's answer is the raw routes':
$found
  SDK:        $(jq -c .response.results "$work/sdk.json" | head -c 600)
  /v1/rerank: $(jq -c .results "$work/raw.json" | head -c 600)
  TEI:        $(head -c 600 "$work/tei.json")" test -z "$found"
  log "$label: $(jq -c '[.response.results[] | [.index, .relevanceScore]]' "$work/sdk.json")"
}

# sdk_refused LABEL STATUS CLASS MESSAGE ARGS...: the SDK call must fail
# (exit 1) naming CLASS, STATUS and MESSAGE (the server's).
sdk_refused() {
  local label=$1 status=$2 class=$3 message=$4 code=0
  shift 4
  sdk "$work/refused.json" "$@" || code=$?
  check "$label: the SDK call fails (exit $code, stdout: $(head -c 200 "$work/refused.json"))" \
    test "$code" -eq 1
  check "$label: $class, $status, \"$message\": $(cat "$work/refused.json.err")" \
    grep -qF "FAIL: the SDK raised $class (POST http://127.0.0.1:$http/v1/rerank), status $status: " \
    "$work/refused.json.err"
  check "$label: the server's message reaches the caller: $(cat "$work/refused.json.err")" \
    grep -qF "$message" "$work/refused.json.err"
}

query="what is the city by the river"
# Strings and {text} objects, as Cohere takes them.
documents=$(jq -cn '["the city is by the river", {text: "music and books"},
  "a quick brown fox jumps over the lazy dog", {text: "the old town lies on both banks of the river"},
  "search query"]')
request() {  # request [JQ_ASSIGNMENTS]: the SDK's request, with top_n 3 and documents unless changed
  jq -cn --arg q "$query" --argjson d "$documents" \
    "{model: \"rerank\", query: \$q, documents: \$d, topN: 3, returnDocuments: true} | ${1:-.}"
}

# --- Without keys -------------------------------------------------------------------------
start_http_server
rerank_case "top_n 3, documents returned" "$(request)"
cp "$work/sdk.json" "$work/first.json"
# shellcheck disable=SC2016  # jq's variables, not the shell's
check "the reranker's scores differ between documents (else the order proves nothing): \
$(jq -c .results "$work/raw.json")" \
  jq -e '(.results | map(.relevance_score)) as $s | ($s | max) - ($s | min) > 1e-4' \
  "$work/raw.json" >/dev/null
check "the SDK's answer passes its schema and keeps the server's extra fields: $(jq -c .response "$work/sdk.json" | head -c 300)" \
  jq -e '.response.model == "rerank" and .response.usage.total_tokens > 0' "$work/sdk.json" >/dev/null
rerank_case "no top_n, no documents" "$(request 'del(.topN) | .returnDocuments = false')"
rerank_case "top_n above the documents' count" "$(request '.topN = 10')"
rerank_case "top_n 1, objects only" "$(request '.topN = 1 | .documents |= map(if type == "string" then {text: .} else . end)')"
rerank_case "return_documents unset (false)" "$(request 'del(.returnDocuments)')"

# The error path: the server's 4xx (Cohere's error shape) is an SDK error.
sdk_refused "an empty documents list" 400 BadRequestError '\"documents\" is empty' \
  --request "$(request '.documents = []')"
sdk_refused "top_n 0" 400 BadRequestError '\"top_n\" must be 1 or more' --request "$(request '.topN = 0')"
check "curl agrees: top_n 0 is 400 naming top_n" \
  test "$(post /v1/rerank '{"query": "a", "documents": ["b"], "top_n": 0}' "$work/e")" = 400
check "Cohere's {\"message\"} naming top_n: $(cat "$work/e")" \
  jq -e '. == {message: "\"top_n\" must be 1 or more"}' "$work/e" >/dev/null
rerank_case "still serving after the errors" "$(request)"
stop_cleanly

# Nothing listening: the script fails too, naming the SDK's error.
http=$(free_port)
code=0
sdk "$work/refused.json" || code=$?
# shellcheck disable=SC2016  # bash -c's arguments, not this shell's
check "a refused connection fails the script (exit $code): $(cat "$work/refused.json.err")" \
  bash -c '[ "$1" -eq 1 ] && grep -q "FAIL: the SDK raised" "$2"' _ "$code" "$work/refused.json.err"

# --- API keys -------------------------------------------------------------------------------
start_http_server --api-key cohere-test-key
rerank_case "with the API key" "$(request)" --api-key cohere-test-key
# shellcheck disable=SC2016  # jq's variables, not the shell's
check "with the key: the results of the server without keys" \
  jq -en --slurpfile a "$work/sdk.json" --slurpfile b "$work/first.json" \
  '$a[0].response.results as $x | $b[0].response.results as $y
    | ($x | map([.index, .document])) == ($y | map([.index, .document]))
    and all(range(0; $x | length); (($x[.].relevanceScore - $y[.].relevanceScore) | fabs) <= 1e-6)' \
  >/dev/null
sdk_refused "no key" 401 UnauthorizedError 'a valid API key is needed' --request "$(request)"
sdk_refused "a wrong key" 401 UnauthorizedError 'a valid API key is needed' --request "$(request)" \
  --api-key wrong-key
check "the key never reaches the log" bash -c "! grep -q cohere-test-key '$work/server.log'"
stop_cleanly
echo "e2e_cohere: all checks passed"
