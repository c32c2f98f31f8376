import type { PageProps } from '../routes';
import { Page } from '../lib/ui';

export function CronList(_: PageProps) {
  return <Page title="Cron workflows">Not built yet.</Page>;
}
export function CronDetails(_: PageProps) {
  return <Page title="Cron workflow">Not built yet.</Page>;
}
