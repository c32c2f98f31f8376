import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function TemplateList(_: PageProps) {
  return <Page title="Templates">Not built yet.</Page>;
}
export function TemplateDetails(_: PageProps) {
  return <Page title="Template">Not built yet.</Page>;
}
