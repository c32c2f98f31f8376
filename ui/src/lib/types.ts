// The shapes of Argo's objects as the API's JSON carries them: only the
// fields the UI reads, all optional, as the server may leave any out.

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Parameter {
  name: string;
  value?: string;
  default?: string;
  enum?: string[];
  description?: string;
  valueFrom?: Record<string, unknown>;
}

export interface Artifact {
  name: string;
  path?: string;
  s3?: { key?: string };
  archive?: { none?: unknown; tar?: unknown; zip?: unknown };
  [k: string]: unknown;
}

export interface Inputs {
  parameters?: Parameter[];
  artifacts?: Artifact[];
}

export interface Outputs extends Inputs {
  result?: string;
  exitCode?: string;
}

export interface DAGTask {
  name: string;
  template?: string;
  templateRef?: { name: string; template: string; clusterScope?: boolean };
  dependencies?: string[];
  depends?: string;
  when?: string;
  withItems?: unknown[];
  withParam?: string;
  withSequence?: unknown;
  arguments?: Inputs;
}

export type WorkflowStep = DAGTask;

export interface Template {
  name: string;
  container?: { image?: string; command?: string[]; args?: string[] };
  script?: { image?: string; source?: string };
  dag?: { tasks: DAGTask[] };
  steps?: WorkflowStep[][];
  suspend?: { duration?: string };
  resource?: unknown;
  data?: unknown;
  http?: unknown;
  containerSet?: { containers: { name: string; dependencies?: string[] }[] };
  inputs?: Inputs;
  outputs?: Outputs;
  [k: string]: unknown;
}

export interface WorkflowSpec {
  entrypoint?: string;
  templates?: Template[];
  arguments?: Inputs;
  workflowTemplateRef?: { name: string; clusterScope?: boolean };
  suspend?: boolean;
  [k: string]: unknown;
}

export type NodePhase = 'Pending' | 'Running' | 'Succeeded' | 'Skipped' | 'Failed' | 'Error' | 'Omitted';
export type NodeType = 'Pod' | 'Container' | 'Steps' | 'StepGroup' | 'DAG' | 'TaskGroup' | 'Retry' | 'Skipped' | 'Suspend' | 'HTTP' | 'Plugin';

export interface NodeStatus {
  id: string;
  name: string;
  displayName?: string;
  type: NodeType;
  templateName?: string;
  templateRef?: { name: string; template: string; clusterScope?: boolean };
  templateScope?: string;
  phase?: NodePhase;
  boundaryID?: string;
  message?: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  progress?: string;
  podIP?: string;
  hostNodeName?: string;
  children?: string[];
  outboundNodes?: string[];
  inputs?: Inputs;
  outputs?: Outputs;
  resourcesDuration?: Record<string, number>;
  estimatedDuration?: number;
}

export interface WorkflowStatus {
  phase?: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  progress?: string;
  message?: string;
  nodes?: Record<string, NodeStatus>;
  storedTemplates?: Record<string, Template>;
  storedWorkflowTemplateSpec?: WorkflowSpec;
  conditions?: { type: string; status: string; message?: string }[];
  estimatedDuration?: number;
  resourcesDuration?: Record<string, number>;
}

export interface Workflow {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: WorkflowSpec;
  status?: WorkflowStatus;
}

export interface WorkflowTemplate {
  metadata: ObjectMeta;
  spec: WorkflowSpec;
}

export interface CronWorkflow {
  metadata: ObjectMeta;
  spec: {
    schedules?: string[];
    schedule?: string;
    timezone?: string;
    suspend?: boolean;
    concurrencyPolicy?: string;
    workflowSpec: WorkflowSpec;
    workflowMetadata?: ObjectMeta;
    [k: string]: unknown;
  };
  status?: { lastScheduledTime?: string; active?: unknown[]; succeeded?: number; failed?: number; phase?: string; conditions?: unknown[] };
}

export interface List<T> {
  metadata?: { continue?: string; resourceVersion?: string; remainingItemCount?: number };
  items?: T[] | null;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface UserInfo {
  issuer?: string;
  subject?: string;
  groups?: string[];
  email?: string;
  emailVerified?: boolean;
  name?: string;
  serviceAccountName?: string;
  serviceAccountNamespace?: string;
}

export const completed = (phase?: string) => phase === 'Succeeded' || phase === 'Failed' || phase === 'Error';
