// /submit: a workflow from a WorkflowTemplate, ClusterWorkflowTemplate or
// CronWorkflow (the submit form), or from YAML (the editor, linted as one
// types). The query holds the view: mode=yaml, kind, ns, name; template=
// and cron= are accepted from links as the name of a WorkflowTemplate or
// CronWorkflow.
import { get, post, seg } from '../lib/api';
import { navigate, setQuery } from '../lib/router';
import type { CronWorkflow, List, ObjectMeta, Workflow, WorkflowSpec, WorkflowTemplate } from '../lib/types';
import { ErrorBox, Loading, Page, useAsync } from '../lib/ui';
import type { PageProps } from '../routes';
import { NamespaceInput, SubmitForm, type SubmitKind } from '../components/submitform';
import { ObjectEditor } from '../components/yamleditor';
import { nsOf } from './templates';

const kinds: [SubmitKind, string][] = [
  ['WorkflowTemplate', 'Workflow template'],
  ['ClusterWorkflowTemplate', 'Cluster workflow template'],
  ['CronWorkflow', 'Cron workflow'],
];

/** The list and get paths of a kind. */
export function kindPath(kind: SubmitKind, ns: string, name?: string): string {
  const n = name === undefined ? '' : '/' + seg(name);
  switch (kind) {
    case 'WorkflowTemplate': return `api/v1/workflow-templates/${seg(ns)}${n}`;
    case 'ClusterWorkflowTemplate': return `api/v1/cluster-workflow-templates${n}`;
    case 'CronWorkflow': return `api/v1/cron-workflows/${seg(ns)}${n}`;
  }
}

/** The spec a kind's object runs. */
export const runSpec = (kind: SubmitKind, o: WorkflowTemplate | CronWorkflow): WorkflowSpec =>
  (kind === 'CronWorkflow' ? (o as CronWorkflow).spec.workflowSpec : (o as WorkflowTemplate).spec) ?? {};

const starter = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: hello-world-
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: message
        value: hello world
  templates:
    - name: main
      container:
        image: busybox
        command: [echo]
        args: ["{{workflow.parameters.message}}"]
`;

export function SubmitPage({ query }: PageProps) {
  const mode = query.get('mode') === 'yaml' ? 'yaml' : 'from';
  const ns = query.get('ns') || 'default';
  const tab = (m: 'from' | 'yaml', label: string) => (
    <button type="button" role="tab" id={`submit-tab-${m}`} aria-selected={mode === m} aria-controls="submit-panel"
      onClick={() => setQuery({ mode: m === 'yaml' ? 'yaml' : undefined })}>{label}</button>
  );
  return (
    <Page title="Submit a workflow">
      <div class="tabs" role="tablist" aria-label="How to submit">
        {tab('from', 'From a template')}
        {tab('yaml', 'From YAML')}
      </div>
      <div id="submit-panel" role="tabpanel" aria-labelledby={`submit-tab-${mode}`}>
        {mode === 'yaml' ? <FromYaml ns={ns} /> : <FromTemplate query={query} ns={ns} />}
      </div>
    </Page>
  );
}

function FromTemplate({ query, ns }: { query: URLSearchParams; ns: string }) {
  const cron = query.get('cron');
  const kind = (kinds.find(([k]) => k === query.get('kind'))?.[0]) ?? (cron ? 'CronWorkflow' : 'WorkflowTemplate');
  const name = query.get('name') || query.get('template') || cron || '';
  const items = useAsync((s) => get<List<{ metadata: ObjectMeta }>>(kindPath(kind, ns), s), [kind, ns]);
  const obj = useAsync((s) => (name ? get<WorkflowTemplate | CronWorkflow>(kindPath(kind, ns, name), s) : Promise.resolve(null)), [kind, ns, name]);
  const names = (items.data?.items ?? []).map((i) => i.metadata.name ?? '').sort();
  const pick = (changes: Record<string, string | undefined>) => setQuery({ template: undefined, cron: undefined, ...changes });
  return (
    <>
      <div class="filters">
        <label for="submit-kind">Kind
          <select id="submit-kind" value={kind} onChange={(e) => pick({ kind: e.currentTarget.value, name: undefined })}>
            {kinds.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
          </select>
        </label>
        <NamespaceInput id="submit-ns" value={ns} label={kind === 'ClusterWorkflowTemplate' ? 'Namespace to run in' : 'Namespace'}
          onCommit={(v) => pick({ ns: v || undefined, name: kind === 'ClusterWorkflowTemplate' ? name : undefined })} />
        <label for="submit-name">{kinds.find(([k]) => k === kind)![1]}
          <select id="submit-name" value={name} onChange={(e) => pick({ name: e.currentTarget.value || undefined })}
            disabled={items.loading && !items.data}>
            <option value="">{items.loading ? 'Loading…' : names.length ? 'Choose…' : 'None in this namespace'}</option>
            {name && !names.includes(name) && <option value={name}>{name}</option>}
            {names.map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
        </label>
      </div>
      <ErrorBox error={items.error} />
      {obj.loading && name ? <Loading /> : <ErrorBox error={obj.error} />}
      {obj.data && (
        <div class="card">
          <SubmitForm key={`${kind}/${ns}/${name}`} kind={kind} name={name} namespace={ns} spec={runSpec(kind, obj.data)} />
        </div>
      )}
    </>
  );
}

function FromYaml({ ns }: { ns: string }) {
  return (
    <>
      <div class="filters">
        <NamespaceInput id="submit-yaml-ns" value={ns} onCommit={(v) => setQuery({ ns: v || undefined })} />
      </div>
      <ObjectEditor initial={starter} kind="Workflow" namespace={ns} label="Workflow YAML" saveLabel="Create"
        save={(wf) => post<Workflow>(`api/v1/workflows/${seg(nsOf(wf, ns))}`, { namespace: nsOf(wf, ns), workflow: wf })}
        onSaved={(wf: Workflow) => navigate(`/workflows/${seg(wf.metadata.namespace ?? ns)}/${seg(wf.metadata.name ?? '')}`)} />
    </>
  );
}
