// WorkflowTemplates and ClusterWorkflowTemplates: the list (with a
// namespace filter and a Create editor) and one template (graph, YAML
// editor, submit form, delete). The route's path tells the kind.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { del, get, post, put, seg } from '../lib/api';
import { href, navigate, setQuery, useRoute } from '../lib/router';
import type { List, ObjectMeta, WorkflowTemplate } from '../lib/types';
import { confirmAction, ErrorBox, Loading, Page, Time, useAsync } from '../lib/ui';
import type { PageProps } from '../routes';
import { TemplateGraph } from '../graph';
import { NamespaceInput, SubmitForm } from '../components/submitform';
import { ObjectEditor, toYaml } from '../components/yamleditor';

// ---- pieces the cron and event binding pages share ------------------------

/** Tabs is a tab bar whose selection is the query's "tab" (first tab when absent). */
export function Tabs({ tabs, current, label }: { tabs: [string, string][]; current: string; label: string }) {
  return (
    <div class="tabs" role="tablist" aria-label={label}>
      {tabs.map(([id, text], i) => (
        <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={current === id} aria-controls="tab-panel"
          onClick={() => setQuery({ tab: i === 0 ? undefined : id })}>{text}</button>
      ))}
    </div>
  );
}

export function TabPanel({ current, children }: { current: string; children: ComponentChildren }) {
  return <div id="tab-panel" role="tabpanel" aria-labelledby={`tab-${current}`}>{children}</div>;
}

export function Labels({ labels }: { labels?: Record<string, string> }) {
  const e = Object.entries(labels ?? {});
  if (!e.length) return <span class="hint">-</span>;
  return <span class="chips">{e.map(([k, v]) => <code key={k} class="chip">{k}={v}</code>)}</span>;
}

/** nsOf is the namespace a request for obj uses: its own, else the page's, else default. */
export const nsOf = (obj: any, ns: string) => (obj?.metadata?.namespace as string) || ns || 'default';

/** keepVersion puts back a resourceVersion the user's YAML dropped, so that an update still detects a conflict. */
export function keepVersion<T extends { metadata?: ObjectMeta }>(obj: T, from?: { metadata?: ObjectMeta }): T {
  const rv = from?.metadata?.resourceVersion;
  if (rv && obj && typeof obj === 'object') obj.metadata = { ...obj.metadata, resourceVersion: obj.metadata?.resourceVersion ?? rv };
  return obj;
}

/** A list's name filter (the query's "q") and namespace filter (the path). */
export function ListFilters({ base, ns, q, namespaced, children }: {
  base: string; ns: string; q: string; namespaced: boolean; children?: ComponentChildren;
}) {
  const [text, setText] = useState(q);
  return (
    <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setQuery({ q: text || undefined }); }}>
      {namespaced && <NamespaceInput id="list-ns" value={ns} allowAll
        onCommit={(v) => navigate(v ? `${base}/${seg(v)}` : base, { query: new URLSearchParams(location.search) })} />}
      <label for="list-q">Name contains
        <input id="list-q" type="search" value={text} onInput={(e) => { setText(e.currentTarget.value); setQuery({ q: e.currentTarget.value || undefined }); }} />
      </label>
      {children}
    </form>
  );
}

// ---- templates ------------------------------------------------------------

const starter = (cluster: boolean) => `apiVersion: argoproj.io/v1alpha1
kind: ${cluster ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate'}
metadata:
  name: my-template
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: message
        value: hello
        description: what to print
      - name: level
        value: info
        enum: [debug, info, warn]
  templates:
    - name: main
      container:
        image: busybox
        command: [echo]
        args: ["{{workflow.parameters.level}}: {{workflow.parameters.message}}"]
`;

function useKind() {
  const cluster = useRoute().path.startsWith('/cluster-workflow-templates');
  return {
    cluster,
    base: cluster ? '/cluster-workflow-templates' : '/workflow-templates',
    kind: cluster ? 'ClusterWorkflowTemplate' as const : 'WorkflowTemplate' as const,
    title: cluster ? 'Cluster workflow templates' : 'Workflow templates',
    api: (ns: string, name?: string) => cluster
      ? `api/v1/cluster-workflow-templates${name ? '/' + seg(name) : ''}`
      : `api/v1/workflow-templates/${seg(ns)}${name ? '/' + seg(name) : ''}`,
  };
}

export function TemplateList({ params, query }: PageProps) {
  const k = useKind();
  const ns = k.cluster ? '' : params.ns ?? '';
  const q = query.get('q') ?? '';
  const creating = query.get('create') === '1';
  const list = useAsync((s) => get<List<WorkflowTemplate>>(k.api(ns), s), [k.cluster, ns]);
  const items = (list.data?.items ?? []).filter((t) => (t.metadata.name ?? '').includes(q))
    .sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const link = (t: WorkflowTemplate) => k.cluster ? `${k.base}/${seg(t.metadata.name ?? '')}` : `${k.base}/${seg(t.metadata.namespace ?? '')}/${seg(t.metadata.name ?? '')}`;
  return (
    <Page title={k.title} actions={
      <button type="button" class="primary" aria-expanded={creating} onClick={() => setQuery({ create: creating ? undefined : '1' })}>Create</button>}>
      {creating && (
        <section class="card" aria-label={`Create a ${k.kind}`}>
          <h2 class="card-title">New {k.cluster ? 'cluster workflow template' : 'workflow template'}{k.cluster ? '' : ` in ${ns || 'default'}`}</h2>
          <ObjectEditor initial={starter(k.cluster)} kind={k.kind} namespace={ns || 'default'} label={`${k.kind} YAML`} saveLabel="Create" height="45vh"
            save={(t) => post<WorkflowTemplate>(k.api(nsOf(t, ns)), k.cluster ? { template: t } : { namespace: nsOf(t, ns), template: t })}
            onSaved={(t: WorkflowTemplate) => navigate(link(t))}>
            <button type="button" onClick={() => setQuery({ create: undefined })}>Cancel</button>
          </ObjectEditor>
        </section>
      )}
      <ListFilters base={k.base} ns={ns} q={q} namespaced={!k.cluster} />
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading /> : (
        <table class="list">
          <caption class="sr-only">{k.title}</caption>
          <thead><tr><th scope="col">Name</th>{!k.cluster && <th scope="col">Namespace</th>}<th scope="col">Created</th><th scope="col">Labels</th></tr></thead>
          <tbody>
            {items.map((t) => (
              <tr key={`${t.metadata.namespace}/${t.metadata.name}`}>
                <td><a href={href(link(t))}>{t.metadata.name}</a></td>
                {!k.cluster && <td><a href={href(`${k.base}/${seg(t.metadata.namespace ?? '')}`)}>{t.metadata.namespace}</a></td>}
                <td><Time t={t.metadata.creationTimestamp} /></td>
                <td class="wrap"><Labels labels={t.metadata.labels} /></td>
              </tr>
            ))}
            {!items.length && <tr><td colSpan={k.cluster ? 3 : 4} class="hint">No {k.title.toLowerCase()}{q ? ` matching “${q}”` : ''}{ns ? ` in ${ns}` : ''}.</td></tr>}
          </tbody>
        </table>
      )}
    </Page>
  );
}

const tabs: [string, string][] = [['graph', 'Graph'], ['yaml', 'YAML'], ['submit', 'Submit']];

export function TemplateDetails({ params, query }: PageProps) {
  const k = useKind();
  const ns = k.cluster ? '' : params.ns;
  const name = params.name;
  const t = useAsync((s) => get<WorkflowTemplate>(k.api(ns, name), s), [k.cluster, ns, name]);
  const tab = tabs.some(([id]) => id === query.get('tab')) ? query.get('tab')! : 'graph';
  const yaml = useMemo(() => (t.data ? toYaml(t.data) : ''), [t.data]);
  const [delError, setDelError] = useState<Error | null>(null);
  const remove = async () => {
    if (!confirmAction(`Delete ${k.kind} ${name}`)) return;
    try {
      await del(k.api(ns, name));
      navigate(k.cluster ? k.base : `${k.base}/${seg(ns)}`);
    } catch (e) { setDelError(e as Error); }
  };
  const spec = t.data?.spec ?? {};
  return (
    <Page title={name} actions={<>
      <button type="button" onClick={() => setQuery({ tab: 'submit' })}>Submit</button>
      <button type="button" class="danger" onClick={remove}>Delete</button>
    </>}>
      <p class="crumbs"><a href={href(k.base)}>{k.title}</a>{!k.cluster && <> / <a href={href(`${k.base}/${seg(ns)}`)}>{ns}</a></>} / {name}</p>
      <ErrorBox error={t.error ?? delError} />
      {t.loading && !t.data && <Loading />}
      {t.data && <>
        <dl class="kv card">
          {!k.cluster && <><dt>Namespace</dt><dd>{ns}</dd></>}
          <dt>Created</dt><dd><Time t={t.data.metadata.creationTimestamp} /></dd>
          <dt>Entrypoint</dt><dd><code>{spec.entrypoint ?? '-'}</code></dd>
          <dt>Parameters</dt><dd>{(spec.arguments?.parameters ?? []).map((p) => <code key={p.name} class="chip">{p.name}{p.value !== undefined ? `=${p.value}` : ''}</code>)}{!(spec.arguments?.parameters ?? []).length && '-'}</dd>
          <dt>Labels</dt><dd><Labels labels={t.data.metadata.labels} /></dd>
          {!k.cluster && <><dt>Workflows</dt><dd><a href={href(`/workflows/${seg(ns)}`, { template: name })}>Workflows from this template</a></dd></>}
        </dl>
        <Tabs tabs={tabs} current={tab} label="Template views" />
        <TabPanel current={tab}>
          {tab === 'graph' && <TemplateGraph spec={spec} name={name} />}
          {tab === 'yaml' && (
            <ObjectEditor initial={yaml} kind={k.kind} namespace={ns || 'default'} label={`${k.kind} ${name} YAML`} saveLabel="Update"
              save={(o) => put<WorkflowTemplate>(k.api(ns, name), k.cluster
                ? { name, template: keepVersion(o, t.data) }
                : { namespace: ns, name, template: keepVersion(o, t.data) })}
              onSaved={(o: WorkflowTemplate) => t.set(o)} />
          )}
          {tab === 'submit' && <div class="card">
            <SubmitForm key={`${ns}/${name}/${t.data.metadata.resourceVersion}`} kind={k.kind} name={name} namespace={ns || 'default'} spec={spec} chooseNamespace={k.cluster} />
          </div>}
        </TabPanel>
      </>}
    </Page>
  );
}
