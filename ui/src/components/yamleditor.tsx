// A YAML editor: a plain <textarea> with a line-number gutter, linted as
// one types. YAML syntax errors come from the `yaml` package; the rest from
// the server's lint call of the object's kind, whose messages name a field
// path ("Workflow x-: spec.templates[0].dag.tasks[1].template: ..."), which
// is found in the document's nodes to put the message at its line.
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, stringify, type Document, type YAMLError } from 'yaml';
import { ApiError, request, seg } from '../lib/api';
import { ErrorBox } from '../lib/ui';

export type LintKind = 'Workflow' | 'WorkflowTemplate' | 'ClusterWorkflowTemplate' | 'CronWorkflow' | 'WorkflowEventBinding';

export interface Problem {
  line: number;
  message: string;
  source: 'yaml' | 'server';
  /** false when the message names no field that was found: it shows at line 1. */
  mapped: boolean;
  warning?: boolean;
}

/** The line height and top padding of the textarea (editor.css must agree). */
const LH = 20;
const PAD = 6;
const DEBOUNCE = 400;

/** lintCall is the server call that checks an object of a kind. */
export function lintCall(kind: LintKind, ns: string, obj: unknown): [string, unknown] {
  // The object's own namespace wins, as create and update will use it.
  ns = (obj as { metadata?: { namespace?: string } })?.metadata?.namespace || ns || 'default';
  const n = seg(ns);
  switch (kind) {
    case 'Workflow': return [`api/v1/workflows/${n}/lint`, { namespace: ns, workflow: obj }];
    case 'WorkflowTemplate': return [`api/v1/workflow-templates/${n}/lint`, { namespace: ns, template: obj }];
    case 'ClusterWorkflowTemplate': return ['api/v1/cluster-workflow-templates/lint', { template: obj }];
    case 'CronWorkflow': return [`api/v1/cron-workflows/${n}/lint`, { namespace: ns, cronWorkflow: obj }];
    // Bindings have no lint call: a dry-run create validates as create does.
    case 'WorkflowEventBinding':
      return [`api/v1/workflow-event-bindings/${n}`, { namespace: ns, workflowEventBinding: obj, createOptions: { dryRun: ['All'] } }];
  }
}

/** parseYaml reads the first document; error is its first syntax error. */
export function parseYaml<T = any>(text: string): { value?: T; error?: string } {
  const doc = parseDocument(text, { lineCounter: new LineCounter() });
  if (doc.errors.length) {
    const e = doc.errors[0];
    return { error: `line ${e.linePos?.[0].line ?? '?'}: ${e.message.split('\n')[0]}` };
  }
  try {
    return { value: doc.toJS({ maxAliasCount: 100 }) as T };
  } catch (e) {
    return { error: String((e as Error).message ?? e) };
  }
}

/** toYaml writes an object as YAML (no line folding, so lines stay as typed). */
export const toYaml = (obj: unknown) => stringify(obj, { lineWidth: 0, aliasDuplicateObjects: false });

// ---- where a server message points -------------------------------------

const PATH = String.raw`[A-Za-z_$][\w$-]*(?:\.[\w$-]+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*`;
const KIND_PREFIX = /^(?:warning: )?(?:Workflow|WorkflowTemplate|ClusterWorkflowTemplate|CronWorkflow|WorkflowEventBinding)(?: [^\s:]*)?: /;
const LEAD_PATH = new RegExp(`^(${PATH}): `);
// "metadata.name or metadata.generateName is required": a path then a space.
const BARE_PATH = new RegExp(`^((?:spec|metadata)(?:\\.[\\w$-]+|\\[\\d+\\])+) `);
const INVALID_PATH = new RegExp(`is invalid: (${PATH}): `);
const GO_FIELD = new RegExp(`Go struct field \\w+\\.(${PATH}) of type`);
const BODY_KEYS = new Set(['workflow', 'template', 'cronWorkflow', 'workflowEventBinding']);

/** splitPath splits `a.b[2]["x.y"]` into a, b, 2, x.y (as braid's spec package does). */
export function splitPath(path: string): string[] {
  const out: string[] = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.[\]]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path))) {
    if (m[1] !== undefined) out.push(JSON.parse(`"${m[1]}"`));
    else out.push(m[2] ?? m[3]);
  }
  return out;
}

const keyOf = (k: unknown) => (isScalar(k) ? String(k.value) : String(k));
const startOf = (n: unknown): number | undefined => (n as { range?: [number, number, number] } | null)?.range?.[0];

/**
 * walk follows segs from node; at is the offset to report for node (the
 * key's, for a map value). It is lenient, so that Argo's short paths
 * ("templates.main.tasks.b") and Go's index-less ones ("spec.templates.
 * container.image") are found too: a name may stand for a list index, and
 * spec, workflowSpec and dag may be left out.
 */
function walk(node: unknown, segs: string[], i: number, at: number, budget: { n: number }): number | null {
  if (i === segs.length) return at;
  if (--budget.n < 0) return null;
  const s = segs[i];
  if (isMap(node)) {
    const pair = node.items.find((p) => keyOf(p.key) === s);
    if (pair) return walk(pair.value, segs, i + 1, startOf(pair.key) ?? at, budget);
    for (const k of ['spec', 'workflowSpec', 'dag']) {
      const p = node.items.find((q) => keyOf(q.key) === k);
      const r = p && walk(p.value, segs, i, startOf(p.key) ?? at, budget);
      if (r != null) return r;
    }
    return null;
  }
  if (isSeq(node)) {
    if (/^\d+$/.test(s)) {
      const it = node.items[+s];
      return it === undefined ? null : walk(it, segs, i + 1, startOf(it) ?? at, budget);
    }
    const named = (it: unknown) => isMap(it) && String(it.get('name')) === s;
    for (const it of node.items) {
      if (named(it)) return walk(it, segs, i + 1, startOf(it) ?? at, budget);
      if (isSeq(it)) { // steps: a list of lists
        const inner = it.items.find(named);
        if (inner) return walk(inner, segs, i + 1, startOf(inner) ?? at, budget);
      }
    }
    for (const it of node.items) {
      const r = walk(it, segs, i, startOf(it) ?? at, budget);
      if (r != null) return r;
    }
  }
  return null;
}

/** locate is the offset of the field a path names, or of its nearest found parent. */
function locate(doc: Document, path: string): { offset: number; exact: boolean } | null {
  const segs = splitPath(path);
  if (segs.length && BODY_KEYS.has(segs[0]) && !isMapWith(doc.contents, segs[0])) segs.shift();
  for (let n = segs.length; n > 0; n--) {
    const off = walk(doc.contents, segs.slice(0, n), 0, 0, { n: 20000 });
    if (off != null) return { offset: off, exact: n === segs.length };
  }
  return null;
}

const isMapWith = (n: unknown, k: string) => isMap(n) && n.items.some((p) => keyOf(p.key) === k);

/** findKey is the first key named k anywhere (for "unknown field" messages, which name no path). */
function findKey(node: unknown, k: string): number | null {
  if (isMap(node)) {
    for (const p of node.items) {
      if (keyOf(p.key) === k) return startOf(p.key) ?? null;
      const r = findKey(p.value, k);
      if (r != null) return r;
    }
  } else if (isSeq(node)) {
    for (const it of node.items) {
      const r = findKey(it, k);
      if (r != null) return r;
    }
  }
  return null;
}

/** placeMessage finds the line of one line of a server message. */
export function placeMessage(doc: Document, lc: LineCounter, msg: string): Problem {
  const warning = msg.startsWith('warning: ');
  const rest = msg.replace(KIND_PREFIX, '');
  let off: number | null = null;
  let exact = false;
  const unknown = /unknown field "([^"]+)"/.exec(rest)?.[1];
  const path = LEAD_PATH.exec(rest)?.[1] ?? INVALID_PATH.exec(rest)?.[1] ?? GO_FIELD.exec(rest)?.[1] ?? BARE_PATH.exec(rest)?.[1]
    ?? (/namespace of the \w+ \(/.test(rest) ? 'metadata.namespace' : /name of the \w+ \(/.test(rest) ? 'metadata.name' : undefined);
  if (unknown != null) {
    // "workflow: unknown field "foo"" names no path: the first such key is the best guess.
    off = findKey(doc.contents, unknown);
    exact = off != null;
  } else if (path) {
    const r = locate(doc, path);
    if (r) ({ offset: off, exact } = r);
  }
  const line = off == null ? 1 : Math.max(1, lc.linePos(off).line);
  return { line, message: exact || off == null ? rest : `${rest} (near)`, source: 'server', mapped: off != null, warning };
}

function yamlProblem(e: YAMLError, lc: LineCounter, warning: boolean): Problem {
  return {
    line: e.linePos?.[0].line ?? lc.linePos(e.pos[0]).line ?? 1,
    message: e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''),
    source: 'yaml', mapped: true, warning,
  };
}

/** checkYaml parses text and, when it parses, has the server lint it. */
async function checkYaml(text: string, kind: LintKind | undefined, ns: string, signal: AbortSignal):
  Promise<{ problems: Problem[]; value?: unknown; unavailable?: string }> {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  // After the first syntax error the parser's others are mostly its
  // consequences: show the first, and how many follow.
  const first = doc.errors.slice(0, 1).map((e) => yamlProblem(e, lc, false));
  if (doc.errors.length > 1) first[0].message += ` (and ${doc.errors.length - 1} more error${doc.errors.length > 2 ? 's' : ''} after it)`;
  const syntax: Problem[] = [...first, ...doc.warnings.map((w) => yamlProblem(w, lc, true))];
  if (doc.errors.length) return { problems: syntax };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { problems: [...syntax, { line: 1, message: String((e as Error).message), source: 'yaml', mapped: false }] };
  }
  if (!kind) return { problems: syntax, value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { problems: [...syntax, { line: 1, message: `a ${kind} must be a mapping`, source: 'yaml', mapped: false }], value };
  }
  const [path, body] = lintCall(kind, ns, value);
  try {
    await request('POST', path, body, signal);
    return { problems: syntax, value };
  } catch (e) {
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401) {
      const lines = e.message.split('\n').filter((l) => l.trim());
      return { problems: [...syntax, ...lines.map((l) => placeMessage(doc, lc, l))], value };
    }
    if (signal.aborted) throw e;
    return { problems: syntax, value, unavailable: (e as Error).message };
  }
}

// ---- editing keys ---------------------------------------------------------

/** insert replaces the selection with s, through the browser's undo stack when it can. */
function insert(ta: HTMLTextAreaElement, s: string, onChange: (t: string) => void) {
  if (!document.execCommand('insertText', false, s)) {
    ta.setRangeText(s, ta.selectionStart, ta.selectionEnd, 'end');
    onChange(ta.value);
  }
}

/** shiftLines indents (by two spaces) or dedents the lines the selection touches. */
function shiftLines(ta: HTMLTextAreaElement, out: boolean, onChange: (t: string) => void) {
  const v = ta.value;
  const a = v.lastIndexOf('\n', ta.selectionStart - 1) + 1;
  let b = v.indexOf('\n', Math.max(ta.selectionEnd - 1, a));
  if (b < 0) b = v.length;
  const lines = v.slice(a, b).split('\n');
  const next = lines.map((l) => (out ? l.replace(/^ {1,2}/, '') : '  ' + l)).join('\n');
  if (next === v.slice(a, b)) return;
  ta.setSelectionRange(a, b);
  insert(ta, next, onChange);
  ta.setSelectionRange(a, a + next.length);
}

function newline(ta: HTMLTextAreaElement, onChange: (t: string) => void) {
  const v = ta.value;
  const start = v.lastIndexOf('\n', ta.selectionStart - 1) + 1;
  const line = v.slice(start, ta.selectionStart);
  let indent = /^[ ]*(?:- )?/.exec(line)![0].replace('-', ' ');
  if (/:\s*$/.test(line)) indent += '  ';
  insert(ta, '\n' + indent, onChange);
}

/** lineStart is the offset where a 1-based line begins. */
function lineStart(text: string, line: number): number {
  let off = 0;
  for (let i = 1; i < line; i++) {
    const n = text.indexOf('\n', off);
    if (n < 0) break;
    off = n + 1;
  }
  return off;
}

function countLines(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

// ---- the component --------------------------------------------------------

export interface YamlEditorProps {
  value: string;
  onChange: (text: string) => void;
  /** The accessible name of the text area. */
  label: string;
  /** The kind the server lints the object as; none: YAML syntax only. */
  lint?: LintKind;
  /** The namespace of the lint call. */
  namespace?: string;
  /** Called with the problems of each check (empty: it is fine). */
  onProblems?: (p: Problem[]) => void;
  readOnly?: boolean;
  /** CSS height of the editing area. */
  height?: string;
  id?: string;
}

let ids = 0;

export function YamlEditor(p: YamlEditorProps) {
  const id = useMemo(() => p.id ?? `yed-${++ids}`, []);
  const ta = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const bands = useRef<HTMLDivElement>(null);
  const escaped = useRef(false);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [state, setState] = useState<'checking' | 'done' | 'unavailable'>('checking');
  const [unavailable, setUnavailable] = useState('');

  useEffect(() => {
    const ac = new AbortController();
    setState('checking');
    const t = window.setTimeout(() => {
      checkYaml(p.value, p.lint, p.namespace ?? 'default', ac.signal).then((r) => {
        if (ac.signal.aborted) return;
        const sorted = r.problems.sort((a, b) => a.line - b.line);
        setProblems(sorted);
        setUnavailable(r.unavailable ?? '');
        setState(r.unavailable ? 'unavailable' : 'done');
        p.onProblems?.(sorted);
      }, () => { /* aborted: a newer check runs */ });
    }, DEBOUNCE);
    return () => { clearTimeout(t); ac.abort(); };
  }, [p.value, p.lint, p.namespace]);

  const lines = countLines(p.value);
  const numbers = useMemo(() => Array.from({ length: lines }, (_, i) => i + 1).join('\n'), [lines]);
  const byLine = useMemo(() => {
    const m = new Map<number, Problem[]>();
    for (const x of problems) m.set(x.line, [...(m.get(x.line) ?? []), x]);
    return m;
  }, [problems]);

  const onScroll = () => {
    const t = ta.current!;
    if (gutter.current) gutter.current.style.transform = `translateY(${-t.scrollTop}px)`;
    if (bands.current) bands.current.style.transform = `translateY(${-t.scrollTop}px)`;
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const t = ta.current!;
    if (p.readOnly) return;
    if (e.key === 'Escape') { escaped.current = true; return; }
    const plain = !e.ctrlKey && !e.altKey && !e.metaKey;
    if (e.key === 'Tab' && plain && !escaped.current) {
      e.preventDefault();
      if (e.shiftKey || t.selectionStart !== t.selectionEnd && t.value.slice(t.selectionStart, t.selectionEnd).includes('\n')) shiftLines(t, e.shiftKey, p.onChange);
      else insert(t, '  ', p.onChange);
    } else if (e.key === 'Enter' && plain && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      newline(t, p.onChange);
    }
    escaped.current = false;
  };

  const jump = (line: number) => {
    const t = ta.current!;
    const off = lineStart(t.value, line);
    t.focus();
    t.setSelectionRange(off, off);
    t.scrollTop = Math.max(0, (line - 1) * LH - t.clientHeight / 3);
    onScroll();
  };

  const errors = problems.filter((x) => !x.warning);
  const listId = `${id}-problems`;
  const hintId = `${id}-hint`;
  const gutterWidth = `calc(${String(lines).length}ch + 26px)`;
  return (
    <div class="yed">
      <div class="yed-frame" style={{ height: p.height ?? '60vh' }}>
        <div class="yed-gutter" style={{ width: gutterWidth }} aria-hidden="true">
          <div class="yed-gutter-in" ref={gutter}>
            <pre class="yed-nums">{numbers}</pre>
            {[...byLine].map(([line, ps]) => (
              <span key={line} class={`yed-mark${ps.every((x) => x.warning) ? ' warn' : ''}`} style={{ top: `${PAD + (line - 1) * LH}px` }}
                title={ps.map((x) => x.message).join('\n')}>●</span>
            ))}
          </div>
        </div>
        <div class="yed-main">
          <div class="yed-bands" ref={bands} aria-hidden="true">
            {[...byLine].map(([line, ps]) => (
              <div key={line} class={`yed-band${ps.every((x) => x.warning) ? ' warn' : ''}`} style={{ top: `${PAD + (line - 1) * LH}px` }} />
            ))}
          </div>
          <textarea ref={ta} id={id} class="yed-text" value={p.value} readOnly={p.readOnly}
            aria-label={p.label} aria-invalid={errors.length > 0 ? 'true' : undefined}
            aria-describedby={`${hintId} ${listId}`}
            spellcheck={false} wrap="off" autocomplete="off" autocapitalize="off"
            onInput={(e) => p.onChange((e.currentTarget as HTMLTextAreaElement).value)}
            onScroll={onScroll} onKeyDown={onKeyDown} />
        </div>
      </div>
      <div class="yed-foot">
        <span id={hintId} class="hint">Tab indents, Shift+Tab outdents; press Esc then Tab to leave the editor.</span>
        <span class="yed-state" role="status">
          {state === 'checking' ? 'Checking…'
            : errors.length ? `${errors.length} problem${errors.length > 1 ? 's' : ''}`
            : state === 'unavailable' ? `YAML is valid; the server check failed: ${unavailable}`
            : p.lint ? 'No problems' : 'Valid YAML'}
        </span>
      </div>
      <ul id={listId} class="yed-problems" aria-label="Problems">
        {problems.map((x, i) => (
          <li key={i} class={x.warning ? 'warn' : 'err'}>
            <button type="button" class="yed-jump" onClick={() => jump(x.line)}>
              <span class="yed-line">Line {x.line}{x.mapped ? '' : ' (unplaced)'}</span>
              <span class="yed-msg">{x.warning ? 'Warning: ' : ''}{x.message}</span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

// ---- an editor with a save button -----------------------------------------

export interface ObjectEditorProps {
  /** The YAML the editor starts with (and returns to on Reset). */
  initial: string;
  kind: LintKind;
  namespace: string;
  label: string;
  /** Create or update the parsed object; its answer goes to onSaved. */
  save: (obj: any) => Promise<unknown>;
  saveLabel: string;
  onSaved?: (result: any) => void;
  /** Other buttons (Cancel). */
  children?: ComponentChildren;
  height?: string;
}

/** ObjectEditor is a YamlEditor with Save and Reset, for one object. */
export function ObjectEditor(p: ObjectEditorProps) {
  const [text, setText] = useState(p.initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [done, setDone] = useState('');
  useEffect(() => { setText(p.initial); }, [p.initial]);
  const save = async () => {
    setError(null);
    setDone('');
    const r = parseYaml(text);
    if (r.error) { setError(new Error(`The YAML does not parse: ${r.error}`)); return; }
    setBusy(true);
    try {
      const res = await p.save(r.value);
      setDone(`${p.saveLabel}: done.`);
      p.onSaved?.(res);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="objed">
      <YamlEditor value={text} onChange={(t) => { setText(t); setDone(''); }} label={p.label} lint={p.kind} namespace={p.namespace} height={p.height} />
      <ErrorBox error={error} />
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={save}>{busy ? 'Saving…' : p.saveLabel}</button>
        <button type="button" disabled={busy || text === p.initial} onClick={() => { setText(p.initial); setError(null); }}>Reset</button>
        {p.children}
        <span role="status" class="hint">{done}</span>
      </div>
    </div>
  );
}
