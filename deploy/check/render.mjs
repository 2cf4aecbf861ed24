// A strict renderer for the subset of kustomize that deploy/k8s uses, so that
// CI can render the manifests without a kustomize binary. For the fields it
// accepts it follows kustomize v5 (`kubectl kustomize`); any other field is an
// error rather than silently ignored, so nobody can add one that this check
// would not honour. Stricter than kustomize in two ways: a patch must change
// at least one object, and `$patch: delete` is the only strategic-merge form.
//
//   node render.mjs DIR            prints the rendered objects as YAML
//
// Supported kustomization fields:
//   resources    files (one or more YAML documents) and directories (built
//                recursively as kustomizations)
//   components   directories of kind Component: their resources are added,
//                then their transformers run over everything accumulated
//   patches      {path | patch, target}: a JSON 6902 list (add, remove,
//                replace, test) applied to every object the target selects
//                (kind, name, namespace, group, version), or a strategic-merge
//                document that is only `$patch: delete`
//   namespace    set on every namespaced object
//   labels       [{pairs, includeSelectors: false, includeTemplates}]
//   images       [{name, newName, newTag, digest}] for every container and
//                init container
// Transformers run in kustomize's order: patches, namespace, labels, images.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const FIELDS = new Set([
  "apiVersion", "kind", "resources", "components", "patches", "namespace", "labels", "images",
]);
const KINDS = {
  Kustomization: "kustomize.config.k8s.io/v1beta1",
  Component: "kustomize.config.k8s.io/v1alpha1",
};
// Kinds without a namespace that a deployment like this one might hold.
const CLUSTER_SCOPED = new Set([
  "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
  "PersistentVolume", "StorageClass", "PriorityClass", "APIService",
  "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "IngressClass",
  "RuntimeClass",
]);
// Where `labels[].includeTemplates` puts the labels (kustomize's templateLabels).
const TEMPLATE_KINDS = new Set(["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"]);

export class RenderError extends Error {}

function fail(where, message) {
  throw new RenderError(`${where}: ${message}`);
}

export function parseYamlDocuments(text, where) {
  const documents = YAML.parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const objects = [];
  for (const document of documents) {
    if (document.errors.length > 0) fail(where, document.errors.map((e) => e.message).join("; "));
    const value = document.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value);
  }
  return objects;
}

function readKustomization(dir) {
  const file = KUSTOMIZATION_FILES.map((name) => path.join(dir, name)).find((f) => fs.existsSync(f));
  if (!file) fail(dir, "no kustomization.yaml");
  const [k, ...more] = parseYamlDocuments(fs.readFileSync(file, "utf8"), file);
  if (!k || more.length > 0 || typeof k !== "object" || Array.isArray(k)) {
    fail(file, "must hold exactly one mapping");
  }
  for (const key of Object.keys(k)) {
    if (!FIELDS.has(key)) fail(file, `field "${key}" is not supported by this renderer`);
  }
  if (!(k.kind in KINDS) || k.apiVersion !== KINDS[k.kind]) {
    fail(file, `expected kind Kustomization (${KINDS.Kustomization}) or Component ` +
               `(${KINDS.Component}), got ${k.apiVersion} ${k.kind}`);
  }
  return { file, k };
}

function id(o) {
  const ns = o.metadata?.namespace ? `${o.metadata.namespace}/` : "";
  return `${o.apiVersion} ${o.kind} ${ns}${o.metadata?.name}`;
}

function loadResource(file) {
  const objects = parseYamlDocuments(fs.readFileSync(file, "utf8"), file);
  for (const o of objects) {
    if (typeof o !== "object" || Array.isArray(o)) fail(file, "a document is not a mapping");
    if (!o.apiVersion || !o.kind || !o.metadata?.name) {
      fail(file, "every object needs apiVersion, kind and metadata.name");
    }
    if (o.kind === "List") fail(file, "List objects are not supported");
  }
  return objects;
}

function splitApiVersion(apiVersion) {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? { group: "", version: apiVersion }
                   : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function selects(target, o, where) {
  const allowed = new Set(["kind", "name", "namespace", "group", "version"]);
  for (const key of Object.keys(target)) {
    if (!allowed.has(key)) fail(where, `target field "${key}" is not supported`);
  }
  // kustomize reads target.name as an anchored regular expression; only plain
  // names are accepted here, for which that is an exact match.
  if (target.name !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(target.name)) {
    fail(where, `target name "${target.name}" must be a plain name`);
  }
  const { group, version } = splitApiVersion(o.apiVersion);
  return (target.kind === undefined || target.kind === o.kind) &&
         (target.name === undefined || target.name === o.metadata.name) &&
         (target.namespace === undefined || target.namespace === (o.metadata.namespace ?? "")) &&
         (target.group === undefined || target.group === group) &&
         (target.version === undefined || target.version === version);
}

function decodePointer(pointer, where) {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) fail(where, `JSON pointer "${pointer}" must start with /`);
  return pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function applyOperation(document, op, where) {
  const known = new Set(["op", "path", "value", "from"]);
  for (const key of Object.keys(op)) {
    if (!known.has(key)) fail(where, `patch operation field "${key}" is unknown`);
  }
  if (!["add", "remove", "replace", "test"].includes(op.op)) {
    fail(where, `patch operation "${op.op}" is not supported`);
  }
  const tokens = decodePointer(op.path, where);
  if (tokens.length === 0) fail(where, "a patch cannot replace the whole object");
  let parent = document;
  for (const token of tokens.slice(0, -1)) {
    const next = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined;
    if (next === undefined) fail(where, `${op.op} ${op.path}: ${token} does not exist`);
    parent = next;
  }
  const last = tokens[tokens.length - 1];
  const needsValue = op.op !== "remove";
  if (needsValue && !("value" in op)) fail(where, `${op.op} ${op.path}: no value`);
  const value = structuredClone(op.value);
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length ||
        (op.op !== "add" && index >= parent.length)) {
      fail(where, `${op.op} ${op.path}: index ${last} is out of range`);
    }
    if (op.op === "add") parent.splice(index, 0, value);
    else if (op.op === "remove") parent.splice(index, 1);
    else if (op.op === "replace") parent[index] = value;
    else if (JSON.stringify(parent[index]) !== JSON.stringify(value)) fail(where, `test ${op.path} failed`);
  } else if (isObject(parent)) {
    if (op.op !== "add" && !(last in parent)) fail(where, `${op.op} ${op.path}: no such field`);
    if (op.op === "add" || op.op === "replace") parent[last] = value;
    else if (op.op === "remove") delete parent[last];
    else if (JSON.stringify(parent[last]) !== JSON.stringify(value)) fail(where, `test ${op.path} failed`);
  } else {
    fail(where, `${op.op} ${op.path}: the parent is not an object or a list`);
  }
}

function applyPatches(objects, patches, dir, where) {
  for (const [i, entry] of (patches ?? []).entries()) {
    const at = `${where} patches[${i}]`;
    for (const key of Object.keys(entry)) {
      if (!["path", "patch", "target"].includes(key)) fail(at, `field "${key}" is not supported`);
    }
    if ((entry.path === undefined) === (entry.patch === undefined)) fail(at, "needs one of path, patch");
    const text = entry.patch ?? fs.readFileSync(path.resolve(dir, entry.path), "utf8");
    const documents = parseYamlDocuments(text, at);
    if (documents.length !== 1) fail(at, "must hold one document");
    const patch = documents[0];
    if (Array.isArray(patch)) {
      if (!entry.target) fail(at, "a JSON 6902 patch needs a target");
      const matched = objects.filter((o) => selects(entry.target, o, at));
      if (matched.length === 0) fail(at, `target ${JSON.stringify(entry.target)} selects nothing`);
      for (const o of matched) for (const op of patch) applyOperation(o, op, `${at} on ${id(o)}`);
    } else if (isObject(patch) && patch.$patch === "delete") {
      const extra = Object.keys(patch).filter((k) => !["$patch", "apiVersion", "kind", "metadata"].includes(k));
      const extraMeta = Object.keys(patch.metadata ?? {}).filter((k) => !["name", "namespace"].includes(k));
      if (extra.length || extraMeta.length || entry.target) {
        fail(at, "only a bare `$patch: delete` (apiVersion, kind, metadata.name) is supported");
      }
      const before = objects.length;
      const keep = objects.filter((o) => !(o.apiVersion === patch.apiVersion && o.kind === patch.kind &&
        o.metadata.name === patch.metadata?.name &&
        (patch.metadata.namespace === undefined || patch.metadata.namespace === o.metadata.namespace)));
      if (keep.length === before) fail(at, `$patch: delete matches no ${patch.kind} ${patch.metadata?.name}`);
      objects.splice(0, objects.length, ...keep);
    } else {
      fail(at, "strategic-merge patches other than `$patch: delete` are not supported: use a JSON 6902 list");
    }
  }
}

function setNamespace(objects, namespace) {
  if (namespace === undefined) return;
  for (const o of objects) {
    if (["RoleBinding", "ClusterRoleBinding"].includes(o.kind)) {
      fail(id(o), "namespace: role binding subjects are not rewritten by this renderer");
    }
    if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = namespace;
  }
}

function addLabels(objects, labels, where) {
  for (const [i, entry] of (labels ?? []).entries()) {
    const at = `${where} labels[${i}]`;
    for (const key of Object.keys(entry)) {
      if (!["pairs", "includeSelectors", "includeTemplates"].includes(key)) {
        fail(at, `field "${key}" is not supported`);
      }
    }
    if (entry.includeSelectors) fail(at, "includeSelectors: true is not supported (selectors are immutable)");
    for (const [k, v] of Object.entries(entry.pairs ?? {})) {
      if (typeof v !== "string") fail(at, `label ${k} must be a string`);
    }
    for (const o of objects) {
      o.metadata.labels = { ...(o.metadata.labels ?? {}), ...entry.pairs };
      if (entry.includeTemplates && TEMPLATE_KINDS.has(o.kind) && o.spec?.template) {
        o.spec.template.metadata ??= {};
        o.spec.template.metadata.labels = { ...(o.spec.template.metadata.labels ?? {}), ...entry.pairs };
      }
    }
  }
}

function splitImage(image) {
  const at = image.indexOf("@");
  const base = at < 0 ? image : image.slice(0, at);
  const digest = at < 0 ? "" : image.slice(at);
  const colon = base.lastIndexOf(":");
  const hasTag = colon > base.lastIndexOf("/");
  return { name: hasTag ? base.slice(0, colon) : base, tag: hasTag ? base.slice(colon) : "", digest };
}

function setImages(objects, images, where) {
  for (const [i, entry] of (images ?? []).entries()) {
    const at = `${where} images[${i}]`;
    for (const key of Object.keys(entry)) {
      if (!["name", "newName", "newTag", "digest"].includes(key)) fail(at, `field "${key}" is not supported`);
    }
    if (entry.newTag !== undefined && typeof entry.newTag !== "string") fail(at, "newTag must be a string");
    const visit = (node) => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!isObject(node)) return;
      for (const [key, value] of Object.entries(node)) {
        if (["containers", "initContainers", "ephemeralContainers"].includes(key) && Array.isArray(value)) {
          for (const c of value) {
            if (typeof c?.image !== "string") continue;
            const current = splitImage(c.image);
            if (current.name !== entry.name) continue;
            const suffix = entry.digest ? `@${entry.digest}`
                         : entry.newTag !== undefined ? `:${entry.newTag}`
                         : current.tag + current.digest;
            c.image = (entry.newName ?? current.name) + suffix;
          }
        }
        visit(value);
      }
    };
    objects.forEach(visit);
  }
}

function build(dir, accumulated, expectedKind, stack) {
  const real = fs.realpathSync(dir);
  if (stack.includes(real)) fail(dir, "kustomization cycle");
  const { file, k } = readKustomization(dir);
  if (k.kind !== expectedKind) fail(file, `is a ${k.kind}, expected a ${expectedKind} here`);
  const objects = accumulated;
  for (const entry of k.resources ?? []) {
    if (/^[a-z]+:\/\//.test(entry)) fail(file, `remote resource ${entry} is not supported`);
    const target = path.resolve(dir, entry);
    if (!fs.existsSync(target)) fail(file, `resource ${entry} does not exist`);
    if (fs.statSync(target).isDirectory()) {
      objects.push(...build(target, [], "Kustomization", [...stack, real]));
    } else {
      objects.push(...loadResource(target));
    }
  }
  for (const entry of k.components ?? []) {
    const target = path.resolve(dir, entry);
    if (!fs.existsSync(target) || !fs.statSync(target).isDirectory()) {
      fail(file, `component ${entry} is not a directory`);
    }
    build(target, objects, "Component", [...stack, real]);
  }
  applyPatches(objects, k.patches, dir, file);
  setNamespace(objects, k.namespace);
  addLabels(objects, k.labels, file);
  setImages(objects, k.images, file);
  const seen = new Set();
  for (const o of objects) {
    if (seen.has(id(o))) fail(file, `two objects are ${id(o)}`);
    seen.add(id(o));
  }
  return objects;
}

/** Renders the kustomization in `dir`: a list of plain objects. */
export function render(dir) {
  return build(dir, [], "Kustomization", []);
}

export function toYaml(objects) {
  return objects.map((o) => YAML.stringify(o, { lineWidth: 0 })).join("---\n");
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) {
    console.error("usage: node render.mjs KUSTOMIZATION_DIR");
    process.exit(2);
  }
  try {
    process.stdout.write(toYaml(render(process.argv[2])));
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    console.error(`render: ${error.message}`);
    process.exit(1);
  }
}
