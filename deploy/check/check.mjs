// Renders kustomizations and checks every object: the Kubernetes and
// Prometheus Operator schemas (no unknown fields either), then the
// deployment's own rules (policy.mjs).
//
//   node check.mjs [--out DIR] [KUSTOMIZATION_DIR ...]
//
// Without directories: deploy/k8s/base and every deploy/k8s/overlays/*.
// --out writes each rendering to DIR/<name>.yaml. Exit status 1 when anything
// fails to render or to validate.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { render, RenderError, toYaml } from "./render.mjs";
import { validateAll } from "./validate.mjs";
import { checkPolicies } from "./policy.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const K8S_DIR = path.resolve(here, "../k8s");
const ADAPTER_VALUES = "components/hpa-custom-metric/prometheus-adapter-values.yaml";

/** Metric names published by the prometheus-adapter rules shipped beside a kustomization tree. */
export function adapterMetrics(k8sDir = K8S_DIR) {
  const file = path.join(k8sDir, ADAPTER_VALUES);
  if (!fs.existsSync(file)) return [];
  const values = YAML.parse(fs.readFileSync(file, "utf8"));
  return (values?.rules?.custom ?? []).map((rule) => rule?.name?.as).filter(Boolean);
}

/** The kustomization tree (the directory holding base/ and overlays/) that dir is in. */
export function treeRoot(dir) {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, "base")) && fs.existsSync(path.join(d, "overlays"))) return d;
    if (path.dirname(d) === d) return path.resolve(dir);
  }
}

export function defaultTargets(k8sDir = K8S_DIR) {
  const overlays = path.join(k8sDir, "overlays");
  return [path.join(k8sDir, "base"),
          ...fs.readdirSync(overlays).sort().map((d) => path.join(overlays, d))];
}

/**
 * Renders and checks one kustomization directory:
 * {objects, schema: [{object, errors}], policy: [messages], error?: renderError}.
 */
export async function checkKustomization(dir, k8sDir = treeRoot(dir)) {
  let objects;
  try {
    objects = render(dir);
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    return { objects: [], schema: [], policy: [], error: error.message };
  }
  const schema = await validateAll(objects);
  const policy = checkPolicies(objects, { adapterMetrics: adapterMetrics(k8sDir) });
  return { objects, schema, policy };
}

export function failures(result) {
  return (result.error ? 1 : 0) + result.schema.filter((r) => r.errors.length > 0).length +
         result.policy.length;
}

async function main(argv) {
  let out = null;
  const dirs = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") out = argv[++i];
    else if (argv[i].startsWith("-")) {
      console.error(`usage: node check.mjs [--out DIR] [KUSTOMIZATION_DIR ...]`);
      return 2;
    } else dirs.push(path.resolve(argv[i]));
  }
  const targets = dirs.length > 0 ? dirs : defaultTargets();
  let failed = 0;
  for (const dir of targets) {
    const label = path.relative(process.cwd(), dir) || dir;
    const result = await checkKustomization(dir);
    if (result.error) {
      console.log(`not ok ${label}: render: ${result.error}`);
      failed++;
      continue;
    }
    for (const r of result.schema) {
      if (r.errors.length === 0) continue;
      for (const e of r.errors) console.log(`not ok ${label}: ${r.object}: ${e}`);
    }
    for (const p of result.policy) console.log(`not ok ${label}: policy: ${p}`);
    const n = failures(result);
    failed += n;
    if (n === 0) {
      console.log(`ok ${label}: ${result.objects.length} objects (${result.objects.map((o) => o.kind).join(", ")})`);
    }
    if (out) {
      fs.mkdirSync(out, { recursive: true });
      const file = path.join(out, `${path.basename(dir)}.yaml`);
      fs.writeFileSync(file, toYaml(result.objects));
    }
  }
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
