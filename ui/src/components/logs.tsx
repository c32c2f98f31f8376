// LogViewer: the logs of a workflow or of one of its steps.
//
// The whole workflow, a followed step and a grep are read from the API's
// line stream (GET api/v1/workflows/{ns}/{name}/log, grep done by the
// server); a step that is not followed is read by byte ranges of its raw
// log (GET step-logs/{ns}/{wf}/{pod}), so that a 1 GB log opens at once
// and memory stays bounded. Without that route (404/501) the stream is
// used. braid keeps only the main container's output, and its lines have
// no timestamps.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, qs, seg } from '../lib/api';
import { watchWorkflow } from '../lib/nodestream';
import type { NodeStatus, Workflow } from '../lib/types';
import { completed } from '../lib/types';
import { RangedView, StreamView } from './logs-views';

export interface LogViewerProps {
  namespace: string;
  workflow: string;
  /** a step: its pod name or node ID; none for the whole workflow */
  podName?: string;
  container?: string;
  /** an archived workflow's UID (its steps are read from the archive) */
  uid?: string;
}

const TAIL = 100_000;
const CONTAINERS = ['main', 'init', 'wait'];

interface Pods {
  loaded: boolean;
  phase?: string;
  nodes: NodeStatus[];
}

/**
 * usePods reads the workflow's pod nodes (for the step choice and to know
 * which have ended): live, kept up to date by the node stream while it
 * runs; an archived one (uid given) from the archive.
 */
function usePods(ns: string, name: string, uid?: string): Pods {
  const [pods, setPods] = useState<Pods>({ loaded: false, nodes: [] });
  useEffect(() => {
    const ac = new AbortController();
    let stop: (() => void) | undefined;
    const show = (wf: Workflow) => {
      const nodes = Object.values(wf.status?.nodes ?? {}).filter((n) => n.type === 'Pod');
      nodes.sort((a, b) => (a.startedAt ?? '~').localeCompare(b.startedAt ?? '~') || a.name.localeCompare(b.name));
      setPods({ loaded: true, phase: wf.status?.phase, nodes });
      if (completed(wf.status?.phase)) stop?.();
    };
    const fields = qs({ fields: 'metadata.name,metadata.uid,status.phase,status.nodes' });
    (async () => {
      // An archived workflow (the page names its UID): the archive's copy.
      if (uid) {
        try {
          show(await get<Workflow>(`api/v1/archived-workflows/${seg(uid)}${qs({ namespace: ns })}`, ac.signal));
          return;
        } catch { /* try the live one */ }
      }
      try {
        const wf = await get<Workflow>(`api/v1/workflows/${seg(ns)}/${seg(name)}${fields}`, ac.signal);
        show(wf);
        if (!completed(wf.status?.phase) && !ac.signal.aborted) stop = watchWorkflow(ns, name, show);
      } catch {
        // Unknown: the log route still finds an archived workflow by name.
        if (!ac.signal.aborted) setPods({ loaded: true, nodes: [] });
      }
    })();
    return () => { ac.abort(); stop?.(); };
  }, [ns, name, uid]);
  return pods;
}

/** hashOf is the last "-" part of a node ID or pod name: the fnv32a of the node's name that both end with. */
const hashOf = (s: string) => s.slice(s.lastIndexOf('-') + 1);

/** findNode finds a step by node ID or pod name (v1: the ID; v2: "<wf>-<template>-<hash of the ID>"). */
function findNode(nodes: NodeStatus[], wf: string, pod?: string): NodeStatus | undefined {
  if (!pod) return undefined;
  return nodes.find((n) => n.id === pod) ?? nodes.find((n) => pod !== wf && hashOf(n.id) === hashOf(pod));
}

const stepName = (n: NodeStatus) => n.displayName || n.name;

export function LogViewer(props: LogViewerProps) {
  const { namespace: ns, workflow: wf } = props;
  const pods = usePods(ns, wf, props.uid);
  const [pod, setPod] = useState(props.podName ?? '');
  const [container, setContainer] = useState(props.container ?? 'main');
  const [grep, setGrep] = useState('');
  const [grepQ, setGrepQ] = useState('');
  const [follow, setFollow] = useState<boolean | null>(null); // null: not chosen yet
  const [wrap, setWrap] = useState(false);
  const [ranged, setRanged] = useState(true); // false once the server is found without the route
  useEffect(() => { setPod(props.podName ?? ''); setFollow(null); }, [props.podName]);
  useEffect(() => { setContainer(props.container ?? 'main'); }, [props.container]);
  useEffect(() => {
    const t = setTimeout(() => setGrepQ(grep.trim()), 400);
    return () => clearTimeout(t);
  }, [grep]);

  const node = findNode(pods.nodes, wf, pod);
  const ended = pod ? (node ? completed(node.phase) || !!node.finishedAt : completed(pods.phase) || !pods.phase)
    : completed(pods.phase) || (pods.loaded && !pods.phase);
  // Follow a running workflow or step unless told otherwise.
  const following = follow ?? !ended;
  const podLabel = useMemo(() => {
    const byID = new Map(pods.nodes.map((n) => [n.id, n]));
    const byHash = new Map(pods.nodes.map((n) => [hashOf(n.id), n]));
    return (p: string) => {
      const n = byID.get(p) ?? (p !== wf ? byHash.get(hashOf(p)) : byID.get(wf));
      return n ? stepName(n) : p.startsWith(wf + '-') ? p.slice(wf.length + 1) : p;
    };
  }, [pods.nodes, wf]);

  if (!pods.loaded) return <div class="loading" aria-busy="true">Loading…</div>;
  const useRanged = !!pod && !following && !grepQ && ranged;
  const stepURL = pod && `step-logs/${seg(ns)}/${seg(wf)}/${seg(pod)}${qs({ container })}`;
  const apiPath = (followIt: boolean, tail?: number) => `api/v1/workflows/${seg(ns)}/${seg(wf)}/log${qs({
    podName: pod || undefined, 'logOptions.container': container, 'logOptions.follow': followIt ? 'true' : undefined,
    'logOptions.tailLines': tail, grep: grepQ || undefined,
  })}`;
  const tail = grepQ ? undefined : TAIL;
  const target = pod ? `step ${node ? stepName(node) : pod}` : `workflow ${wf}`;
  const empty = container !== 'main' ? `No lines: braid keeps only the main container's output (${container} is empty).`
    : grepQ ? 'No line matches.' : 'No lines.';
  const choosePod = (v: string) => {
    setPod(v);
    setFollow(null);
  };

  return (
    <div class="logs">
      <div class="logs-bar">
        {!props.podName && (
          <label>Step
            <select value={pod} onChange={(e) => choosePod((e.target as HTMLSelectElement).value)}>
              <option value="">All steps</option>
              {pod && !node && <option value={pod}>{pod}</option>}
              {pods.nodes.map((n) => <option key={n.id} value={n.id}>{stepName(n)} ({n.phase ?? 'Pending'})</option>)}
            </select>
          </label>
        )}
        <label>Container
          <select value={container} onChange={(e) => setContainer((e.target as HTMLSelectElement).value)}>
            {CONTAINERS.map((c) => <option key={c} value={c}>{c}</option>)}
          </select>
        </label>
        <label class="logs-grep">Filter (regexp, run on the server)
          <input type="search" value={grep} placeholder="e.g. error|warn" spellcheck={false}
            onInput={(e) => setGrep((e.target as HTMLInputElement).value)} />
        </label>
        <label class="logs-check"><input type="checkbox" checked={following} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow</label>
        <label class="logs-check"><input type="checkbox" checked={wrap} onChange={(e) => setWrap((e.target as HTMLInputElement).checked)} /> Wrap lines</label>
        <span class="logs-links">
          {stepURL && ranged
            ? <a class="button" href={stepURL} download={`${pod}-${container}.log`} data-native>Download log</a>
            : <a class="button" href={apiPath(false)} download={`${pod || wf}-logs.json`} data-native title="every line, as JSON lines of the API">Download (JSON lines)</a>}
        </span>
      </div>
      <p class="hint logs-about">
        {useRanged ? 'Read in byte ranges: scroll anywhere in a log of any size.' : 'Streamed from the server.'}
        {' '}Lines have no timestamps (braid keeps the raw output).
      </p>
      {useRanged
        ? <RangedView key={stepURL} url={stepURL as string} wrap={wrap} label={`Log of ${target}`} empty={empty} onNotRanged={() => setRanged(false)} />
        : <StreamView key={apiPath(following, tail)} path={apiPath(following, tail)} follow={following} wrap={wrap} showPods={!pod}
          podLabel={podLabel} label={`Log of ${target}`} tail={tail} empty={empty} />}
    </div>
  );
}
