// The workflow's actions (retry, resubmit, suspend, resume, stop,
// terminate, delete) and a node's (retry from it, node set), as argo-server's
// REST API has them; an archived workflow has its own retry, resubmit and delete.
import { useState } from 'preact/hooks';
import { del, put, seg } from '../../lib/api';
import { navigate } from '../../lib/router';
import { completed, type NodeStatus, type Parameter, type Workflow, type WorkflowSpec } from '../../lib/types';
import { confirmAction } from '../../lib/ui';
import { Dialog, ParamFields, type ParamField } from './dialog';
import { templateOf, workflowPath } from './data';

/** Who the actions act on: a live workflow, or an archived one by uid. */
export interface Target {
  wf: Workflow;
  uid?: string;
  refresh: () => void;
  onError: (e: Error | undefined) => void;
  refs?: Map<string, WorkflowSpec>;
}

const ns = (wf: Workflow) => wf.metadata.namespace ?? '';
const nm = (wf: Workflow) => wf.metadata.name ?? '';

/** act calls PUT .../{action} of a live workflow. */
function act<T = Workflow>(wf: Workflow, action: string, body: Record<string, unknown> = {}) {
  return put<T>(`${workflowPath(ns(wf), nm(wf))}/${action}`, { name: nm(wf), namespace: ns(wf), ...body });
}

/** actArchived calls PUT api/v1/archived-workflows/{uid}/{action}. */
function actArchived(wf: Workflow, uid: string, action: string, body: Record<string, unknown> = {}) {
  return put<Workflow>(`api/v1/archived-workflows/${seg(uid)}/${action}`, { uid, namespace: ns(wf), ...body });
}

/** retry retries the workflow, live or archived, and shows the result. */
async function retry(t: Target, body: Record<string, unknown>) {
  if (t.uid) {
    const w = await actArchived(t.wf, t.uid, 'retry', body);
    navigate(`/workflows/${seg(ns(w))}/${seg(nm(w))}`);
    return;
  }
  await act(t.wf, 'retry', body);
  t.refresh();
}

const isSupplied = (p: Parameter) => !!p.valueFrom && 'supplied' in p.valueFrom;

/** Running Suspend nodes: the ones a resume or a node set completes. */
export const waitingSuspends = (wf: Workflow) =>
  Object.values(wf.status?.nodes ?? {}).filter((n) => n.type === 'Suspend' && n.phase === 'Running');

/**
 * suppliedFields lists the output parameters a suspend node waits for
 * (valueFrom.supplied, by its template or on the node), prefilled from
 * the input of the same name (whose enum and description it shows) or
 * the supplied default.
 */
export function suppliedFields(wf: Workflow, n: NodeStatus, refs?: Map<string, WorkflowSpec>): ParamField[] {
  const set = new Set((n.outputs?.parameters ?? []).filter((p) => !isSupplied(p) && p.value !== undefined).map((p) => p.name));
  const decl = [...(templateOf(wf, n, refs)?.outputs?.parameters ?? []), ...(n.outputs?.parameters ?? [])].filter(isSupplied);
  const seen = new Set<string>();
  const out: ParamField[] = [];
  for (const p of decl) {
    if (seen.has(p.name) || set.has(p.name)) continue;
    seen.add(p.name);
    const input = n.inputs?.parameters?.find((x) => x.name === p.name);
    const dflt = (p.valueFrom as { default?: string } | undefined)?.default;
    out.push({
      name: p.name,
      value: input?.value ?? input?.default ?? dflt ?? input?.enum?.[0] ?? '',
      enum: input?.enum,
      description: input?.description ?? p.description,
    });
  }
  return out;
}

const paramsJSON = (fields: ParamField[]) => JSON.stringify(Object.fromEntries(fields.map((f) => [f.name, f.value])));

/** argFields are the workflow's arguments, to override on retry or resubmit. */
function argFields(wf: Workflow): ParamField[] {
  return (wf.spec.arguments?.parameters ?? []).map((p) => ({ name: p.name, value: p.value ?? p.default ?? '', enum: p.enum, description: p.description }));
}

/** changed gives the overridden parameters as "name=value", as the API takes them. */
function changed(wf: Workflow, fields: ParamField[]): string[] | undefined {
  const orig = new Map(argFields(wf).map((f) => [f.name, f.value]));
  const out = fields.filter((f) => orig.get(f.name) !== f.value).map((f) => `${f.name}=${f.value}`);
  return out.length ? out : undefined;
}

type Open = 'retry' | 'resubmit' | 'stop' | 'resume' | undefined;

/** WorkflowActions are the header's buttons, enabled by the workflow's phase. */
export function WorkflowActions(t: Target) {
  const { wf, uid } = t;
  const [open, setOpen] = useState<Open>();
  const phase = wf.status?.phase;
  const done = completed(phase);
  const live = !uid;
  const suspended = !!wf.spec.suspend || waitingSuspends(wf).length > 0;
  const run = (f: () => Promise<unknown>) => async () => {
    t.onError(undefined);
    try { await f(); t.refresh(); } catch (e) { t.onError(e as Error); }
  };
  const close = () => setOpen(undefined);
  const remove = async () => {
    if (!confirmAction(`Delete ${uid ? 'archived ' : ''}workflow ${nm(wf)}`)) return;
    if (uid) await del(`api/v1/archived-workflows/${seg(uid)}`);
    else await del(workflowPath(ns(wf), nm(wf)));
    navigate(`/workflows/${seg(ns(wf))}`);
  };
  return (
    <>
      <button type="button" disabled={phase !== 'Failed' && phase !== 'Error'} onClick={() => setOpen('retry')}>↻ Retry</button>
      <button type="button" onClick={() => setOpen('resubmit')}>⟳ Resubmit</button>
      {live && <>
        <button type="button" disabled={done || !!wf.spec.suspend} onClick={run(() => act(wf, 'suspend'))}>❚❚ Suspend</button>
        <button type="button" disabled={done || !suspended} onClick={() => setOpen('resume')}>▶ Resume</button>
        <button type="button" disabled={done} onClick={() => setOpen('stop')}>■ Stop</button>
        <button type="button" class="danger" disabled={done}
          onClick={run(async () => { if (confirmAction(`Terminate workflow ${nm(wf)}`)) await act(wf, 'terminate'); })}>✖ Terminate</button>
      </>}
      <button type="button" class="danger" onClick={run(remove)}>Delete</button>
      {open === 'retry' && <RetryDialog t={t} onClose={close} />}
      {open === 'resubmit' && <ResubmitDialog t={t} onClose={close} />}
      {open === 'stop' && <StopDialog t={t} onClose={close} />}
      {open === 'resume' && <ResumeDialog t={t} onClose={close} />}
    </>
  );
}

function RetryDialog({ t, onClose }: { t: Target; onClose: () => void }) {
  const [fields, setFields] = useState(argFields(t.wf));
  const [restart, setRestart] = useState(false);
  const [selector, setSelector] = useState('');
  return (
    <Dialog title={`Retry ${nm(t.wf)}`} submit="Retry" onClose={onClose}
      onSubmit={() => retry(t, { restartSuccessful: restart || undefined, nodeFieldSelector: selector || undefined, parameters: changed(t.wf, fields) })}>
      <p class="hint">Runs the failed and errored nodes again{t.uid ? ', as a new live workflow of the same name' : ''}.</p>
      {fields.length > 0 && <h3 class="wf-dialog-sub">Parameters</h3>}
      <ParamFields fields={fields} onChange={setFields} idPrefix="retry-p" />
      <label class="wf-check"><input type="checkbox" checked={restart} onChange={(e) => setRestart((e.target as HTMLInputElement).checked)} /> Restart successful nodes the selector matches</label>
      <label class="wf-field">Node field selector
        <input value={selector} placeholder="e.g. templateName=build" onInput={(e) => setSelector((e.target as HTMLInputElement).value)} />
      </label>
    </Dialog>
  );
}

function ResubmitDialog({ t, onClose }: { t: Target; onClose: () => void }) {
  const [fields, setFields] = useState(argFields(t.wf));
  const [memoized, setMemoized] = useState(false);
  const phase = t.wf.status?.phase;
  const submit = async () => {
    const body = { memoized: memoized || undefined, parameters: changed(t.wf, fields) };
    const w = t.uid ? await actArchived(t.wf, t.uid, 'resubmit', body) : await act(t.wf, 'resubmit', body);
    navigate(`/workflows/${seg(ns(w))}/${seg(nm(w))}`);
  };
  return (
    <Dialog title={`Resubmit ${nm(t.wf)}`} submit="Resubmit" onClose={onClose} onSubmit={submit}>
      <p class="hint">Creates a new workflow from this one's spec, and opens it.</p>
      {fields.length > 0 && <h3 class="wf-dialog-sub">Parameters</h3>}
      <ParamFields fields={fields} onChange={setFields} idPrefix="resubmit-p" />
      <label class="wf-check">
        <input type="checkbox" checked={memoized} disabled={phase !== 'Failed' && phase !== 'Error'}
          onChange={(e) => setMemoized((e.target as HTMLInputElement).checked)} /> Memoized (reuse the nodes that succeeded; Failed or Error workflows only)
      </label>
    </Dialog>
  );
}

function StopDialog({ t, onClose }: { t: Target; onClose: () => void }) {
  const [message, setMessage] = useState('');
  return (
    <Dialog title={`Stop ${nm(t.wf)}`} submit="Stop" danger onClose={onClose}
      onSubmit={async () => { await act(t.wf, 'stop', { message: message || undefined }); t.refresh(); }}>
      <p class="hint">Stops the workflow: running steps end and exit handlers run.</p>
      <label class="wf-field">Message (optional)
        <input value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
      </label>
    </Dialog>
  );
}

/**
 * ResumeDialog resumes the workflow; each suspend node that waits for
 * output parameters gets them set first (node set), then is resumed.
 */
function ResumeDialog({ t, onClose }: { t: Target; onClose: () => void }) {
  const asking = waitingSuspends(t.wf).map((n) => ({ n, fields: suppliedFields(t.wf, n, t.refs) })).filter((x) => x.fields.length);
  const [values, setValues] = useState(asking.map((x) => x.fields));
  const submit = async () => {
    for (let i = 0; i < asking.length; i++) {
      const sel = `id=${asking[i].n.id}`;
      await act(t.wf, 'set', { nodeFieldSelector: sel, outputParameters: paramsJSON(values[i]) });
      await act(t.wf, 'resume', { nodeFieldSelector: sel });
    }
    // Anything else suspended (the workflow itself, other nodes) resumes as a whole.
    if (asking.length === 0 || t.wf.spec.suspend || waitingSuspends(t.wf).length > asking.length) await act(t.wf, 'resume');
    t.refresh();
  };
  return (
    <Dialog title={`Resume ${nm(t.wf)}`} submit="Resume" onClose={onClose} onSubmit={submit}>
      {asking.length === 0 && <p>Resume the workflow and every suspended step?</p>}
      {asking.map((x, i) => (
        <fieldset key={x.n.id} class="wf-fieldset">
          <legend>{x.n.displayName ?? x.n.name}</legend>
          <ParamFields fields={values[i]} idPrefix={`resume-${i}`} onChange={(f) => setValues(values.map((v, j) => (j === i ? f : v)))} />
        </fieldset>
      ))}
    </Dialog>
  );
}

/** NodeActions are a node's own actions in the node panel. */
export function NodeActions({ t, node }: { t: Target; node: NodeStatus }) {
  const [open, setOpen] = useState<'set' | 'retry'>();
  const phase = t.wf.status?.phase;
  const canRetry = completed(phase) && completed(node.phase);
  const canSet = !t.uid && node.type === 'Suspend' && node.phase === 'Running';
  return (
    <div class="wf-node-actions">
      <button type="button" disabled={!canRetry} title={canRetry ? undefined : 'Once the workflow and this node have completed'}
        onClick={() => setOpen('retry')}>↻ Retry from this node</button>
      {canSet && <button type="button" class="primary" onClick={() => setOpen('set')}>Set node (approve / reject)</button>}
      {open === 'retry' && (
        <Dialog title={`Retry from ${node.displayName ?? node.name}`} submit="Retry" onClose={() => setOpen(undefined)}
          onSubmit={() => retry(t, { restartSuccessful: true, nodeFieldSelector: `id=${node.id}` })}>
          <p>Runs this node and everything after it again, and every failed node.</p>
        </Dialog>
      )}
      {open === 'set' && <NodeSetDialog t={t} node={node} onClose={() => setOpen(undefined)} />}
    </div>
  );
}

/** NodeSetDialog is argo node set: a suspend node's outputs, message and phase. */
function NodeSetDialog({ t, node, onClose }: { t: Target; node: NodeStatus; onClose: () => void }) {
  const [fields, setFields] = useState(suppliedFields(t.wf, node, t.refs));
  const [phase, setPhase] = useState('Succeeded');
  const [message, setMessage] = useState('');
  const submit = async () => {
    await act(t.wf, 'set', {
      nodeFieldSelector: `id=${node.id}`,
      phase: phase || undefined,
      message: message || undefined,
      outputParameters: fields.length ? paramsJSON(fields) : undefined,
    });
    t.refresh();
  };
  return (
    <Dialog title={`Set ${node.displayName ?? node.name}`} submit="Set" onClose={onClose} onSubmit={submit}>
      <ParamFields fields={fields} onChange={setFields} idPrefix="set-p" />
      <label class="wf-field">Phase
        <select value={phase} onChange={(e) => setPhase((e.target as HTMLSelectElement).value)}>
          <option value="Succeeded">Succeeded (approve)</option>
          <option value="Failed">Failed (reject)</option>
          <option value="Error">Error</option>
          <option value="">Keep running (only set the values)</option>
        </select>
      </label>
      <label class="wf-field">Message (optional)
        <input value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
      </label>
    </Dialog>
  );
}
