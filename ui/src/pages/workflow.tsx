import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function WorkflowDetails(_: PageProps) {
  return <Page title="WorkflowDetails">Not built yet.</Page>;
}
