import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function EventBindings(_: PageProps) {
  return <Page title="EventBindings">Not built yet.</Page>;
}
