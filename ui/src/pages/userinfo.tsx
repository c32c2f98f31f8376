import { get } from '../lib/api';
import type { UserInfo } from '../lib/types';
import { ErrorBox, Loading, Page, useAsync } from '../lib/ui';
import { href } from '../lib/router';

export function UserInfoPage() {
  const u = useAsync((s) => get<UserInfo>('api/v1/userinfo', s), []);
  const v = useAsync((s) => get<{ version?: string }>('api/v1/version', s), []);
  const rows: [string, unknown][] = u.data ? [
    ['Subject', u.data.subject], ['Issuer', u.data.issuer], ['Email', u.data.email], ['Name', u.data.name],
    ['Groups', u.data.groups?.join(', ')], ['Service account', u.data.serviceAccountName],
    ['Service account namespace', u.data.serviceAccountNamespace],
  ] : [];
  return (
    <Page title="User info">
      <ErrorBox error={u.error} />
      {u.loading && !u.data && <Loading />}
      {u.data && (
        <dl class="kv">
          {rows.filter(([, x]) => x).map(([k, x]) => [<dt key={k}>{k}</dt>, <dd key={k + 'v'}>{String(x)}</dd>])}
          {!rows.some(([, x]) => x) && [<dt>Identity</dt>, <dd>the server's own (no token needed)</dd>]}
        </dl>
      )}
      {v.data && <p class="hint">braid {v.data.version}</p>}
      <p><a href={href('/login', { stay: '1' })}>Log in with another token, or log out</a></p>
    </Page>
  );
}
