// The summary at the top of the page: phase, times, progress, message,
// labels, where the workflow came from, and its arguments.
import { seg } from '../../lib/api';
import { href } from '../../lib/router';
import type { Workflow } from '../../lib/types';
import { duration, Phase, Time } from '../../lib/ui';
import type { Feed } from './data';

const feedText: Record<Feed, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  polling: 'Live (polling)',
  archived: 'Archived',
  gone: 'Deleted',
};

export function LiveIndicator({ feed }: { feed: Feed }) {
  return <span class={`wf-feed wf-feed-${feed}`} role="status"><span aria-hidden="true" class="wf-feed-dot" /> {feedText[feed]}</span>;
}

/** Progress as "3/5" with a bar. */
function Progress({ p }: { p?: string }) {
  if (!p) return <span>-</span>;
  const [a, b] = p.split('/').map(Number);
  const pct = b > 0 ? Math.min(100, (a / b) * 100) : 0;
  return (
    <span class="wf-progress">
      <span class="wf-progress-bar" aria-hidden="true"><span style={{ width: `${pct}%` }} /></span> {p}
    </span>
  );
}

/** Links to where the workflow came from: its template, cron workflow or original. */
function Origins({ wf }: { wf: Workflow }) {
  const l = wf.metadata.labels ?? {};
  const ns = seg(wf.metadata.namespace ?? '');
  const links: [string, string, string][] = [];
  const wft = l['workflows.argoproj.io/workflow-template'] ?? (!wf.spec.workflowTemplateRef?.clusterScope ? wf.spec.workflowTemplateRef?.name : undefined);
  if (wft) links.push(['Workflow template', wft, `/workflow-templates/${ns}/${seg(wft)}`]);
  const cwft = l['workflows.argoproj.io/cluster-workflow-template'] ?? (wf.spec.workflowTemplateRef?.clusterScope ? wf.spec.workflowTemplateRef.name : undefined);
  if (cwft) links.push(['Cluster workflow template', cwft, `/cluster-workflow-templates/${seg(cwft)}`]);
  const cron = l['workflows.argoproj.io/cron-workflow'];
  if (cron) links.push(['Cron workflow', cron, `/cron-workflows/${ns}/${seg(cron)}`]);
  const from = l['workflows.argoproj.io/resubmitted-from-workflow'];
  if (from) links.push(['Resubmitted from', from, `/workflows/${ns}/${seg(from)}`]);
  return <>{links.map(([k, v, p]) => [<dt key={k}>{k}</dt>, <dd key={k + 'v'}><a href={href(p)}>{v}</a></dd>])}</>;
}

export function Summary({ wf, now }: { wf: Workflow; now: number }) {
  const st = wf.status ?? {};
  const labels = Object.entries(wf.metadata.labels ?? {});
  const params = wf.spec.arguments?.parameters ?? [];
  const title = wf.metadata.annotations?.['workflows.argoproj.io/title'];
  const desc = wf.metadata.annotations?.['workflows.argoproj.io/description'];
  return (
    <div class="card wf-summary">
      {(title || desc) && <div class="wf-title">{title && <strong>{title}</strong>} {desc && <span class="hint">{desc}</span>}</div>}
      <dl class="kv wf-kv">
        <dt>Phase</dt><dd><Phase phase={st.phase} /></dd>
        <dt>Namespace</dt><dd><a href={href(`/workflows/${seg(wf.metadata.namespace ?? '')}`)}>{wf.metadata.namespace}</a></dd>
        <dt>Started</dt><dd><Time t={st.startedAt} /></dd>
        <dt>Finished</dt><dd><Time t={st.finishedAt} /></dd>
        <dt>Duration</dt><dd>{duration(st.startedAt, st.finishedAt, now) || '-'}</dd>
        <dt>Progress</dt><dd><Progress p={st.progress} /></dd>
        <Origins wf={wf} />
        {st.message && <><dt class="wf-wide">Message</dt><dd class="wf-wide wf-message">{st.message}</dd></>}
      </dl>
      {labels.length > 0 && (
        <ul class="wf-labels" aria-label="Labels">
          {labels.map(([k, v]) => <li key={k}><code>{k}={v}</code></li>)}
        </ul>
      )}
      {params.length > 0 && (
        <details class="wf-args" open={params.length <= 6}>
          <summary>Parameters ({params.length})</summary>
          <table class="list">
            <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
            <tbody>{params.map((p) => <tr key={p.name}><td>{p.name}</td><td class="wf-val">{p.value ?? p.default ?? ''}</td></tr>)}</tbody>
          </table>
        </details>
      )}
    </div>
  );
}
