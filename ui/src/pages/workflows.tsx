import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function WorkflowList(_: PageProps) {
  return <Page title="WorkflowList">Not built yet.</Page>;
}
