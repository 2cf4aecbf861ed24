// Rules of this deployment that a schema cannot express: the promises the
// manifests make (issue: Guaranteed QoS, threads = CPU limit, native gRPC
// probes, a shutdown that fits in the grace period, restricted security
// context, selectors and ports that meet) checked on the rendered objects.
// checkPolicies(objects, options) returns a list of messages, empty when all hold.
const SERVER_CONTAINER = "encoder-server";
// encoder-server exits at the latest this long after --shutdown-grace expires.
const SERVER_EXIT_MARGIN_SECONDS = 5;
const DEFAULT_SHUTDOWN_GRACE_SECONDS = 20;  // the server's --shutdown-grace default
const MIN_STARTUP_BUDGET_SECONDS = 60;

const BINARY_SUFFIXES = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIXES = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity ("500m", "2", "3Gi", "1e9") as a number, or NaN. */
export function parseQuantity(q) {
  if (typeof q === "number") return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)$/.exec(String(q));
  if (!m) return NaN;
  return Number(m[1]) * (BINARY_SUFFIXES[m[2]] ?? DECIMAL_SUFFIXES[m[2]]);
}

/** An Abseil duration ("20s", "1m30s", "500ms") in seconds, or NaN. */
export function parseDuration(text) {
  const units = { ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  if (text === "0") return 0;
  let rest = String(text);
  let total = 0;
  while (rest.length > 0) {
    const m = /^([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)/.exec(rest);
    if (!m) return NaN;
    total += Number(m[1]) * units[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

function labelsMatch(selector, labels) {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

function matchLabelsOnly(selector, at, problems) {
  if (selector?.matchExpressions?.length) problems.push(`${at}: matchExpressions are not checked here`);
  return selector?.matchLabels;
}

function name(o) {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
}

function envValue(container, variable) {
  return (container.env ?? []).find((e) => e.name === variable);
}

function checkContainerSecurity(pod, c, at, problems) {
  const sc = c.securityContext ?? {};
  const podSc = pod.securityContext ?? {};
  if (sc.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation must be false`);
  if (sc.readOnlyRootFilesystem !== true) problems.push(`${at}: readOnlyRootFilesystem must be true`);
  if (sc.privileged === true) problems.push(`${at}: must not be privileged`);
  if (!(sc.capabilities?.drop ?? []).includes("ALL")) problems.push(`${at}: capabilities must drop ALL`);
  if ((sc.capabilities?.add ?? []).length > 0) problems.push(`${at}: must add no capabilities`);
  if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) problems.push(`${at}: runAsNonRoot must be true`);
  if ((sc.runAsUser ?? podSc.runAsUser) === 0) problems.push(`${at}: must not run as uid 0`);
  const seccomp = sc.seccompProfile?.type ?? podSc.seccompProfile?.type;
  if (!["RuntimeDefault", "Localhost"].includes(seccomp)) {
    problems.push(`${at}: seccompProfile must be RuntimeDefault (restricted Pod Security Standard)`);
  }
}

function checkGuaranteed(c, at, problems) {
  for (const resource of ["cpu", "memory"]) {
    const request = c.resources?.requests?.[resource];
    const limit = c.resources?.limits?.[resource];
    if (request === undefined || limit === undefined) {
      problems.push(`${at}: ${resource} request and limit are both required (Guaranteed QoS)`);
    } else if (parseQuantity(request) !== parseQuantity(limit) || Number.isNaN(parseQuantity(limit))) {
      problems.push(`${at}: ${resource} request ${request} must equal its limit ${limit} (Guaranteed QoS)`);
    }
  }
}

function checkProbes(c, at, problems) {
  const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
  const grpcPort = ports.grpc;
  if (grpcPort === undefined) problems.push(`${at}: no container port named grpc`);
  for (const kind of ["startupProbe", "readinessProbe", "livenessProbe"]) {
    const probe = c[kind];
    if (!probe) {
      problems.push(`${at}: ${kind} is missing`);
      continue;
    }
    // Readiness may also ask the HTTP API's GET /health (on the port named http).
    if (kind === "readinessProbe" && probe.httpGet) {
      const port = typeof probe.httpGet.port === "string" ? ports[probe.httpGet.port] : probe.httpGet.port;
      if (ports.http === undefined || port !== ports.http) {
        problems.push(`${at}: ${kind} asks port ${probe.httpGet.port}, not the http container port`);
      }
      if (probe.httpGet.path !== "/health") {
        problems.push(`${at}: ${kind} asks ${probe.httpGet.path}, not /health`);
      }
      continue;
    }
    if (!probe.grpc) {
      problems.push(kind === "readinessProbe"
        ? `${at}: ${kind} must be a native gRPC probe (grpc.health.v1) or GET /health on the http port`
        : `${at}: ${kind} must be a native gRPC probe (grpc.health.v1)`);
      continue;
    }
    if (probe.grpc.port !== grpcPort) {
      problems.push(`${at}: ${kind} checks port ${probe.grpc.port}, the grpc port is ${grpcPort}`);
    }
  }
  const startup = c.startupProbe;
  if (startup) {
    const budget = (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3);
    if (budget < MIN_STARTUP_BUDGET_SECONDS) {
      problems.push(`${at}: startupProbe allows ${budget} s for the model load, ` +
                    `less than ${MIN_STARTUP_BUDGET_SECONDS} s`);
    }
  }
}

function checkThreads(c, at, problems) {
  const threads = envValue(c, "ENCODER_THREADS");
  const ref = threads?.valueFrom?.resourceFieldRef;
  if (!ref || ref.resource !== "limits.cpu" || (ref.containerName && ref.containerName !== c.name) ||
      parseQuantity(ref.divisor ?? "1") !== 1) {
    problems.push(`${at}: ENCODER_THREADS must come from resourceFieldRef limits.cpu (divisor 1) ` +
                  "of this container");
  }
  const cpuLimit = parseQuantity(c.resources?.limits?.cpu);
  if (!Number.isInteger(cpuLimit)) {
    problems.push(`${at}: the CPU limit (${c.resources?.limits?.cpu}) should be whole CPUs: ` +
                  "the thread count rounds it up");
  }
}

function checkShutdown(pod, c, at, problems) {
  const graceEnv = envValue(c, "ENCODER_SHUTDOWN_GRACE");
  const grace = graceEnv ? parseDuration(graceEnv.value) : DEFAULT_SHUTDOWN_GRACE_SECONDS;
  if (graceEnv && (graceEnv.valueFrom || Number.isNaN(grace))) {
    problems.push(`${at}: ENCODER_SHUTDOWN_GRACE must be a literal duration such as 20s`);
    return;
  }
  const preStop = c.lifecycle?.preStop;
  let sleep = 0;
  if (preStop?.sleep) {
    sleep = preStop.sleep.seconds;
  } else if (preStop?.exec?.command?.[0] === "sleep" && preStop.exec.command.length === 2) {
    sleep = Number(preStop.exec.command[1]);
  } else {
    problems.push(`${at}: preStop must sleep (exec ["sleep", N]) so that endpoints drop the pod ` +
                  "before SIGTERM");
  }
  const needed = sleep + grace + SERVER_EXIT_MARGIN_SECONDS;
  const period = pod.terminationGracePeriodSeconds ?? 30;
  if (!(period >= needed)) {
    problems.push(`${at}: terminationGracePeriodSeconds ${period} < preStop ${sleep} s + ` +
                  `shutdown grace ${grace} s + ${SERVER_EXIT_MARGIN_SECONDS} s: the kubelet would ` +
                  "SIGKILL work in progress");
  }
}

function checkModelVolume(objects, pod, c, at, problems) {
  const model = envValue(c, "ENCODER_MODEL")?.value;
  if (!model) {
    problems.push(`${at}: ENCODER_MODEL is not set`);
    return;
  }
  const mount = (c.volumeMounts ?? []).find((m) => model === m.mountPath || model.startsWith(`${m.mountPath.replace(/\/$/, "")}/`));
  if (!mount) {
    problems.push(`${at}: no volume is mounted where ENCODER_MODEL (${model}) lies`);
    return;
  }
  if (mount.readOnly !== true) problems.push(`${at}: the model volume must be mounted readOnly`);
  const volume = (pod.volumes ?? []).find((v) => v.name === mount.name);
  if (!volume) {
    problems.push(`${at}: volume ${mount.name} is not defined`);
  } else if (volume.persistentVolumeClaim) {
    const claim = volume.persistentVolumeClaim.claimName;
    if (!objects.some((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === claim)) {
      problems.push(`${at}: PersistentVolumeClaim ${claim} is not among the objects`);
    }
  } else if (volume.emptyDir) {
    const filler = (pod.initContainers ?? []).find((i) =>
      (i.volumeMounts ?? []).some((m) => m.name === volume.name && m.readOnly !== true));
    if (!filler) problems.push(`${at}: the model emptyDir ${volume.name} is filled by no init container`);
  }
}

// encoder-server's ports when their variables are unset (docs/configuration.md).
const defaultPorts = { ENCODER_PORT: 50051, ENCODER_METRICS_PORT: 8081, ENCODER_HTTP_PORT: 8080 };

function checkPorts(template, c, at, problems) {
  const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
  if (ports.metrics === undefined) problems.push(`${at}: no container port named metrics`);
  if (ports.http !== undefined && envValue(c, "ENCODER_HTTP_PORT")?.value === "0") {
    problems.push(`${at}: an http container port with ENCODER_HTTP_PORT=0 (the API is off)`);
  }
  for (const [variable, port] of [["ENCODER_PORT", "grpc"], ["ENCODER_METRICS_PORT", "metrics"],
                                  ["ENCODER_HTTP_PORT", "http"]]) {
    const value = envValue(c, variable)?.value;
    if (ports[port] === undefined || value === "0") continue;
    if (Number(value ?? defaultPorts[variable]) !== ports[port]) {
      const set = value === undefined ? `${variable} unset (default ${defaultPorts[variable]})`
                                      : `${variable}=${value}`;
      problems.push(`${at}: ${set} but the ${port} container port is ${ports[port]}`);
    }
  }
  const annotations = template.metadata?.annotations ?? {};
  if (annotations["prometheus.io/scrape"] !== "true") {
    problems.push(`${at}: pod annotation prometheus.io/scrape must be "true"`);
  }
  if (Number(annotations["prometheus.io/port"]) !== ports.metrics) {
    problems.push(`${at}: prometheus.io/port (${annotations["prometheus.io/port"]}) is not the ` +
                  `metrics port ${ports.metrics}`);
  }
  if (annotations["prometheus.io/path"] !== "/metrics") {
    problems.push(`${at}: prometheus.io/path must be /metrics`);
  }
}

/**
 * options.adapterMetrics: metric names that prometheus-adapter publishes
 * (from components/hpa-custom-metric/prometheus-adapter-values.yaml).
 */
export function checkPolicies(objects, options = {}) {
  const problems = [];
  const deployments = objects.filter((o) => o.kind === "Deployment");
  const services = objects.filter((o) => o.kind === "Service");
  const namespaces = new Set(objects.map((o) => o.metadata.namespace ?? ""));
  if (namespaces.size > 1) problems.push(`objects span namespaces: ${[...namespaces].join(", ")}`);
  if (deployments.length === 0) problems.push("no Deployment");

  for (const d of deployments) {
    const at = name(d);
    const template = d.spec.template;
    const pod = template.spec;
    const podLabels = template.metadata?.labels ?? {};
    const selector = matchLabelsOnly(d.spec.selector, at, problems);
    if (!labelsMatch(selector, podLabels)) problems.push(`${at}: selector does not match the pod labels`);
    const server = pod.containers.find((c) => c.name === SERVER_CONTAINER);
    if (!server) {
      problems.push(`${at}: no container named ${SERVER_CONTAINER}`);
      continue;
    }
    const cat = `${at} container ${server.name}`;
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      const where = `${at} container ${c.name}`;
      checkGuaranteed(c, where, problems);
      checkContainerSecurity(pod, c, where, problems);
    }
    if (pod.automountServiceAccountToken !== false) {
      problems.push(`${at}: automountServiceAccountToken must be false (the server calls no API)`);
    }
    checkProbes(server, cat, problems);
    checkThreads(server, cat, problems);
    checkShutdown(pod, server, cat, problems);
    checkModelVolume(objects, pod, server, cat, problems);
    checkPorts(template, server, cat, problems);
    const containerPortNames = new Set((server.ports ?? []).map((p) => p.name));

    // Services: every one selects these pods and targets named ports; one is headless.
    const mine = services.filter((s) => labelsMatch(s.spec.selector, podLabels));
    for (const s of services) {
      if (!mine.includes(s)) problems.push(`${name(s)}: selector matches no pod of ${at}`);
    }
    for (const s of mine) {
      for (const p of s.spec.ports ?? []) {
        const target = p.targetPort ?? p.port;
        if (typeof target === "string" ? !containerPortNames.has(target)
                                       : !(server.ports ?? []).some((cp) => cp.containerPort === target)) {
          problems.push(`${name(s)}: port ${p.name} targets ${target}, which ${at} does not expose`);
        }
      }
    }
    const headless = mine.filter((s) => s.spec.clusterIP === "None");
    if (!headless.some((s) => (s.spec.ports ?? []).some((p) => (p.targetPort ?? p.port) === "grpc"))) {
      problems.push(`${at}: no headless Service (clusterIP: None) with the grpc port for client-side balancing`);
    }
    if (!mine.some((s) => s.spec.clusterIP !== "None")) problems.push(`${at}: no ClusterIP Service`);

    // HorizontalPodAutoscaler.
    const hpas = objects.filter((o) => o.kind === "HorizontalPodAutoscaler" &&
      o.spec.scaleTargetRef.kind === "Deployment" && o.spec.scaleTargetRef.name === d.metadata.name);
    if (hpas.length !== 1) problems.push(`${at}: expected one HorizontalPodAutoscaler, found ${hpas.length}`);
    for (const h of hpas) {
      if (d.spec.replicas !== undefined) {
        problems.push(`${at}: spec.replicas fights ${name(h)}: leave it unset`);
      }
      if ((h.spec.minReplicas ?? 1) < 2) problems.push(`${name(h)}: minReplicas < 2 leaves no replica during a drain`);
      if (!(h.spec.metrics ?? []).some((m) => m.type === "Resource" && m.resource?.name === "cpu")) {
        problems.push(`${name(h)}: no CPU metric`);
      }
      for (const m of h.spec.metrics ?? []) {
        const metric = m.pods?.metric?.name ?? m.object?.metric?.name;
        if (metric && !(options.adapterMetrics ?? []).includes(metric)) {
          problems.push(`${name(h)}: custom metric ${metric} has no prometheus-adapter rule`);
        }
      }
    }

    // PodDisruptionBudget.
    const pdbs = objects.filter((o) => o.kind === "PodDisruptionBudget" &&
      labelsMatch(matchLabelsOnly(o.spec.selector, name(o), problems), podLabels));
    if (pdbs.length !== 1) problems.push(`${at}: expected one PodDisruptionBudget, found ${pdbs.length}`);

    // ServiceMonitor: scrapes each pod once, on the metrics port and path.
    const monitors = objects.filter((o) => o.kind === "ServiceMonitor");
    if (monitors.length !== 1) problems.push(`${at}: expected one ServiceMonitor, found ${monitors.length}`);
    for (const m of monitors) {
      const chosen = services.filter((s) =>
        labelsMatch(matchLabelsOnly(m.spec.selector, name(m), problems), s.metadata.labels));
      for (const e of m.spec.endpoints ?? []) {
        const scraped = chosen.filter((s) => (s.spec.ports ?? []).some((p) => p.name === e.port));
        if (scraped.length !== 1) {
          problems.push(`${name(m)}: endpoint port ${e.port} is on ${scraped.length} selected Services ` +
                        "(each pod must be scraped exactly once)");
        }
        for (const s of scraped) {
          const p = s.spec.ports.find((sp) => sp.name === e.port);
          if (p.targetPort !== "metrics") problems.push(`${name(m)}: ${name(s)} port ${e.port} does not target metrics`);
        }
        if ((e.path ?? "/metrics") !== "/metrics") problems.push(`${name(m)}: path must be /metrics`);
      }
    }
  }
  return problems;
}
