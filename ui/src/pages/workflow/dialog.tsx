// A modal dialog (the native <dialog>: it traps focus and closes on Esc)
// and the parameter fields the action dialogs share.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorBox } from '../../lib/ui';

export interface DialogProps {
  title: string;
  /** The label of the confirming button. */
  submit: string;
  danger?: boolean;
  onClose: () => void;
  /** Runs on submit; the dialog closes when it resolves and shows the error when it throws. */
  onSubmit: () => Promise<void>;
  children?: ComponentChildren;
}

export function Dialog({ title, submit, danger, onClose, onSubmit, children }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const go = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onSubmit();
      onClose();
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };
  return (
    <dialog ref={ref} class="wf-dialog" aria-label={title} onClose={onClose} onCancel={onClose}>
      <form onSubmit={go}>
        <h2>{title}</h2>
        {children}
        <ErrorBox error={error} />
        <div class="wf-dialog-buttons">
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="submit" class={danger ? 'danger' : 'primary'} disabled={busy}>{busy ? 'Working…' : submit}</button>
        </div>
      </form>
    </dialog>
  );
}

/** A parameter the user may set: its name, value, and what to choose from. */
export interface ParamField {
  name: string;
  value: string;
  enum?: string[];
  description?: string;
}

/** ParamFields edits a list of parameters in place (one input or select each). */
export function ParamFields({ fields, onChange, idPrefix }: { fields: ParamField[]; onChange: (f: ParamField[]) => void; idPrefix: string }) {
  if (fields.length === 0) return null;
  const set = (i: number, value: string) => onChange(fields.map((f, j) => (j === i ? { ...f, value } : f)));
  return (
    <div class="wf-params">
      {fields.map((f, i) => {
        const id = `${idPrefix}-${i}`;
        return (
          <div class="wf-param" key={f.name}>
            <label for={id}>{f.name}</label>
            {f.enum && f.enum.length > 0 ? (
              <select id={id} value={f.value} onChange={(e) => set(i, (e.target as HTMLSelectElement).value)}>
                {f.enum.map((v) => <option key={v} value={v}>{v}</option>)}
              </select>
            ) : (
              <input id={id} value={f.value} onInput={(e) => set(i, (e.target as HTMLInputElement).value)} />
            )}
            {f.description && <span class="hint">{f.description}</span>}
          </div>
        );
      })}
    </div>
  );
}
