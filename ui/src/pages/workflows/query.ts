// The list's filters as the URL keeps them, and the API requests they
// make: the page (api/v1/workflows/<ns>, or the archive), the watch
// (api/v1/workflow-events/<ns>) and the phase counts.
import { qs, seg } from '../../lib/api';
import type { Workflow } from '../../lib/types';

export const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Error'] as const;
export const NAME_MODES = ['Contains', 'Prefix', 'Exact', 'NotEquals'] as const;
export type NameMode = (typeof NAME_MODES)[number];
export const PAGE_SIZES = [20, 50, 100, 500];
const DEFAULT_LIMIT = 50;

export const LABEL_PHASE = 'workflows.argoproj.io/phase';
export const LABEL_TEMPLATE = 'workflows.argoproj.io/workflow-template';
export const LABEL_CRON = 'workflows.argoproj.io/cron-workflow';

/** Filters is everything the URL says about the list. */
export interface Filters {
  ns: string; // '' = all namespaces
  name: string;
  nameMode: NameMode;
  phases: string[];
  labels: string; // a label selector as the user typed it
  template: string;
  cron: string;
  createdAfter: string; // RFC 3339
  finishedBefore: string; // RFC 3339
  limit: number;
  pages: string[]; // the continue tokens that led to this page; last = current
  archived: boolean; // list the archive instead of live workflows
}

// The URL keys; paging keys are dropped whenever a filter changes.
export const Q = {
  name: 'name', nameMode: 'nameFilter', phase: 'phase', label: 'label', template: 'template', cron: 'cron',
  createdAfter: 'createdAfter', finishedBefore: 'finishedBefore', limit: 'limit', pages: 'pages', archived: 'archived',
} as const;

export function readFilters(ns: string | undefined, q: URLSearchParams): Filters {
  const mode = q.get(Q.nameMode) as NameMode;
  const limit = Number(q.get(Q.limit));
  return {
    ns: ns ?? '',
    name: q.get(Q.name) ?? '',
    nameMode: NAME_MODES.includes(mode) ? mode : 'Contains',
    phases: (q.get(Q.phase) ?? '').split(',').filter((p) => (PHASES as readonly string[]).includes(p)),
    labels: q.get(Q.label) ?? '',
    template: q.get(Q.template) ?? '',
    cron: q.get(Q.cron) ?? '',
    createdAfter: q.get(Q.createdAfter) ?? '',
    finishedBefore: q.get(Q.finishedBefore) ?? '',
    limit: limit > 0 ? Math.min(limit, 10_000) : DEFAULT_LIMIT,
    // Continue tokens are base64url (live) or decimal offsets (archive): never a '.'.
    pages: (q.get(Q.pages) ?? '').split('.').filter(Boolean),
    archived: q.get(Q.archived) === '1',
  };
}

/** A field selector value may not hold ',', '=' or '\' unescaped; names never do. */
const selectorValue = (s: string) => s.trim().replace(/[,=\\\s]/g, '');

/** labelSelector joins the label filters; withPhases=false leaves the phases out (for counts). */
export function labelSelector(f: Filters, withPhases = true): string {
  const parts: string[] = [];
  if (f.labels.trim()) parts.push(f.labels.trim().replace(/,\s*$/, ''));
  if (f.template.trim()) parts.push(`${LABEL_TEMPLATE}=${selectorValue(f.template)}`);
  if (f.cron.trim()) parts.push(`${LABEL_CRON}=${selectorValue(f.cron)}`);
  if (withPhases && f.phases.length) parts.push(`${LABEL_PHASE} in (${f.phases.join(',')})`);
  return parts.join(',');
}

// What a row shows: asked for with `fields`, so that a page of a large
// list is small. resourceVersion orders the watch's events.
const ROW_FIELDS = [
  'metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.creationTimestamp', 'metadata.labels',
  'metadata.resourceVersion', 'status.phase', 'status.startedAt', 'status.finishedAt', 'status.progress',
  'status.message', 'spec.suspend',
];
export const LIST_FIELDS = ['metadata', ...ROW_FIELDS.map((p) => 'items.' + p)].join(',');
export const WATCH_FIELDS = ['result.type', ...ROW_FIELDS.map((p) => 'result.object.' + p)].join(',');

const nameSelector = (f: Filters) => (selectorValue(f.name) ? `metadata.name=${selectorValue(f.name)}` : '');

/** listPath is the request of one page (or of counts: withPhases false, a given limit). */
export function listPath(f: Filters, opts: { cont?: string; limit?: number; withPhases?: boolean; fields?: string } = {}): string {
  const withPhases = opts.withPhases ?? true;
  const name = nameSelector(f);
  const limit = opts.limit ?? f.limit;
  if (f.archived) {
    // The archive takes the namespace as a parameter, and createdAfter as a field selector.
    const fs = [name, f.createdAfter && `spec.startedAt>${f.createdAfter}`, 'ext.showRemainingItemCount=true'].filter(Boolean);
    return 'api/v1/archived-workflows' + qs({
      namespace: f.ns,
      nameFilter: name ? f.nameMode : undefined,
      'listOptions.labelSelector': labelSelector(f, withPhases),
      'listOptions.fieldSelector': fs.join(','),
      'listOptions.limit': limit,
      'listOptions.continue': opts.cont,
    });
  }
  return `api/v1/workflows/${seg(f.ns)}` + qs({
    'listOptions.labelSelector': labelSelector(f, withPhases),
    // ext.showRemainingItemCount asks for metadata.remainingItemCount (argo-server gives it).
    'listOptions.fieldSelector': [name, 'ext.showRemainingItemCount=true'].filter(Boolean).join(','),
    nameFilter: name ? f.nameMode : undefined,
    createdAfter: f.createdAfter,
    finishedBefore: f.finishedBefore,
    'listOptions.limit': limit,
    'listOptions.continue': opts.cont,
    fields: opts.fields ?? LIST_FIELDS,
  });
}

/**
 * watchPath streams changes from now on. The name, date filters are not
 * sent (a watch by name answers 404 while none exists): matches() applies
 * them to each event. A resourceVersion other than "0" skips the ADDED
 * event per existing workflow that a watch from "0" begins with.
 */
export function watchPath(f: Filters, resourceVersion?: string): string {
  return `api/v1/workflow-events/${seg(f.ns)}` + qs({
    'listOptions.labelSelector': labelSelector(f),
    'listOptions.resourceVersion': resourceVersion || 'now',
    fields: WATCH_FIELDS,
  });
}

/** matches applies the filters the watch does not to a workflow. */
export function matches(f: Filters, wf: Workflow): boolean {
  const n = wf.metadata.name ?? '';
  const want = selectorValue(f.name);
  if (want) {
    const ok = f.nameMode === 'Exact' ? n === want : f.nameMode === 'NotEquals' ? n !== want
      : f.nameMode === 'Prefix' ? n.startsWith(want) : n.includes(want);
    if (!ok) return false;
  }
  const created = Date.parse(wf.metadata.creationTimestamp ?? '');
  if (f.createdAfter && !(created > Date.parse(f.createdAfter))) return false;
  const fin = wf.status?.finishedAt;
  if (f.finishedBefore && !(fin && Date.parse(fin) < Date.parse(f.finishedBefore))) return false;
  return true;
}

/** rowKey tells rows apart: the uid, else namespace/name. */
export const rowKey = (wf: Workflow) => wf.metadata.uid || `${wf.metadata.namespace}/${wf.metadata.name}`;

/** detailHref is where a row links: the live workflow, or its archived copy. */
export function detailPath(wf: Workflow, archived: boolean): string {
  const m = wf.metadata;
  return archived && m.uid
    ? `/archived-workflows/${seg(m.namespace ?? '')}/${seg(m.uid)}`
    : `/workflows/${seg(m.namespace ?? '')}/${seg(m.name ?? '')}`;
}

/** toLocalInput turns RFC 3339 into a datetime-local input's value. */
export function toLocalInput(rfc: string): string {
  const t = Date.parse(rfc);
  if (!rfc || isNaN(t)) return '';
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** fromLocalInput turns a datetime-local value into RFC 3339 (UTC, seconds). */
export function fromLocalInput(v: string): string {
  const t = new Date(v);
  return v && !isNaN(t.getTime()) ? t.toISOString().replace(/\.\d{3}Z$/, 'Z') : '';
}
