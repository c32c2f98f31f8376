// ArtifactList: a node's input and output artifacts, each with where it is
// kept, a download link and a preview on demand. The files come from
// braid's artifact routes (ARGO-API §2.4): artifacts/ and input-artifacts/
// by workflow name (braid falls back to the archive when the workflow is
// gone), *-by-uid/ for an archived workflow, and artifact-files/ for a file
// inside a directory saved without an archive (braid serves a directory
// as a tar, not an HTML listing).
import { useState } from 'preact/hooks';
import { seg } from '../lib/api';
import { useRoute } from '../lib/router';
import type { Artifact, NodeStatus, Workflow } from '../lib/types';
import { Preview } from './artifacts-preview';

export interface ArtifactListProps {
  workflow: Workflow;
  node: NodeStatus;
  /** the workflow is read from the archive (default: the page is an archived workflow's) */
  archived?: boolean;
}

type Side = 'inputs' | 'outputs';

/** where says where an artifact is kept, in a line; '' when it has no location. */
export function where(a: Artifact): string {
  const x = a as Record<string, any>;
  const bk = (l: { bucket?: string; key?: string }) => (l.bucket ? `${l.bucket}/` : '') + (l.key ?? '');
  if (x.s3) return `s3://${bk(x.s3)}`;
  if (x.file) return `local repository: ${x.file.key ?? ''}`;
  if (x.gcs) return `gs://${bk(x.gcs)}`;
  if (x.oss) return `oss://${bk(x.oss)}`;
  if (x.azure) return `azure: ${x.azure.container ? x.azure.container + '/' : ''}${x.azure.blob ?? ''}`;
  if (x.hdfs) return `hdfs: ${x.hdfs.path ?? ''}`;
  if (x.http) return `http: ${x.http.url ?? ''}`;
  if (x.artifactory) return `artifactory: ${x.artifactory.url ?? ''}`;
  if (x.git) return `git: ${x.git.repo ?? ''}${x.git.revision ? ` @ ${x.git.revision}` : ''}`;
  if (x.raw) return `raw (inline, ${(x.raw.data ?? '').length} characters)`;
  if (x.plugin) return `plugin ${x.plugin.name ?? ''}: ${x.plugin.key ?? ''}`;
  return '';
}

/** packing says how the artifact was saved: a tgz unless archive.none (or another archive) says otherwise. */
function packing(a: Artifact): string {
  const key = String((a as any).s3?.key ?? (a as any).file?.key ?? (a as any).gcs?.key ?? (a as any).oss?.key ?? '');
  if (a.archive?.none) return 'not archived';
  if (a.archive?.zip) return 'zip';
  if (/\.(tgz|tar\.gz)$/.test(key)) return 'tar.gz';
  if (a.archive?.tar) return 'tar';
  return '';
}

export function ArtifactList(props: ArtifactListProps) {
  const route = useRoute();
  const archived = props.archived ?? route.path.startsWith('/archived-workflows/');
  const { workflow: wf, node } = props;
  const [open, setOpen] = useState<string | null>(null);
  const ns = wf.metadata.namespace ?? '';
  const name = wf.metadata.name ?? '';
  const uid = wf.metadata.uid ?? '';
  const byUID = archived && !!uid;
  const rows: { side: Side; a: Artifact }[] = [
    ...(node.inputs?.artifacts ?? []).map((a) => ({ side: 'inputs' as Side, a })),
    ...(node.outputs?.artifacts ?? []).map((a) => ({ side: 'outputs' as Side, a })),
  ];
  if (!rows.length) return <p class="hint">No artifacts.</p>;
  const download = (side: Side, a: Artifact) => {
    const route = (side === 'inputs' ? 'input-artifacts' : 'artifacts') + (byUID ? '-by-uid' : '');
    return byUID ? `${route}/${seg(uid)}/${seg(node.id)}/${seg(a.name)}` : `${route}/${seg(ns)}/${seg(name)}/${seg(node.id)}/${seg(a.name)}`;
  };
  const files = (side: Side, a: Artifact) => (path: string) =>
    `artifact-files/${seg(ns)}/${byUID ? 'archived-workflows' : 'workflows'}/${seg(byUID ? uid : name)}/${seg(node.id)}/${side}/${seg(a.name)}/` +
    path.split('/').filter(Boolean).map(seg).join('/');
  return (
    <section class="art-list" aria-label={`Artifacts of ${node.displayName || node.name}`}>
      <ul>
        {rows.map(({ side, a }) => {
          const id = `${side}/${a.name}`;
          const loc = where(a);
          const pack = packing(a);
          const url = download(side, a);
          return (
            <li key={id} class="art-item">
              <div class="art-head">
                <span class="art-name">{a.name}</span>
                <span class="art-kind">{side === 'inputs' ? 'input' : 'output'}</span>
                {pack && <span class="art-kind">{pack}</span>}
                {loc && (
                  <span class="art-actions">
                    <a class="button art-small" href={url} download="" data-native aria-label={`Download ${a.name}`}>Download</a>
                    <button type="button" class="art-small" aria-expanded={open === id} aria-label={`${open === id ? 'Hide' : 'Preview'} ${a.name}`}
                      onClick={() => setOpen(open === id ? null : id)}>{open === id ? 'Hide' : 'Preview'}</button>
                  </span>
                )}
              </div>
              <dl class="art-kv">
                {a.path && <><dt>Path</dt><dd class="art-mono">{a.path}</dd></>}
                <dt>Location</dt><dd class="art-mono">{loc || <span class="hint">none (not saved)</span>}</dd>
              </dl>
              {open === id && (
                <div class="art-preview">
                  <Preview url={url} name={a.name} hint={a.path} browse={a.archive?.none ? files(side, a) : undefined} />
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
