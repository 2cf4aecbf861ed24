// Validates rendered Kubernetes objects against the schemas of the npm
// packages kubernetes-models (the Kubernetes OpenAPI) and
// @kubernetes-models/prometheus-operator (the operator's CRDs).
//
// Those schemas allow unknown properties, which `kubectl apply` with server-side
// field validation rejects (a misspelt `startupProbes` would otherwise pass
// and be dropped by the API server). So the validator also reports fields the
// schema does not know: it runs the compiled schema over a proxy of the object
// and records which properties the schema looked at. An object whose
// properties the schema enumerates (a map such as labels) accepts any key; an
// object the schema never looks into (free-form) is not judged.

const CRD_PACKAGES = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator/monitoring.coreos.com",
};

function splitApiVersion(apiVersion) {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? { group: "", version: apiVersion }
                   : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

const modelCache = new Map();

/** The kubernetes-models class for apiVersion + kind, or null. */
export async function modelFor(apiVersion, kind) {
  const key = `${apiVersion} ${kind}`;
  if (modelCache.has(key)) return modelCache.get(key);
  const { group, version } = splitApiVersion(apiVersion);
  const specifier = group === "" ? `kubernetes-models/${version}`
                  : CRD_PACKAGES[group] ? `${CRD_PACKAGES[group]}/${version}`
                  : `kubernetes-models/${group}/${version}`;
  let model = null;
  if (/^[a-z0-9.-]*$/.test(group) && /^v[0-9a-z]+$/.test(version) && /^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    try {
      const module = await import(specifier);
      const candidate = module[kind];
      if (candidate && candidate.kind === kind && candidate.apiVersion === apiVersion) model = candidate;
    } catch (error) {
      if (error?.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED" && error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    }
  }
  modelCache.set(key, model);
  return model;
}

// A copy of `value` in which every mapping is a proxy that records the
// properties read from it and whether its keys were enumerated.
function tracked(value, pointer, records) {
  if (Array.isArray(value)) return value.map((v, i) => tracked(v, `${pointer}/${i}`, records));
  if (value === null || typeof value !== "object") return value;
  const record = { pointer, keys: Object.keys(value), read: new Set(), enumerated: false };
  records.push(record);
  const target = {};
  for (const key of record.keys) target[key] = tracked(value[key], `${pointer}/${key}`, records);
  const note = (property) => {
    if (typeof property === "string") record.read.add(property);
  };
  return new Proxy(target, {
    get(t, property, receiver) {
      note(property);
      return Reflect.get(t, property, receiver);
    },
    has(t, property) {
      note(property);
      return Reflect.has(t, property);
    },
    getOwnPropertyDescriptor(t, property) {
      note(property);
      return Reflect.getOwnPropertyDescriptor(t, property);
    },
    ownKeys(t) {
      record.enumerated = true;
      return Reflect.ownKeys(t);
    },
  });
}

function where(o) {
  const ns = o?.metadata?.namespace ? `${o.metadata.namespace}/` : "";
  return `${o?.kind} ${ns}${o?.metadata?.name}`;
}

/**
 * Validates one object. Returns a list of messages, empty when it is valid:
 * schema violations ("data/spec/... must be integer") and unknown fields
 * ("unknown field /spec/template/spec/containers/0/startupProbes").
 */
export async function validateObject(o) {
  if (o === null || typeof o !== "object" || Array.isArray(o)) return ["not an object"];
  if (typeof o.apiVersion !== "string" || typeof o.kind !== "string") {
    return ["apiVersion and kind must be strings"];
  }
  const model = await modelFor(o.apiVersion, o.kind);
  if (!model) return [`no schema for ${o.apiVersion} ${o.kind}`];
  const errors = [];
  if (!o.metadata?.name) errors.push("metadata.name is required");
  const records = [];
  const proxy = tracked(o, "", records);
  try {
    model.prototype.validate.call(proxy);
  } catch (error) {
    if (!Array.isArray(error?.errors)) throw error;
    errors.push(...error.message.split(/, (?=data)/));
  }
  for (const record of records) {
    if (record.enumerated || record.read.size === 0) continue;
    for (const key of record.keys) {
      if (!record.read.has(key)) errors.push(`unknown field ${record.pointer}/${key}`);
    }
  }
  return errors;
}

/** Validates every object; returns [{object: "Kind ns/name", errors: [...]}]. */
export async function validateAll(objects) {
  const results = [];
  for (const o of objects) results.push({ object: where(o), errors: await validateObject(o) });
  return results;
}
