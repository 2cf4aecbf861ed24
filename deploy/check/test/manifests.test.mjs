// deploy/k8s renders, every object validates, the deployment's rules hold, and
// broken manifests fail: run with `node --test deploy/check/test/`.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { adapterMetrics, checkKustomization, defaultTargets, failures, K8S_DIR } from "../check.mjs";
import { checkPolicies, parseDuration, parseQuantity } from "../policy.mjs";
import { render, RenderError } from "../render.mjs";
import { validateObject } from "../validate.mjs";

const CHECK = fileURLToPath(new URL("../check.mjs", import.meta.url));
const overlay = (name) => path.join(K8S_DIR, "overlays", name);
const find = (objects, kind, name) =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const serverContainer = (objects) =>
  find(objects, "Deployment").spec.template.spec.containers.find((c) => c.name === "encoder-server");
const policyOptions = { adapterMetrics: adapterMetrics() };

function describeResult(result) {
  return JSON.stringify({ error: result.error, policy: result.policy,
                          schema: result.schema.filter((r) => r.errors.length > 0) }, null, 2);
}

// A scratch copy of deploy/k8s, to break on purpose.
function scratchTree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-check-"));
  fs.cpSync(K8S_DIR, dir, { recursive: true });
  return dir;
}

function appendPatch(kustomizationFile, patch) {
  fs.appendFileSync(kustomizationFile, patch);
}

describe("every kustomization renders and validates", () => {
  const targets = defaultTargets();
  it("covers the base and the overlays", () => {
    const names = targets.map((t) => path.relative(K8S_DIR, t));
    for (const expected of ["base", "overlays/example", "overlays/example-custom-metric"]) {
      assert.ok(names.includes(expected), `${expected} in ${names}`);
    }
  });
  for (const dir of targets) {
    it(path.relative(K8S_DIR, dir), async () => {
      const result = await checkKustomization(dir);
      assert.equal(failures(result), 0, describeResult(result));
      const kinds = result.objects.map((o) => o.kind).sort();
      for (const kind of ["Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service",
                          "ServiceAccount", "ServiceMonitor"]) {
        assert.ok(kinds.includes(kind), `${kind} rendered`);
      }
      assert.equal(kinds.filter((k) => k === "Service").length, 2, "a ClusterIP and a headless Service");
    });
  }
});

describe("what the rendered deployment promises", () => {
  const objects = render(overlay("example"));
  const deployment = find(objects, "Deployment");
  const pod = deployment.spec.template.spec;
  const server = serverContainer(objects);

  it("puts everything in the overlay's namespace", () => {
    for (const o of objects) assert.equal(o.metadata.namespace, "encoder", `${o.kind} ${o.metadata.name}`);
  });
  it("uses the overlay's images", () => {
    assert.equal(server.image, "registry.example.com/encoder/encoder-server:0.1.0");
    assert.equal(pod.initContainers[0].image, "registry.example.com/encoder/models/minilm-l6:1");
  });
  it("copies the model from the model image instead of claiming a volume", () => {
    assert.equal(find(objects, "PersistentVolumeClaim"), undefined);
    assert.deepEqual(pod.volumes.find((v) => v.name === "model"), { name: "model", emptyDir: { sizeLimit: "4Gi" } });
    assert.deepEqual(server.volumeMounts.find((m) => m.name === "model"),
                     { name: "model", mountPath: "/models", readOnly: true });
    assert.ok(server.env.some((e) => e.name === "ENCODER_MODEL" && e.value === "/models/model"));
  });
  it("wires the engine threads to the CPU limit", () => {
    const threads = server.env.find((e) => e.name === "ENCODER_THREADS");
    assert.deepEqual(threads.valueFrom.resourceFieldRef,
                     { containerName: "encoder-server", resource: "limits.cpu", divisor: "1" });
    assert.equal(server.resources.limits.cpu, "4");
    assert.deepEqual(server.resources.requests, server.resources.limits);
  });
  it("probes gRPC health, and the HTTP API's /health for readiness", () => {
    assert.deepEqual(server.startupProbe.grpc, { port: 50051 });
    assert.deepEqual(server.readinessProbe.httpGet, { path: "/health", port: "http" });
    assert.deepEqual(server.livenessProbe.grpc, { port: 50051 });
    assert.equal(server.ports.find((p) => p.name === "http").containerPort, 8080);
    assert.equal(server.env.find((e) => e.name === "ENCODER_HTTP_PORT").value, "8080");
  });
  it("labels the ServiceMonitor for kube-prometheus-stack", () => {
    assert.equal(find(objects, "ServiceMonitor").metadata.labels.release, "kube-prometheus-stack");
  });
  it("keeps the selectors stable while adding labels", () => {
    assert.deepEqual(deployment.spec.selector.matchLabels, { "app.kubernetes.io/name": "encoder-server" });
    assert.equal(deployment.spec.template.metadata.labels["app.kubernetes.io/instance"], "encoder-example");
    assert.equal(deployment.metadata.labels["app.kubernetes.io/part-of"], "encoder-service");
  });
  it("scales on in-flight requests in the custom-metric variant", () => {
    const hpa = find(render(overlay("example-custom-metric")), "HorizontalPodAutoscaler");
    assert.deepEqual(hpa.spec.metrics.map((m) => m.type), ["Pods", "Resource"]);
    assert.equal(hpa.spec.metrics[0].pods.metric.name, "encoder_inflight_requests");
    assert.ok(adapterMetrics().includes("encoder_inflight_requests"));
    assert.equal(hpa.spec.maxReplicas, 6, "the example overlay's patch still applies");
  });
});

describe("a broken field fails the schema check", () => {
  const fresh = () => structuredClone(find(render(overlay("example")), "Deployment"));

  it("a probe port that is not a number", async () => {
    const d = fresh();
    d.spec.template.spec.containers[0].livenessProbe.grpc.port = "grpc";
    const errors = await validateObject(d);
    assert.ok(errors.some((e) => /livenessProbe\/grpc\/port must be integer/.test(e)), errors.join("\n"));
  });
  it("an unknown (misspelt) field", async () => {
    const d = fresh();
    d.spec.template.spec.containers[0].startupProbes = d.spec.template.spec.containers[0].startupProbe;
    const errors = await validateObject(d);
    assert.deepEqual(errors, ["unknown field /spec/template/spec/containers/0/startupProbes"]);
  });
  it("an unknown top-level field", async () => {
    const d = fresh();
    d.spec_ = {};
    assert.deepEqual(await validateObject(d), ["unknown field /spec_"]);
  });
  it("a missing required field", async () => {
    const d = fresh();
    delete d.spec.template.spec.containers[0].name;
    const errors = await validateObject(d);
    assert.ok(errors.some((e) => /containers\/0 must have required property '?name'?/.test(e)), errors.join("\n"));
  });
  it("a wrong type in a ServiceMonitor (CRD schema)", async () => {
    const m = structuredClone(find(render(overlay("example")), "ServiceMonitor"));
    m.spec.endpoints = { port: "metrics" };
    const errors = await validateObject(m);
    assert.ok(errors.some((e) => /spec\/endpoints must be array/.test(e)), errors.join("\n"));
    m.spec.endpoints = [{ port: "metrics", intervall: "15s" }];
    assert.deepEqual(await validateObject(m), ["unknown field /spec/endpoints/0/intervall"]);
  });
  it("an unknown kind", async () => {
    const errors = await validateObject({ apiVersion: "apps/v1", kind: "Deploymnet", metadata: { name: "x" } });
    assert.deepEqual(errors, ["no schema for apps/v1 Deploymnet"]);
  });
  it("labels and annotations accept any key", async () => {
    const d = fresh();
    d.metadata.annotations = { "example.com/anything": "x" };
    d.spec.template.metadata.labels["example.com/team"] = "search";
    assert.deepEqual(await validateObject(d), []);
  });
});

describe("a broken rule fails the policy check", () => {
  const broken = (mutate) => {
    const objects = structuredClone(render(overlay("example")));
    mutate(objects);
    return checkPolicies(objects, policyOptions);
  };
  const expectProblem = (problems, pattern) =>
    assert.ok(problems.some((p) => pattern.test(p)), `expected ${pattern} in:\n${problems.join("\n")}`);

  it("not broken: ENCODER_HTTP_PORT unset is the server's default, 8080", () => {
    const problems = broken((o) => {
      serverContainer(o).env = serverContainer(o).env.filter((e) => e.name !== "ENCODER_HTTP_PORT");
    });
    assert.deepEqual(problems.filter((p) => /HTTP_PORT|http container port/.test(p)), []);
  });
  it("requests below limits (Burstable QoS)", () => {
    expectProblem(broken((o) => { serverContainer(o).resources.requests.cpu = "1"; }),
                  /cpu request 1 must equal its limit 4/);
    expectProblem(broken((o) => { delete find(o, "Deployment").spec.template.spec.initContainers[0].resources.limits; }),
                  /container model: cpu request and limit are both required/);
  });
  it("a termination grace shorter than preStop + shutdown grace", () => {
    expectProblem(broken((o) => { find(o, "Deployment").spec.template.spec.terminationGracePeriodSeconds = 20; }),
                  /terminationGracePeriodSeconds 20 < preStop 5 s \+ shutdown grace 20 s/);
    expectProblem(broken((o) => {
      serverContainer(o).env.find((e) => e.name === "ENCODER_SHUTDOWN_GRACE").value = "1m";
    }), /terminationGracePeriodSeconds 35 < preStop 5 s \+ shutdown grace 60 s/);
  });
  it("threads not from the CPU limit", () => {
    expectProblem(broken((o) => {
      serverContainer(o).env = serverContainer(o).env.map((e) =>
        e.name === "ENCODER_THREADS" ? { name: e.name, value: "8" } : e);
    }), /ENCODER_THREADS must come from resourceFieldRef limits.cpu/);
  });
  it("an exec probe instead of gRPC, or on the wrong port", () => {
    expectProblem(broken((o) => { serverContainer(o).livenessProbe = { exec: { command: ["true"] } }; }),
                  /livenessProbe must be a native gRPC probe/);
    expectProblem(broken((o) => { serverContainer(o).startupProbe.grpc.port = 8081; }),
                  /startupProbe checks port 8081, the grpc port is 50051/);
    expectProblem(broken((o) => { serverContainer(o).readinessProbe.httpGet.port = "metrics"; }),
                  /readinessProbe asks port metrics, not the http container port/);
    expectProblem(broken((o) => { serverContainer(o).readinessProbe.httpGet.path = "/info"; }),
                  /readinessProbe asks \/info, not \/health/);
    expectProblem(broken((o) => {
      serverContainer(o).env.find((e) => e.name === "ENCODER_HTTP_PORT").value = "0";
    }), /an http container port with ENCODER_HTTP_PORT=0 \(the API is off\)/);
    expectProblem(broken((o) => {
      const c = serverContainer(o);
      c.env = c.env.filter((e) => e.name !== "ENCODER_HTTP_PORT");
      c.ports.find((p) => p.name === "http").containerPort = 9090;
    }), /ENCODER_HTTP_PORT unset \(default 8080\) but the http container port is 9090/);
    expectProblem(broken((o) => { delete serverContainer(o).startupProbe; }), /startupProbe is missing/);
  });
  it("a writable root file system or privilege escalation", () => {
    expectProblem(broken((o) => { serverContainer(o).securityContext.readOnlyRootFilesystem = false; }),
                  /readOnlyRootFilesystem must be true/);
    expectProblem(broken((o) => {
      find(o, "Deployment").spec.template.spec.initContainers[0].securityContext.allowPrivilegeEscalation = true;
    }), /container model: allowPrivilegeEscalation must be false/);
  });
  it("a ServiceMonitor that would scrape each pod twice", () => {
    expectProblem(broken((o) => {
      find(o, "Service", "encoder-server-headless").spec.ports.push({ name: "metrics", port: 8081, targetPort: "metrics" });
    }), /endpoint port metrics is on 2 selected Services/);
  });
  it("no headless Service", () => {
    expectProblem(broken((o) => { delete find(o, "Service", "encoder-server-headless").spec.clusterIP; }),
                  /no headless Service/);
  });
  it("scrape annotations that miss the metrics port", () => {
    expectProblem(broken((o) => {
      find(o, "Deployment").spec.template.metadata.annotations["prometheus.io/port"] = "9090";
    }), /prometheus.io\/port \(9090\) is not the metrics port 8081/);
  });
  it("a custom metric that prometheus-adapter does not publish", () => {
    const objects = structuredClone(render(overlay("example-custom-metric")));
    find(objects, "HorizontalPodAutoscaler").spec.metrics[0].pods.metric.name = "encoder_made_up";
    expectProblem(checkPolicies(objects, policyOptions), /custom metric encoder_made_up has no prometheus-adapter rule/);
  });
  it("a replica count that fights the autoscaler", () => {
    expectProblem(broken((o) => { find(o, "Deployment").spec.replicas = 3; }), /spec.replicas fights/);
  });
  it("parses quantities and durations", () => {
    assert.equal(parseQuantity("500m"), 0.5);
    assert.equal(parseQuantity("3Gi"), 3 * 2 ** 30);
    assert.equal(parseQuantity("2"), 2);
    assert.ok(Number.isNaN(parseQuantity("two")));
    assert.equal(parseDuration("1m30s"), 90);
    assert.equal(parseDuration("250ms"), 0.25);
    assert.ok(Number.isNaN(parseDuration("20")));
  });
});

describe("the command line fails on a broken manifest", () => {
  it("passes on the shipped tree", () => {
    const run = spawnSync(process.execPath, [CHECK], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^ok .*overlays\/example: 7 objects/m);
  });
  it("exits 1 when an overlay patch makes a probe port a string", () => {
    const tree = scratchTree();
    appendPatch(path.join(tree, "overlays/example/kustomization.yaml"), `
  - target:
      kind: Deployment
      name: encoder-server
    patch: |-
      - op: replace
        path: /spec/template/spec/containers/0/livenessProbe/grpc/port
        value: grpc
`);
    const run = spawnSync(process.execPath, [CHECK, path.join(tree, "overlays/example")], { encoding: "utf8" });
    fs.rmSync(tree, { recursive: true, force: true });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /livenessProbe\/grpc\/port must be integer/);
  });
  it("exits 1 when a base file has an unknown field", () => {
    const tree = scratchTree();
    const file = path.join(tree, "base/pdb.yaml");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("maxUnavailable: 1", "maxUnavailible: 1"));
    const run = spawnSync(process.execPath, [CHECK, path.join(tree, "base")], { encoding: "utf8" });
    fs.rmSync(tree, { recursive: true, force: true });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /PodDisruptionBudget encoder-server: unknown field \/spec\/maxUnavailible/);
  });
  it("render.mjs prints YAML that parses back to the same objects", async () => {
    const text = execFileSync(process.execPath, [fileURLToPath(new URL("../render.mjs", import.meta.url)),
                                                 overlay("example")], { encoding: "utf8" });
    const { parseYamlDocuments } = await import("../render.mjs");
    assert.deepEqual(parseYamlDocuments(text, "output"), render(overlay("example")));
  });
});

describe("the renderer refuses what it does not implement", () => {
  const kustomization = (body, files = {}) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-render-"));
    fs.writeFileSync(path.join(dir, "kustomization.yaml"),
                     `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
  };
  const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n";

  it("an unsupported field such as namePrefix", () => {
    assert.throws(() => render(kustomization("namePrefix: x-\nresources: [cm.yaml]\n", { "cm.yaml": cm })),
                  (e) => e instanceof RenderError && /field "namePrefix" is not supported/.test(e.message));
  });
  it("a patch that selects nothing", () => {
    const dir = kustomization(`resources: [cm.yaml]
patches:
  - target: {kind: ConfigMap, name: other}
    patch: '[{"op": "add", "path": "/data/x", "value": "y"}]'
`, { "cm.yaml": cm });
    assert.throws(() => render(dir), /selects nothing/);
  });
  it("a strategic-merge patch other than delete", () => {
    const dir = kustomization(`resources: [cm.yaml]
patches:
  - patch: |-
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: c}
      data: {a: z}
`, { "cm.yaml": cm });
    assert.throws(() => render(dir), /strategic-merge patches other than `\$patch: delete`/);
  });
  it("a JSON patch on a missing path, and a failed test operation", () => {
    const base = (ops) => kustomization(`resources: [cm.yaml]
patches:
  - target: {kind: ConfigMap}
    patch: '${JSON.stringify(ops)}'
`, { "cm.yaml": cm });
    assert.throws(() => render(base([{ op: "replace", path: "/data/missing", value: "x" }])), /no such field/);
    assert.throws(() => render(base([{ op: "test", path: "/data/a", value: "c" }])), /test \/data\/a failed/);
    assert.deepEqual(render(base([{ op: "add", path: "/data/x~1y", value: "1" }]))[0].data, { a: "b", "x/y": "1" });
  });
  it("duplicate objects", () => {
    assert.throws(() => render(kustomization("resources: [a.yaml, b.yaml]\n", { "a.yaml": cm, "b.yaml": cm })),
                  /two objects are v1 ConfigMap c/);
  });
  it("rewrites image names, tags and digests like kustomize", () => {
    const pod = (image) => `apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: "${image}"}]\n`;
    const image = (img, entry) => render(kustomization(`resources: [p.yaml]\nimages: [${JSON.stringify(entry)}]\n`,
                                                       { "p.yaml": pod(img) }))[0].spec.containers[0].image;
    assert.equal(image("app:1.0", { name: "app", newTag: "2.0" }), "app:2.0");
    assert.equal(image("app:1.0", { name: "app", newName: "reg:5000/app" }), "reg:5000/app:1.0");
    assert.equal(image("app", { name: "app", digest: "sha256:abc" }), "app@sha256:abc");
    assert.equal(image("reg:5000/app:1", { name: "reg:5000/app", newTag: "2" }), "reg:5000/app:2");
    assert.equal(image("other:1", { name: "app", newTag: "2" }), "other:1");
  });
});
