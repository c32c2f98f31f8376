// Login: a token pasted here (or given as ?token= in any URL) is handed to
// the server, which keeps it in an HttpOnly cookie; or SSO's redirect.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api';
import { basePath, href, navigate } from '../lib/router';
import type { PageProps } from '../routes';

/** safeRedirect keeps a redirect only when it is a path under the base. */
function safeRedirect(raw: string | null): string {
  const base = basePath();
  if (raw && raw.startsWith(base) && !raw.startsWith('//') && !raw.includes('\\') && !raw.slice(base.length).startsWith('login')) return raw;
  return href('/workflows');
}

export function Login({ query }: PageProps) {
  const [token, setToken] = useState('');
  const [state, setState] = useState<'checking' | 'out' | 'in'>('checking');
  const redirect = safeRedirect(query.get('redirect'));
  useEffect(() => {
    get('api/v1/userinfo').then(() => setState('in'), () => setState('out'));
  }, []);
  useEffect(() => {
    if (state === 'in' && query.get('stay') === null) {
      const u = new URL(redirect, location.origin);
      navigate('/' + u.pathname.slice(basePath().length), { replace: true, query: u.searchParams });
    }
  }, [state, redirect]);
  const submit = (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return;
    // The server redeems ?token= on a GET: it sets the cookie and sends the
    // browser back here without the token in the URL.
    location.assign(href('/login', { token: t, redirect }));
  };
  const logout = async () => {
    await fetch('logout', { method: 'POST', credentials: 'same-origin' });
    setState('out');
  };
  return (
    <section class="page login">
      <h1>Log in to braid</h1>
      {state === 'in' && (
        <p>You are signed in. <a href={redirect}>Continue</a> or <button type="button" onClick={logout}>log out</button>.</p>
      )}
      <form onSubmit={submit} class="card">
        <label for="token">Token</label>
        <p class="hint">Paste the output of <code>braid auth token</code> (with or without <code>Bearer </code>).</p>
        <textarea id="token" rows={3} value={token} onInput={(e) => setToken((e.target as HTMLTextAreaElement).value)}
          autocomplete="off" spellcheck={false} />
        <button type="submit" class="primary">Log in</button>
      </form>
      <div class="card">
        <p>Or sign in with your organisation's identity provider, if this server has SSO.</p>
        <a class="button" data-native href={`${basePath()}oauth2/redirect?redirect=${encodeURIComponent(redirect)}`}>Log in with SSO</a>
      </div>
    </section>
  );
}
