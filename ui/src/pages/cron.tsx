// CronWorkflows: the list and one cron workflow (summary, graph of its
// workflowSpec, YAML editor, submit now, suspend and resume, backfill,
// the workflows it created, delete).
import { Fragment } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { del, get, post, put, seg } from '../lib/api';
import { href, navigate, setQuery } from '../lib/router';
import type { CronWorkflow, List, Workflow } from '../lib/types';
import { confirmAction, ErrorBox, Loading, Page, Time, useAsync } from '../lib/ui';
import type { PageProps } from '../routes';
import { TemplateGraph } from '../graph';
import { SubmitForm } from '../components/submitform';
import { ObjectEditor, toYaml } from '../components/yamleditor';
import { keepVersion, Labels, ListFilters, nsOf, TabPanel, Tabs } from './templates';

const base = '/cron-workflows';
const api = (ns: string, name?: string) => `api/v1/cron-workflows/${seg(ns)}${name ? '/' + seg(name) : ''}`;
const schedules = (c: CronWorkflow) => c.spec.schedules?.length ? c.spec.schedules : c.spec.schedule ? [c.spec.schedule] : [];

const starter = `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata:
  name: my-cron
spec:
  schedules: ["*/30 * * * *"]
  timezone: ""
  concurrencyPolicy: Replace
  workflowSpec:
    entrypoint: main
    templates:
      - name: main
        container:
          image: busybox
          command: [date]
`;

export function CronList({ params, query }: PageProps) {
  const ns = params.ns ?? '';
  const q = query.get('q') ?? '';
  const creating = query.get('create') === '1';
  const list = useAsync((s) => get<List<CronWorkflow>>(api(ns), s), [ns]);
  const items = (list.data?.items ?? []).filter((c) => (c.metadata.name ?? '').includes(q))
    .sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  return (
    <Page title="Cron workflows" actions={
      <button type="button" class="primary" aria-expanded={creating} onClick={() => setQuery({ create: creating ? undefined : '1' })}>Create</button>}>
      {creating && (
        <section class="card" aria-label="Create a CronWorkflow">
          <h2 class="card-title">New cron workflow in {ns || 'default'}</h2>
          <ObjectEditor initial={starter} kind="CronWorkflow" namespace={ns || 'default'} label="CronWorkflow YAML" saveLabel="Create" height="45vh"
            save={(c) => post<CronWorkflow>(api(nsOf(c, ns)), { namespace: nsOf(c, ns), cronWorkflow: c })}
            onSaved={(c: CronWorkflow) => navigate(`${base}/${seg(c.metadata.namespace ?? '')}/${seg(c.metadata.name ?? '')}`)}>
            <button type="button" onClick={() => setQuery({ create: undefined })}>Cancel</button>
          </ObjectEditor>
        </section>
      )}
      <ListFilters base={base} ns={ns} q={q} namespaced />
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading /> : (
        <table class="list">
          <thead><tr>
            <th scope="col">Name</th><th scope="col">Namespace</th><th scope="col">Schedules</th><th scope="col">Timezone</th>
            <th scope="col">Suspended</th><th scope="col">Last scheduled</th><th scope="col">Active</th>
          </tr></thead>
          <tbody>
            {items.map((c) => (
              <tr key={`${c.metadata.namespace}/${c.metadata.name}`}>
                <td><a href={href(`${base}/${seg(c.metadata.namespace ?? '')}/${seg(c.metadata.name ?? '')}`)}>{c.metadata.name}</a></td>
                <td><a href={href(`${base}/${seg(c.metadata.namespace ?? '')}`)}>{c.metadata.namespace}</a></td>
                <td>{schedules(c).map((s) => <code key={s} class="chip">{s}</code>)}</td>
                <td>{c.spec.timezone || <span class="hint">local</span>}</td>
                <td>{c.spec.suspend ? <span class="suspended">Suspended</span> : 'No'}</td>
                <td><Time t={c.status?.lastScheduledTime} /></td>
                <td>{c.status?.active?.length ?? 0}</td>
              </tr>
            ))}
            {!items.length && <tr><td colSpan={7} class="hint">No cron workflows{q ? ` matching “${q}”` : ''}{ns ? ` in ${ns}` : ''}.</td></tr>}
          </tbody>
        </table>
      )}
    </Page>
  );
}

const tabs: [string, string][] = [['graph', 'Graph'], ['yaml', 'YAML'], ['submit', 'Submit'], ['backfill', 'Backfill']];

/** The editable YAML: the object without its status, which the controller owns (an update keeps it). */
function editable(c: CronWorkflow): string {
  const { status: _, ...rest } = c;
  return toYaml(rest);
}

export function CronDetails({ params, query }: PageProps) {
  const { ns, name } = params;
  const c = useAsync((s) => get<CronWorkflow>(api(ns, name), s), [ns, name]);
  const tab = tabs.some(([id]) => id === query.get('tab')) ? query.get('tab')! : 'graph';
  const yaml = useMemo(() => (c.data ? editable(c.data) : ''), [c.data]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const act = async (f: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try { await f(); } catch (e) { setError(e as Error); } finally { setBusy(false); }
  };
  const runNow = () => act(async () => {
    const wf = await post<Workflow>(`api/v1/workflows/${seg(ns)}/submit`, { namespace: ns, resourceKind: 'CronWorkflow', resourceName: name });
    navigate(`/workflows/${seg(wf.metadata.namespace ?? ns)}/${seg(wf.metadata.name ?? '')}`);
  });
  const suspend = (on: boolean) => act(async () => {
    c.set(await put<CronWorkflow>(`${api(ns, name)}/${on ? 'suspend' : 'resume'}`, { namespace: ns, name }));
  });
  const remove = () => act(async () => {
    if (!confirmAction(`Delete CronWorkflow ${name}`)) return;
    await del(api(ns, name));
    navigate(`${base}/${seg(ns)}`);
  });
  const cw = c.data;
  return (
    <Page title={name} actions={cw && <>
      <button type="button" disabled={busy} onClick={runNow}>Submit now</button>
      {cw.spec.suspend
        ? <button type="button" disabled={busy} onClick={() => suspend(false)}>Resume</button>
        : <button type="button" disabled={busy} onClick={() => suspend(true)}>Suspend</button>}
      <button type="button" class="danger" disabled={busy} onClick={remove}>Delete</button>
    </>}>
      <p class="crumbs"><a href={href(base)}>Cron workflows</a> / <a href={href(`${base}/${seg(ns)}`)}>{ns}</a> / {name}</p>
      <ErrorBox error={c.error ?? error} />
      {c.loading && !cw && <Loading />}
      {cw && <>
        <Summary cw={cw} />
        <Tabs tabs={tabs} current={tab} label="Cron workflow views" />
        <TabPanel current={tab}>
          {tab === 'graph' && <TemplateGraph spec={cw.spec.workflowSpec ?? {}} name={name} />}
          {tab === 'yaml' && (
            <ObjectEditor initial={yaml} kind="CronWorkflow" namespace={ns} label={`CronWorkflow ${name} YAML`} saveLabel="Update"
              save={(o) => put<CronWorkflow>(api(ns, name), { namespace: ns, name, cronWorkflow: keepVersion(o, cw) })}
              onSaved={(o: CronWorkflow) => c.set(o)} />
          )}
          {tab === 'submit' && <div class="card">
            <SubmitForm key={cw.metadata.resourceVersion} kind="CronWorkflow" name={name} namespace={ns} spec={cw.spec.workflowSpec ?? {}} />
          </div>}
          {tab === 'backfill' && <Backfill cw={cw} />}
        </TabPanel>
      </>}
    </Page>
  );
}

function Summary({ cw }: { cw: CronWorkflow }) {
  const { ns, name } = { ns: cw.metadata.namespace ?? '', name: cw.metadata.name ?? '' };
  const s = cw.spec;
  const st = cw.status ?? {};
  const active = (st.active ?? []) as { name?: string; namespace?: string }[];
  return (
    <dl class="kv card">
      <dt>Schedules</dt><dd>{schedules(cw).map((x) => <code key={x} class="chip">{x}</code>)}</dd>
      <dt>Timezone</dt><dd>{s.timezone || 'the server’s local time'}</dd>
      <dt>Suspended</dt><dd>{s.suspend ? <span class="suspended">Suspended</span> : 'No'}</dd>
      <dt>Concurrency policy</dt><dd>{s.concurrencyPolicy ?? 'Allow'}</dd>
      {s.startingDeadlineSeconds !== undefined && <><dt>Starting deadline</dt><dd>{String(s.startingDeadlineSeconds)}s</dd></>}
      <dt>Last scheduled</dt><dd><Time t={st.lastScheduledTime} /></dd>
      <dt>Active</dt><dd>{active.length ? active.map((a) => (
        <a key={a.name} class="chip" href={href(`/workflows/${seg(a.namespace ?? ns)}/${seg(a.name ?? '')}`)}>{a.name}</a>)) : 'None'}</dd>
      <dt>Runs</dt><dd>{st.succeeded ?? 0} succeeded, {st.failed ?? 0} failed{st.phase ? ` (phase ${st.phase})` : ''}</dd>
      <dt>Labels</dt><dd><Labels labels={cw.metadata.labels} /></dd>
      <dt>Workflows</dt><dd><a href={href(`/workflows/${seg(ns)}`, { cron: name })}>Workflows it created</a></dd>
      {(st.conditions as { type?: string; message?: string }[] | undefined)?.map((x, i) => (
        <Fragment key={i}><dt>{x.type}</dt><dd>{x.message}</dd></Fragment>))}
    </dl>
  );
}

/** The answer of BackfillCronWorkflow (braid's own call); empty lists may be left out. */
interface BackfillResult { scheduledTimes?: string[]; created?: string[]; skipped?: string[] }

/** The most rows a result table shows; a backfill may have up to 10,000 times. */
const backfillRows = 500;
const rfc1123 = 'Mon, 02 Jan 2006 15:04:05 MST';

/**
 * Backfill: the server's backfill call (POST …/backfill) previews the times
 * the schedules fire in a range (dryRun) or creates one workflow per time,
 * all at once. The CLI's one-at-a-time mode, which waits for each workflow
 * to finish before creating the next, runs only from the command line, so
 * the tab also builds that command from the same fields.
 */
function Backfill({ cw }: { cw: CronWorkflow }) {
  const name = cw.metadata.name ?? '';
  const ns = cw.metadata.namespace ?? 'default';
  const [f, setF] = useState({ start: '', end: '', argName: 'cronScheduleTime', format: rfc1123, backfillName: '', max: '1000' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  // The answer, with the fields it was asked with (a preview's count is
  // only offered for the same fields).
  const [result, setResult] = useState<{ dryRun: boolean; asked: string; prefix: string; r: BackfillResult } | null>(null);
  const set = (k: keyof typeof f) => (e: { currentTarget: HTMLInputElement }) => {
    const v = e.currentTarget.value;
    setF((old) => ({ ...old, [k]: v }));
  };
  const prefix = f.backfillName.trim() || `${name}-backfill`;
  const run = async (dryRun: boolean) => {
    if (!f.start.trim()) { setError(new Error('Start is required')); return; }
    const asked = JSON.stringify(f);
    const count = result?.dryRun && result.asked === asked ? result.r.scheduledTimes?.length : undefined;
    const what = count === undefined ? 'a workflow for each scheduled time in the range' : `${count} workflow${count === 1 ? '' : 's'}`;
    if (!dryRun && !confirmAction(`Create ${what} of ${name}`)) return;
    setBusy(true);
    setError(null);
    try {
      const r = await post<BackfillResult>(`${api(ns, name)}/backfill`, {
        namespace: ns, name, start: f.start.trim(), end: f.end.trim(), argName: f.argName.trim(), format: f.format,
        backfillName: f.backfillName.trim(), maxWorkflowCount: Number(f.max) || 0, dryRun,
      });
      setResult({ dryRun, asked, prefix, r });
    } catch (e) {
      setError(e as Error);
      setResult(null);
    } finally {
      setBusy(false);
    }
  };
  const quote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  const flag = (k: string, v: string, dflt: string) => (v.trim() === dflt ? [] : [k, quote(v.trim())]);
  const cmd = ['braid cron backfill', quote(name), '-n', quote(ns), '--start', quote(f.start.trim() || 'START'),
    ...flag('--end', f.end, ''), ...flag('--argname', f.argName, 'cronScheduleTime'), ...flag('--format', f.format, rfc1123),
    ...flag('--name', f.backfillName, ''), ...flag('--maxworkflowcount', f.max, '1000')].join(' ');
  const field = (id: string, label: string, k: keyof typeof f, placeholder: string, extra: Record<string, unknown> = {}) => (
    <label for={`bf-${id}`}>{label}<input id={`bf-${id}`} value={f[k]} onInput={set(k)} placeholder={placeholder} {...extra} /></label>
  );
  return (
    <div class="card backfill">
      <p>Create one workflow for each time the schedules fire between start and end, both included. Each is named{' '}
        <code>{prefix}-&lt;unix seconds&gt;</code>, labelled <code>braid.dev/cron-backfill={name}</code> (not the cron
        workflow’s own label, so its history and “Workflows it created” leave them out), and a workflow whose name exists is
        skipped, so running a backfill again resumes it. Times without a zone are read in {cw.spec.timezone || 'the server’s local time'}.</p>
      <form class="filters" aria-label="Backfill range" onSubmit={(e) => { e.preventDefault(); run(true); }}>
        {field('start', 'Start (RFC 3339 or 2006-01-02 15:04)', 'start', '2026-05-01', { required: true })}
        {field('end', 'End (default now)', 'end', 'now')}
        {field('arg', 'Parameter (empty for none)', 'argName', '')}
        {field('format', 'Parameter format (Go layout)', 'format', rfc1123)}
        {field('name', 'Backfill name', 'backfillName', `${name}-backfill`)}
        {field('max', 'Max workflows', 'max', '1000', { type: 'number', min: 1, max: 10000 })}
        <div class="actions">
          <button type="submit" disabled={busy}>Preview times</button>
          <button type="button" class="primary" disabled={busy} onClick={() => run(false)}>Create workflows</button>
        </div>
      </form>
      {busy && <p class="hint" aria-live="polite">Working…</p>}
      <ErrorBox error={error} />
      {result && <BackfillOutcome ns={ns} cron={name} prefix={result.prefix} dryRun={result.dryRun} r={result.r} />}
      <label for="bf-cmd" class="hint">One at a time, each after the one before has finished (stopping at the first that fails), from the command line:</label>
      <input id="bf-cmd" class="cmd" readOnly value={cmd} onFocus={(e) => e.currentTarget.select()} />
    </div>
  );
}

/** What a preview or a backfill answered: the times, or the workflows created and skipped. */
function BackfillOutcome({ ns, cron, prefix, dryRun, r }: { ns: string; cron: string; prefix: string; dryRun: boolean; r: BackfillResult }) {
  const times = r.scheduledTimes ?? [];
  const link = (n: string) => <a href={href(`/workflows/${seg(ns)}/${seg(n)}`)}>{n}</a>;
  const more = (n: number) => (n > backfillRows ? <p class="hint">… and {n - backfillRows} more.</p> : null);
  if (dryRun) {
    return (
      <section aria-label="Backfill preview">
        <h2 class="card-title">{times.length} scheduled time{times.length === 1 ? '' : 's'} (nothing created yet)</h2>
        <table class="list">
          <thead><tr><th scope="col">Scheduled time</th><th scope="col">Workflow</th></tr></thead>
          <tbody>{times.slice(0, backfillRows).map((t) => (
            <tr key={t}><td><code>{t}</code></td><td>{prefix}-{Math.floor(Date.parse(t) / 1000)}</td></tr>))}</tbody>
        </table>
        {more(times.length)}
      </section>
    );
  }
  // Names end in the Unix time of their scheduled time: list them in time order, with the time.
  const unix = (n: string) => Number(n.slice(n.lastIndexOf('-') + 1));
  const at = new Map(times.map((t) => [Math.floor(Date.parse(t) / 1000), t]));
  const rows = [...(r.created ?? []).map((n) => [n, 'Created']), ...(r.skipped ?? []).map((n) => [n, 'Already existed: skipped'])]
    .sort((a, b) => unix(a[0]) - unix(b[0]));
  return (
    <section aria-label="Backfill result">
      <div role="status"><h2 class="card-title">{r.created?.length ?? 0} created, {r.skipped?.length ?? 0} skipped, of {times.length} scheduled time{times.length === 1 ? '' : 's'}</h2></div>
      <table class="list">
        <thead><tr><th scope="col">Scheduled time</th><th scope="col">Workflow</th><th scope="col">Result</th></tr></thead>
        <tbody>{rows.slice(0, backfillRows).map(([n, what]) => (
          <tr key={n}><td><code>{at.get(unix(n)) ?? ''}</code></td><td>{link(n)}</td><td>{what}</td></tr>))}</tbody>
      </table>
      {more(rows.length)}
      <p><a href={href(`/workflows/${seg(ns)}`, { label: `braid.dev/cron-backfill=${cron}` })}>Every backfilled workflow of {cron}</a></p>
    </section>
  );
}
