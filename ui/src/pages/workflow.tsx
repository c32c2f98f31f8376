// The details of one workflow, live or archived: its summary and actions,
// and tabs (in the URL: ?tab=) for the graph, the timeline, the YAML, the
// logs and the events; ?node= selects a node, shown in the side panel.
import { useEffect, useState } from 'preact/hooks';
import { LogViewer } from '../components/logs';
import { WorkflowGraph } from '../graph';
import { seg } from '../lib/api';
import { href, setQuery } from '../lib/router';
import { completed } from '../lib/types';
import { ErrorBox, Loading, Page } from '../lib/ui';
import type { PageProps } from '../routes';
import { WorkflowActions, type Target } from './workflow/actions';
import { useTemplateRefs, useWorkflow } from './workflow/data';
import { Events } from './workflow/events';
import { LiveIndicator, Summary } from './workflow/header';
import { NodePanel } from './workflow/nodepanel';
import { Timeline } from './workflow/timeline';
import { YamlView } from './workflow/yaml';

const tabs = [['graph', 'Graph'], ['timeline', 'Timeline'], ['yaml', 'YAML'], ['logs', 'Logs'], ['events', 'Events']] as const;
type Tab = (typeof tabs)[number][0];

/** useNow ticks every second while on, for running durations and bars. */
function useNow(on: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [on]);
  return on ? now : Date.now();
}

export function WorkflowDetails({ params, query }: PageProps) {
  const ns = params.ns;
  const data = useWorkflow(ns, params.name, params.uid);
  const { wf } = data;
  // Archived: by the route, or once the live workflow went and the archive's copy shows.
  const uid = params.uid ?? data.archivedUid;
  const refs = useTemplateRefs(wf);
  const [actionError, setActionError] = useState<Error>();
  const now = useNow(!!wf && !completed(wf.status?.phase));
  const tab: Tab = tabs.some(([k]) => k === query.get('tab')) ? (query.get('tab') as Tab) : 'graph';
  const node = query.get('node') ?? undefined;
  const name = wf?.metadata.name ?? params.name ?? uid ?? '';

  if (!wf) {
    return (
      <Page title={name}>
        {data.error ? <ErrorBox error={data.error} /> : <Loading />}
        {data.feed === 'gone' && <p>This workflow is gone. <a href={href(`/workflows/${seg(ns)}`)}>Back to the workflows of {ns}</a></p>}
      </Page>
    );
  }

  const t: Target = { wf, uid, refresh: data.refresh, onError: setActionError, refs };
  const select = (id: string) => setQuery({ node: id === node ? undefined : id });
  const withPanel = !!node && (tab === 'graph' || tab === 'timeline');
  return (
    <Page title={name} actions={<><LiveIndicator feed={data.feed} /><WorkflowActions {...t} /></>}>
      <ErrorBox error={actionError} />
      {data.error && <ErrorBox error={data.error} />}
      {data.feed === 'gone' && <p class="hint" role="status">This workflow was deleted; what it last showed stays here.</p>}
      {data.archivedUid && <p class="hint" role="status">This workflow was deleted; this is its archived copy.</p>}
      <Summary wf={wf} now={now} />
      <div class="tabs" role="tablist" aria-label="Workflow views">
        {tabs.map(([k, label]) => (
          <button key={k} type="button" role="tab" aria-selected={tab === k}
            onClick={() => setQuery({ tab: k === 'graph' ? undefined : k }, { push: true })}>{label}</button>
        ))}
      </div>
      <div class={`wf-main${withPanel ? ' with-panel' : ''}`}>
        <div class="wf-view" role="tabpanel" aria-label={tabs.find(([k]) => k === tab)![1]}>
          {tab === 'graph' && <WorkflowGraph workflow={wf} selected={node} onSelect={select} templates={refs} />}
          {tab === 'timeline' && <Timeline wf={wf} version={data.version} selected={node} onSelect={select} now={now} />}
          {tab === 'yaml' && <YamlView wf={wf} version={data.version} />}
          {tab === 'logs' && <LogViewer namespace={ns} workflow={wf.metadata.name ?? ''} uid={uid} />}
          {tab === 'events' && (
            <Events namespace={ns} archived={!!uid} fieldSelector={`involvedObject.kind=Workflow,involvedObject.name=${wf.metadata.name}`} />
          )}
        </div>
        {withPanel && <NodePanel t={t} id={node!} tab={query.get('ntab') ?? undefined} now={now} />}
      </div>
    </Page>
  );
}
