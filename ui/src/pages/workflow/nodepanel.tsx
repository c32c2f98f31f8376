// The panel of the selected node: its summary, containers, inputs and
// outputs, logs and events, and its actions (retry from it, node set).
import type { ComponentChildren } from 'preact';
import { ArtifactList } from '../../components/artifacts';
import { LogViewer } from '../../components/logs';
import { seg } from '../../lib/api';
import { href, setQuery } from '../../lib/router';
import type { NodeStatus, Parameter, Template, Workflow } from '../../lib/types';
import { duration, Phase, Time } from '../../lib/ui';
import { NodeActions, type Target } from './actions';
import { podName, templateOf } from './data';
import { Events } from './events';

const tabs = [['summary', 'Summary'], ['containers', 'Containers'], ['io', 'Inputs & outputs'], ['logs', 'Logs'], ['events', 'Events']] as const;
type Tab = (typeof tabs)[number][0];

export interface NodePanelProps {
  t: Target;
  id: string;
  tab?: string;
  now: number;
}

export function NodePanel({ t, id, tab, now }: NodePanelProps) {
  const node = t.wf.status?.nodes?.[id];
  const close = <button type="button" class="wf-close" aria-label="Close the node panel" onClick={() => setQuery({ node: undefined, ntab: undefined })}>×</button>;
  if (!node) {
    // A node of the graph's preview: it has not started.
    return (
      <aside class="wf-panel" aria-label="Node">
        <header class="wf-panel-head"><h2>{id}</h2>{close}</header>
        <p class="hint">Not started yet.</p>
      </aside>
    );
  }
  const cur: Tab = tabs.some(([k]) => k === tab) ? (tab as Tab) : 'summary';
  return (
    <aside class="wf-panel" aria-label={`Node ${node.displayName ?? node.name}`}>
      <header class="wf-panel-head">
        <h2><Phase phase={node.phase} /> {node.displayName ?? node.name}</h2>
        {close}
      </header>
      <NodeActions t={t} node={node} />
      <div class="tabs" role="tablist" aria-label="Node details">
        {tabs.map(([k, label]) => (
          <button key={k} type="button" role="tab" aria-selected={cur === k} onClick={() => setQuery({ ntab: k === 'summary' ? undefined : k })}>{label}</button>
        ))}
      </div>
      <div role="tabpanel" class="wf-panel-body">
        {cur === 'summary' && <NodeSummary wf={t.wf} n={node} now={now} />}
        {cur === 'containers' && <Containers tmpl={templateOf(t.wf, node, t.refs)} n={node} />}
        {cur === 'io' && <InputsOutputs wf={t.wf} n={node} />}
        {cur === 'logs' && <NodeLogs t={t} n={node} />}
        {cur === 'events' && (
          <Events namespace={t.wf.metadata.namespace ?? ''} archived={!!t.uid}
            fieldSelector={`involvedObject.name=${node.type === 'Pod' ? podName(t.wf, node) : node.id}`} />
        )}
      </div>
    </aside>
  );
}

/** Row adds a dt/dd pair when there is a value. */
function Row({ k, v }: { k: string; v: ComponentChildren }) {
  if (v === undefined || v === null || v === '') return null;
  return <><dt>{k}</dt><dd>{v}</dd></>;
}

const resources = (r?: Record<string, number>) =>
  r && Object.keys(r).length ? Object.entries(r).map(([k, v]) => `${v}s ${k}`).join(', ') : undefined;

function TemplateName({ wf, n }: { wf: Workflow; n: NodeStatus }) {
  const ref = n.templateRef;
  if (!ref) return <>{n.templateName ?? '-'}</>;
  const path = ref.clusterScope ? `/cluster-workflow-templates/${seg(ref.name)}` : `/workflow-templates/${seg(wf.metadata.namespace ?? '')}/${seg(ref.name)}`;
  return <><a href={href(path)}>{ref.name}</a> / {ref.template}</>;
}

function NodeSummary({ wf, n, now }: { wf: Workflow; n: NodeStatus; now: number }) {
  const boundary = n.boundaryID ? wf.status?.nodes?.[n.boundaryID] : undefined;
  return (
    <dl class="kv wf-kv">
      <Row k="ID" v={<code>{n.id}</code>} />
      <Row k="Name" v={n.name} />
      <Row k="Display name" v={n.displayName} />
      <Row k="Type" v={n.type} />
      <Row k={n.templateRef ? 'Template ref' : 'Template'} v={<TemplateName wf={wf} n={n} />} />
      <Row k="Phase" v={<Phase phase={n.phase} />} />
      <Row k="Message" v={n.message && <span class="wf-message">{n.message}</span>} />
      <Row k="Started" v={n.startedAt && <Time t={n.startedAt} />} />
      <Row k="Finished" v={n.finishedAt && <Time t={n.finishedAt} />} />
      <Row k="Duration" v={duration(n.startedAt, n.finishedAt, now)} />
      <Row k="Pod name" v={n.type === 'Pod' ? <code>{podName(wf, n)}</code> : undefined} />
      <Row k="Host node" v={n.hostNodeName} />
      <Row k="Pod IP" v={n.podIP} />
      <Row k="Progress" v={n.progress} />
      <Row k="Resources duration" v={resources(n.resourcesDuration)} />
      <Row k="Boundary" v={boundary && <button type="button" class="wf-link" onClick={() => setQuery({ node: boundary.id })}>{boundary.displayName ?? boundary.name}</button>} />
      <Row k="Children" v={n.children?.length ? String(n.children.length) : undefined} />
    </dl>
  );
}

interface Env { name: string; value?: string; valueFrom?: Record<string, Record<string, unknown>> }
interface Container {
  name?: string;
  image?: string;
  command?: string[];
  args?: string[];
  source?: string;
  workingDir?: string;
  env?: Env[];
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
}

/** envSource says where a valueFrom comes from, never its value. */
function envSource(vf: Record<string, Record<string, unknown>>): string {
  const [kind, ref] = Object.entries(vf)[0] ?? ['', {}];
  const parts = [ref?.name, ref?.key, ref?.fieldPath, ref?.resource].filter(Boolean).join('/');
  return `from ${kind}${parts ? ` ${parts}` : ''}`;
}

function ContainerView({ c, title }: { c: Container; title: string }) {
  const res = c.resources && (c.resources.requests || c.resources.limits);
  return (
    <section class="wf-container">
      <h3>{title}</h3>
      <dl class="kv wf-kv">
        <Row k="Image" v={c.image && <code>{c.image}</code>} />
        <Row k="Command" v={c.command?.length ? <code>{JSON.stringify(c.command)}</code> : undefined} />
        <Row k="Args" v={c.args?.length ? <code class="wf-pre">{JSON.stringify(c.args)}</code> : undefined} />
        <Row k="Working dir" v={c.workingDir} />
        <Row k="Env" v={c.env?.length ? (
          <ul class="wf-env">{c.env.map((e) => <li key={e.name}><code>{e.name}</code>{e.valueFrom ? <span class="hint"> {envSource(e.valueFrom)}</span> : e.value !== undefined ? <> = <code>{e.value}</code></> : null}</li>)}</ul>
        ) : undefined} />
        <Row k="Requests" v={res && c.resources?.requests ? Object.entries(c.resources.requests).map(([k, v]) => `${k}: ${v}`).join(', ') : undefined} />
        <Row k="Limits" v={res && c.resources?.limits ? Object.entries(c.resources.limits).map(([k, v]) => `${k}: ${v}`).join(', ') : undefined} />
      </dl>
      {c.source && <><h4>Source</h4><pre class="wf-pre">{c.source}</pre></>}
    </section>
  );
}

function Containers({ tmpl, n }: { tmpl?: Template; n: NodeStatus }) {
  if (n.type !== 'Pod' && n.type !== 'Container') return <p class="hint">A {n.type} node runs no container.</p>;
  if (!tmpl) return <p class="hint">The template of this node is not available.</p>;
  const list: [string, Container][] = [];
  if (tmpl.container) list.push([`main (container)`, tmpl.container as Container]);
  if (tmpl.script) list.push([`main (script)`, tmpl.script as Container]);
  for (const c of (tmpl.containerSet?.containers ?? []) as Container[]) list.push([`${c.name} (container set)`, c]);
  for (const c of ((tmpl.initContainers ?? []) as Container[])) list.push([`${c.name} (init)`, c]);
  for (const c of ((tmpl.sidecars ?? []) as Container[])) list.push([`${c.name} (sidecar)`, c]);
  if (list.length === 0) return <p class="hint">Template {tmpl.name} has no containers{tmpl.resource ? ' (a resource template)' : tmpl.data ? ' (a data template)' : ''}.</p>;
  return <>{list.map(([title, c]) => <ContainerView key={title} c={c} title={title} />)}</>;
}

function Params({ title, ps }: { title: string; ps?: Parameter[] }) {
  if (!ps?.length) return null;
  return (
    <table class="list wf-params-table">
      <caption>{title}</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
      <tbody>
        {ps.map((p) => (
          <tr key={p.name}>
            <td>{p.name}</td>
            <td class="wf-val">{p.value ?? (p.valueFrom && 'supplied' in p.valueFrom ? <span class="hint">waiting to be supplied</span> : p.default ?? '')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function InputsOutputs({ wf, n }: { wf: Workflow; n: NodeStatus }) {
  const o = n.outputs;
  const none = !n.inputs?.parameters?.length && !n.inputs?.artifacts?.length && !o?.parameters?.length && !o?.artifacts?.length && o?.result === undefined && o?.exitCode === undefined;
  return (
    <div class="wf-io">
      <Params title="Input parameters" ps={n.inputs?.parameters} />
      <Params title="Output parameters" ps={o?.parameters} />
      {(o?.result !== undefined || o?.exitCode !== undefined) && (
        <dl class="kv wf-kv">
          <Row k="Exit code" v={o?.exitCode} />
          <Row k="Result" v={o?.result !== undefined ? <pre class="wf-pre">{o.result}</pre> : undefined} />
        </dl>
      )}
      {(n.inputs?.artifacts?.length || o?.artifacts?.length) ? <ArtifactList workflow={wf} node={n} /> : null}
      {none && <p class="hint">No inputs or outputs.</p>}
    </div>
  );
}

function NodeLogs({ t, n }: { t: Target; n: NodeStatus }) {
  if (n.type !== 'Pod') return <p class="hint">A {n.type} node has no pod of its own: the Logs tab of the workflow shows every step.</p>;
  // The server takes the node ID for the pod name, whatever the pod naming.
  return <LogViewer namespace={t.wf.metadata.namespace ?? ''} workflow={t.wf.metadata.name ?? ''} podName={n.id} uid={t.uid} />;
}
