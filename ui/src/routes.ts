// Every page and its URL (relative to the base). The first match wins.
import type { FunctionComponent } from 'preact';
import { Login } from './pages/login';
import { UserInfoPage } from './pages/userinfo';
import { WorkflowList } from './pages/workflows';
import { WorkflowDetails } from './pages/workflow';
import { SubmitPage } from './pages/submit';
import { TemplateList, TemplateDetails } from './pages/templates';
import { CronList, CronDetails } from './pages/cron';
import { EventBindings } from './pages/eventbindings';

export interface PageProps {
  params: Record<string, string>;
  query: URLSearchParams;
}

export const routes: [string, FunctionComponent<PageProps>][] = [
  ['/login', Login],
  ['/userinfo', UserInfoPage],
  ['/workflows', WorkflowList],
  ['/workflows/:ns', WorkflowList],
  ['/workflows/:ns/:name', WorkflowDetails],
  ['/archived-workflows/:ns/:uid', WorkflowDetails],
  ['/submit', SubmitPage],
  ['/workflow-templates', TemplateList],
  ['/workflow-templates/:ns', TemplateList],
  ['/workflow-templates/:ns/:name', TemplateDetails],
  ['/cluster-workflow-templates', TemplateList],
  ['/cluster-workflow-templates/:name', TemplateDetails],
  ['/cron-workflows', CronList],
  ['/cron-workflows/:ns', CronList],
  ['/cron-workflows/:ns/:name', CronDetails],
  ['/event-bindings', EventBindings],
  ['/event-bindings/:ns', EventBindings],
];
