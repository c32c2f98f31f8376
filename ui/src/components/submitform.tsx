// The form that submits a workflow from a WorkflowTemplate,
// ClusterWorkflowTemplate or CronWorkflow (argo submit --from): entrypoint,
// parameters, labels and the name; used by the submit page and by the
// template and cron detail pages.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, post, seg } from '../lib/api';
import { navigate } from '../lib/router';
import type { List, ObjectMeta, Parameter, Workflow, WorkflowSpec } from '../lib/types';
import { ErrorBox } from '../lib/ui';

export type SubmitKind = 'WorkflowTemplate' | 'ClusterWorkflowTemplate' | 'CronWorkflow';

export interface SubmitFormProps {
  kind: SubmitKind;
  name: string;
  /** Where the workflow is created (a template's or cron workflow's own namespace). */
  namespace: string;
  /** The template's spec, or the cron workflow's spec.workflowSpec. */
  spec: WorkflowSpec;
  /** Show a namespace field (a cluster template can submit into any namespace). */
  chooseNamespace?: boolean;
}

/** The first value a parameter's field shows. */
const initial = (p: Parameter) => p.value ?? p.default ?? (p.enum?.[0] ?? '');

/** labelsError checks "k=v,k2=v2" as the server will parse it. */
function labelsError(s: string): string | null {
  if (!s.trim()) return null;
  for (const kv of s.split(',')) {
    const [k] = kv.split('=', 1);
    if (!kv.includes('=') || !k.trim()) return `"${kv}" is not key=value`;
  }
  return null;
}

let ids = 0;

export function SubmitForm({ kind, name, namespace, spec, chooseNamespace }: SubmitFormProps) {
  const id = useMemo(() => `sf-${++ids}`, []);
  const params = spec.arguments?.parameters ?? [];
  const templates = (spec.templates ?? []).map((t) => t.name);
  const [ns, setNs] = useState(namespace || 'default');
  const [entry, setEntry] = useState(spec.entrypoint ?? templates[0] ?? '');
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(params.map((p) => [p.name, initial(p)])));
  const [labels, setLabels] = useState('');
  const [genName, setGenName] = useState('');
  const [fixedName, setFixedName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const badLabels = labelsError(labels);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (badLabels) return;
    setBusy(true);
    setError(null);
    // A field left empty for a parameter with no value of its own (one
    // whose value comes from valueFrom, or that is required) is not sent,
    // so the template's valueFrom applies or the server says what is missing.
    const parameters = params
      .filter((p) => values[p.name] !== '' || p.value !== undefined)
      .map((p) => `${p.name}=${values[p.name]}`);
    const submitOptions: Record<string, unknown> = { parameters };
    if (entry && entry !== spec.entrypoint) submitOptions.entryPoint = entry;
    if (labels.trim()) submitOptions.labels = labels.trim();
    if (fixedName.trim()) submitOptions.name = fixedName.trim();
    else if (genName.trim()) submitOptions.generateName = genName.trim();
    try {
      const wf = await post<Workflow>(`api/v1/workflows/${seg(ns)}/submit`, {
        namespace: ns, resourceKind: kind, resourceName: name, submitOptions,
      });
      navigate(`/workflows/${seg(wf.metadata.namespace ?? ns)}/${seg(wf.metadata.name ?? '')}`);
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };

  return (
    <form class="sform" onSubmit={submit} aria-label={`Submit ${kind} ${name}`}>
      {chooseNamespace && (
        <div class="field">
          <label for={`${id}-ns`}>Namespace</label>
          <input id={`${id}-ns`} value={ns} required onInput={(e) => setNs(e.currentTarget.value)} />
        </div>
      )}
      <div class="field">
        <label for={`${id}-entry`}>Entrypoint</label>
        {templates.length ? (
          <select id={`${id}-entry`} value={entry} onChange={(e) => setEntry(e.currentTarget.value)}>
            {!templates.includes(entry) && <option value={entry}>{entry || '(none)'}</option>}
            {templates.map((t) => <option key={t} value={t}>{t}{t === spec.entrypoint ? ' (default)' : ''}</option>)}
          </select>
        ) : (
          <input id={`${id}-entry`} value={entry} onInput={(e) => setEntry(e.currentTarget.value)} placeholder="the template's default" />
        )}
      </div>
      {params.length > 0 && (
        <fieldset>
          <legend>Parameters</legend>
          {params.map((p, i) => <ParamField key={p.name} id={`${id}-p${i}`} p={p} value={values[p.name] ?? ''}
            set={(v) => setValues((s) => ({ ...s, [p.name]: v }))} />)}
        </fieldset>
      )}
      <div class="field">
        <label for={`${id}-labels`}>Labels</label>
        <input id={`${id}-labels`} value={labels} placeholder="key=value,key2=value2" aria-invalid={badLabels ? 'true' : undefined}
          aria-describedby={`${id}-labels-hint`} onInput={(e) => setLabels(e.currentTarget.value)} />
        <span id={`${id}-labels-hint`} class="hint">{badLabels ?? 'Comma-separated key=value pairs, added to the workflow.'}</span>
      </div>
      <div class="row">
        <div class="field">
          <label for={`${id}-gen`}>Generate name</label>
          <input id={`${id}-gen`} value={genName} placeholder={`${name}-`} onInput={(e) => setGenName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={fixedName} placeholder="(generated)" aria-describedby={`${id}-name-hint`}
            onInput={(e) => setFixedName(e.currentTarget.value)} />
          <span id={`${id}-name-hint`} class="hint">A name, if set, is used instead of a generated one.</span>
        </div>
      </div>
      <ErrorBox error={error} />
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy || !!badLabels}>{busy ? 'Submitting…' : 'Submit'}</button>
      </div>
    </form>
  );
}

function ParamField({ id, p, value, set }: { id: string; p: Parameter; value: string; set: (v: string) => void }) {
  const hint = p.description ? `${id}-hint` : undefined;
  const long = value.includes('\n') || value.length > 80;
  return (
    <div class="field">
      <label for={id} class="param-name">{p.name}</label>
      {p.enum?.length ? (
        <select id={id} value={value} aria-describedby={hint} onChange={(e) => set(e.currentTarget.value)}>
          {!p.enum.includes(value) && <option value={value}>{value || '(empty)'}</option>}
          {p.enum.map((v) => <option key={v} value={v}>{v}</option>)}
        </select>
      ) : long ? (
        <textarea id={id} class="code" rows={4} value={value} aria-describedby={hint} onInput={(e) => set(e.currentTarget.value)} />
      ) : (
        <input id={id} value={value} aria-describedby={hint} placeholder={p.valueFrom ? '(from valueFrom)' : ''}
          onInput={(e) => set(e.currentTarget.value)} />
      )}
      {hint && <span id={hint} class="hint">{p.description}</span>}
    </div>
  );
}

// ---- namespaces ---------------------------------------------------------------

/** The namespaces seen, gathered once per page load from the lists of all namespaces (Argo has no namespace list). */
let seen: Promise<string[]> | null = null;
function namespaces(): Promise<string[]> {
  seen ??= Promise.all(['api/v1/workflow-templates/', 'api/v1/cron-workflows/', 'api/v1/workflow-event-bindings/'].map((p) =>
    get<List<{ metadata: ObjectMeta }>>(p).then((l) => (l.items ?? []).map((i) => i.metadata.namespace ?? ''), () => [] as string[])))
    .then((xs) => [...new Set(['default', ...xs.flat()])].filter(Boolean).sort());
  return seen;
}

/**
 * NamespaceInput is a namespace field with the known namespaces offered;
 * onCommit runs on change (Enter or leaving the field), not on each key,
 * as it usually loads a page.
 */
export function NamespaceInput({ id, value, onCommit, label = 'Namespace', allowAll }: {
  id: string; value: string; onCommit: (ns: string) => void; label?: string; allowAll?: boolean;
}) {
  const [list, setList] = useState<string[]>([]);
  const [v, setV] = useState(value);
  useEffect(() => { namespaces().then(setList); }, []);
  useEffect(() => setV(value), [value]);
  return (
    <label for={id}>
      {label}
      <input id={id} list={`${id}-list`} value={v} placeholder={allowAll ? 'all namespaces' : 'default'}
        onInput={(e) => setV(e.currentTarget.value)}
        onChange={(e) => onCommit(e.currentTarget.value.trim())} />
      <datalist id={`${id}-list`}>{list.map((n) => <option key={n} value={n} />)}</datalist>
    </label>
  );
}
