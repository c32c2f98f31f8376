// Kubernetes events of a workflow or a pod, from the events stream. braid
// runs no Kubernetes and sends none, so this mostly says "No events".
import { useEffect, useState } from 'preact/hooks';
import { qs, seg, stream } from '../../lib/api';
import { Time } from '../../lib/ui';

interface KubeEvent {
  metadata?: { uid?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  eventTime?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string };
}

/** Events lists the events whose involved object matches fieldSelector. */
export function Events({ namespace, fieldSelector, archived }: { namespace: string; fieldSelector: string; archived?: boolean }) {
  const [events, setEvents] = useState<KubeEvent[]>([]);
  // The stream may stay silent (braid has no Kubernetes events): "No events" until one comes.
  const [state, setState] = useState<'open' | 'error'>('open');
  useEffect(() => {
    setEvents([]);
    if (archived) return;
    setState('open');
    const path = `api/v1/stream/events/${seg(namespace)}${qs({ 'listOptions.fieldSelector': fieldSelector })}`;
    const stop = stream<KubeEvent>(path, (ev) => {
      setState('open');
      setEvents((xs) => [...xs.filter((x) => x.metadata?.uid !== ev.metadata?.uid), ev].slice(-500));
    }, (e) => setState(e ? 'error' : 'open'));
    return stop;
  }, [namespace, fieldSelector, archived]);

  if (events.length === 0) {
    return (
      <p class="hint wf-empty" role="status">
        No events.{state === 'error' ? ' (The events stream is not available.)' : ''}
      </p>
    );
  }
  return (
    <table class="list wf-events">
      <thead><tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Object</th><th scope="col">Message</th><th scope="col">When</th></tr></thead>
      <tbody>
        {events.map((e, i) => (
          <tr key={e.metadata?.uid ?? i}>
            <td>{e.type}</td>
            <td>{e.reason}</td>
            <td>{e.involvedObject?.kind}/{e.involvedObject?.name}</td>
            <td class="wf-val">{e.message}{e.count && e.count > 1 ? ` (×${e.count})` : ''}</td>
            <td><Time t={e.lastTimestamp ?? e.eventTime} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
