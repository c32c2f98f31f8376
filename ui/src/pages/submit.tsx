import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function SubmitPage(_: PageProps) {
  return <Page title="SubmitPage">Not built yet.</Page>;
}
