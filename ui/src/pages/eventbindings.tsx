// WorkflowEventBindings of a namespace (braid's own calls; argo-server has
// none): the list with each one's event selector and the template it
// submits, create and edit in the YAML editor, delete, and a form that
// sends a test event (POST api/v1/events/{ns}/{discriminator}).
import { useMemo, useState } from 'preact/hooks';
import { del, get, post, put, seg } from '../lib/api';
import { href, setQuery } from '../lib/router';
import type { List, ObjectMeta, Parameter } from '../lib/types';
import { confirmAction, ErrorBox, Loading, Page, Time, useAsync } from '../lib/ui';
import type { PageProps } from '../routes';
import { NamespaceInput } from '../components/submitform';
import { ObjectEditor, toYaml } from '../components/yamleditor';
import { keepVersion, ListFilters, nsOf } from './templates';

interface Binding {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    event?: { selector?: string };
    submit?: {
      workflowTemplateRef?: { name?: string; clusterScope?: boolean };
      metadata?: ObjectMeta;
      arguments?: { parameters?: (Parameter & { valueFrom?: { event?: string } })[] };
    };
  };
}

const base = '/event-bindings';
const api = (ns: string, name?: string) => `api/v1/workflow-event-bindings/${seg(ns)}${name ? '/' + seg(name) : ''}`;

const starter = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata:
  name: my-binding
spec:
  event:
    # an expression over payload, metadata and discriminator
    selector: discriminator == "my-event" && payload.message != ""
  submit:
    workflowTemplateRef:
      name: my-template
    arguments:
      parameters:
        - name: message
          valueFrom:
            event: payload.message
`;

export function EventBindings({ params, query }: PageProps) {
  const ns = params.ns ?? '';
  const q = query.get('q') ?? '';
  const edit = query.get('edit') ?? ''; // "new", or "<namespace>/<name>"
  const list = useAsync((s) => get<List<Binding>>(api(ns), s), [ns]);
  const items = (list.data?.items ?? []).filter((b) => (b.metadata.name ?? '').includes(q))
    .sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const [error, setError] = useState<Error | null>(null);
  const remove = async (b: Binding) => {
    if (!confirmAction(`Delete WorkflowEventBinding ${b.metadata.name}`)) return;
    setError(null);
    try {
      await del(api(b.metadata.namespace ?? ns, b.metadata.name));
      if (edit === `${b.metadata.namespace}/${b.metadata.name}`) setQuery({ edit: undefined });
      list.reload();
    } catch (e) { setError(e as Error); }
  };
  return (
    <Page title="Event bindings" actions={
      <button type="button" class="primary" aria-expanded={edit === 'new'} onClick={() => setQuery({ edit: edit === 'new' ? undefined : 'new' })}>Create</button>}>
      {edit && <BindingEditor key={edit} edit={edit} ns={ns} done={() => { setQuery({ edit: undefined }); list.reload(); }} />}
      <ListFilters base={base} ns={ns} q={q} namespaced />
      <ErrorBox error={list.error ?? error} />
      {list.loading && !list.data ? <Loading /> : (
        <table class="list bindings">
          <thead><tr>
            <th scope="col">Name</th><th scope="col">Namespace</th><th scope="col">Event selector</th><th scope="col">Submits</th>
            <th scope="col">Parameters</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th>
          </tr></thead>
          <tbody>
            {items.map((b) => <Row key={`${b.metadata.namespace}/${b.metadata.name}`} b={b} remove={() => remove(b)} />)}
            {!items.length && <tr><td colSpan={7} class="hint">No event bindings{q ? ` matching “${q}”` : ''}{ns ? ` in ${ns}` : ''}.</td></tr>}
          </tbody>
        </table>
      )}
      <TestEvent ns={ns} />
    </Page>
  );
}

function Row({ b, remove }: { b: Binding; remove: () => void }) {
  const ns = b.metadata.namespace ?? '';
  const ref = b.spec.submit?.workflowTemplateRef;
  const target = ref?.name && (ref.clusterScope ? `/cluster-workflow-templates/${seg(ref.name)}` : `/workflow-templates/${seg(ns)}/${seg(ref.name)}`);
  return (
    <tr>
      <td>{b.metadata.name}</td>
      <td><a href={href(`${base}/${seg(ns)}`)}>{ns}</a></td>
      <td class="wrap"><code>{b.spec.event?.selector ?? ''}</code></td>
      <td>{target ? <a href={href(target)}>{ref!.clusterScope ? 'cluster template ' : ''}{ref!.name}</a> : <span class="hint">-</span>}</td>
      <td class="wrap">{(b.spec.submit?.arguments?.parameters ?? []).map((p) => (
        <code key={p.name} class="chip">{p.name}{p.valueFrom?.event ? ` ← ${p.valueFrom.event}` : p.value !== undefined ? `=${p.value}` : ''}</code>))}</td>
      <td><Time t={b.metadata.creationTimestamp} /></td>
      <td class="row-actions">
        <button type="button" onClick={() => setQuery({ edit: `${ns}/${b.metadata.name}` })} aria-label={`Edit ${b.metadata.name}`}>Edit</button>
        <button type="button" class="danger" onClick={remove} aria-label={`Delete ${b.metadata.name}`}>Delete</button>
      </td>
    </tr>
  );
}

/** BindingEditor creates a binding (edit = "new") or edits "<namespace>/<name>". */
function BindingEditor({ edit, ns, done }: { edit: string; ns: string; done: () => void }) {
  const creating = edit === 'new';
  const [bns, bname] = creating ? [ns || 'default', ''] : [edit.slice(0, edit.indexOf('/')), edit.slice(edit.indexOf('/') + 1)];
  const cur = useAsync((s) => (creating ? Promise.resolve(null) : get<Binding>(api(bns, bname), s)), [edit]);
  const initial = useMemo(() => (creating ? starter : cur.data ? toYaml(cur.data) : ''), [cur.data, creating]);
  return (
    <section class="card" aria-label={creating ? 'Create a WorkflowEventBinding' : `Edit ${bname}`}>
      <h2 class="card-title">{creating ? `New event binding in ${bns}` : `Edit ${bns}/${bname}`}</h2>
      <ErrorBox error={cur.error} />
      {!creating && cur.loading ? <Loading /> : (cur.data || creating) && (
        <ObjectEditor initial={initial} kind="WorkflowEventBinding" namespace={bns} label="WorkflowEventBinding YAML" height="40vh"
          saveLabel={creating ? 'Create' : 'Update'}
          save={(b) => creating
            ? post<Binding>(api(nsOf(b, bns)), { namespace: nsOf(b, bns), workflowEventBinding: b })
            : put<Binding>(api(bns, bname), { namespace: bns, name: bname, workflowEventBinding: keepVersion(b, cur.data ?? undefined) })}
          onSaved={done}>
          <button type="button" onClick={() => setQuery({ edit: undefined })}>Cancel</button>
        </ObjectEditor>
      )}
    </section>
  );
}

/** TestEvent posts an event, as a webhook would; the bindings it matches submit their workflows. */
function TestEvent({ ns }: { ns: string }) {
  const [ens, setEns] = useState(ns || 'default');
  const [disc, setDisc] = useState('my-event');
  const [body, setBody] = useState('{\n  "message": "hello"\n}');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [sent, setSent] = useState('');
  let bad = '';
  try { JSON.parse(body); } catch (e) { bad = (e as Error).message; }
  const send = async (e: Event) => {
    e.preventDefault();
    if (bad) return;
    setBusy(true);
    setError(null);
    setSent('');
    try {
      const r = await post(`api/v1/events/${seg(ens)}/${seg(disc)}`, JSON.parse(body));
      setSent(`Sent at ${new Date().toLocaleTimeString()}; the server answered ${JSON.stringify(r)}.`);
    } catch (err) { setError(err as Error); } finally { setBusy(false); }
  };
  return (
    <section class="card test-event" aria-labelledby="te-title">
      <h2 id="te-title" class="card-title">Send a test event</h2>
      <form onSubmit={send}>
        <div class="filters">
          <NamespaceInput id="te-ns" value={ens} onCommit={(v) => setEns(v || 'default')} />
          <label for="te-disc">Discriminator<input id="te-disc" value={disc} onInput={(e) => setDisc(e.currentTarget.value)} /></label>
        </div>
        <label for="te-body" class="block-label">Payload (JSON)</label>
        <textarea id="te-body" class="code" rows={6} spellcheck={false} value={body} aria-invalid={bad ? 'true' : undefined}
          aria-describedby="te-hint" onInput={(e) => setBody(e.currentTarget.value)} />
        <p id="te-hint" class="hint">{bad ? `Not JSON: ${bad}` : `POST api/v1/events/${ens}/${disc}: each binding of ${ens} whose selector is true submits its workflow.`}</p>
        <ErrorBox error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !!bad || !disc}>{busy ? 'Sending…' : 'Send event'}</button>
          <span role="status" class="hint">{sent}{sent && <> <a href={href(`/workflows/${seg(ens)}`)}>Workflows in {ens}</a></>}</span>
        </div>
      </form>
    </section>
  );
}
