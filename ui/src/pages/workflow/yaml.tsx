// The workflow as YAML, read-only, with a copy button. Stringifying a
// workflow of thousands of nodes takes a while, so a big one is not
// re-rendered on every update: it offers a refresh instead.
import { useMemo, useRef, useState } from 'preact/hooks';
import YAML from 'yaml';
import type { Workflow } from '../../lib/types';

const autoNodes = 500;

export function YamlView({ wf, version }: { wf: Workflow; version: number }) {
  const big = Object.keys(wf.status?.nodes ?? {}).length > autoNodes;
  const [shown, setShown] = useState(version);
  const at = big ? shown : version;
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const text = useMemo(() => YAML.stringify(wf, { lineWidth: 0 }), [at]);
  const [copied, setCopied] = useState('');
  const pre = useRef<HTMLPreElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied');
    } catch {
      // No clipboard (an insecure origin): select the text to copy by hand.
      const r = document.createRange();
      if (pre.current) { r.selectNodeContents(pre.current); getSelection()?.removeAllRanges(); getSelection()?.addRange(r); }
      setCopied('Selected: press Ctrl+C');
    }
    setTimeout(() => setCopied(''), 2000);
  };
  return (
    <div class="wf-yaml">
      <div class="wf-yaml-bar">
        <button type="button" onClick={copy}>Copy</button>
        {big && shown !== version && <button type="button" onClick={() => setShown(version)}>↻ The workflow changed: refresh</button>}
        <span role="status" class="hint">{copied}</span>
      </div>
      <pre ref={pre} class="wf-yaml-text" tabIndex={0} aria-label="Workflow YAML">{text}</pre>
    </div>
  );
}
