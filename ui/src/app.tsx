// The shell: the navigation, the login gate and the routes.
import { useEffect, useState } from 'preact/hooks';
import { get, onUnauthenticated } from './lib/api';
import { basePath, href, match, navigate, onLinkClick, useRoute } from './lib/router';
import { getTheme, setTheme, type Theme } from './lib/theme';
import type { UserInfo } from './lib/types';
import { routes } from './routes';

const nav: [string, string][] = [
  ['/workflows', 'Workflows'],
  ['/workflow-templates', 'Templates'],
  ['/cluster-workflow-templates', 'Cluster templates'],
  ['/cron-workflows', 'Cron workflows'],
  ['/event-bindings', 'Event bindings'],
  ['/userinfo', 'User'],
];

/** current says whether the nav item p is the section of path. */
function current(path: string, p: string): boolean {
  if (p === '/workflows') return path.startsWith('/workflows') || path.startsWith('/archived-workflows') || path === '/submit';
  return path === p || path.startsWith(p + '/');
}

function ThemeSwitch() {
  const [t, setT] = useState<Theme>(getTheme());
  const next: Record<Theme, Theme> = { system: 'light', light: 'dark', dark: 'system' };
  return (
    <button type="button" class="theme" aria-label={`Theme: ${t} (change)`} title={`Theme: ${t}`}
      onClick={() => { const n = next[t]; setTheme(n); setT(n); }}>
      {t === 'dark' ? '☾' : t === 'light' ? '☀' : '◐'}
    </button>
  );
}

export function App() {
  const route = useRoute();
  const [user, setUser] = useState<UserInfo | null>(null);
  useEffect(() => {
    onUnauthenticated(() => {
      // Read the location now: the route of this closure is the first one.
      const base = basePath();
      const here = location.pathname.startsWith(base) ? '/' + location.pathname.slice(base.length) : location.pathname;
      if (here.startsWith('/login')) return;
      navigate('/login', { replace: true, query: { redirect: location.pathname + location.search } });
    });
  }, []);
  useEffect(() => {
    if (route.path.startsWith('/login')) return;
    get<UserInfo>('api/v1/userinfo').then(setUser, () => setUser(null));
  }, [route.path === '/login']);
  useEffect(() => {
    if (route.path === '/' || route.path === '') navigate('/workflows', { replace: true });
  }, [route.path]);

  let page = null;
  for (const [pattern, Comp] of routes) {
    const params = match(pattern, route.path);
    if (params) {
      page = <Comp params={params} query={route.query} />;
      break;
    }
  }
  if (!page) page = <section class="page"><h1>Not found</h1><p>No page at {route.path}.</p></section>;
  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#main">Skip to content</a>
      <nav class="nav" aria-label="Main">
        <a class="brand" href={href('/workflows')}>braid</a>
        <ul>
          {nav.map(([p, label]) => (
            <li key={p}><a href={href(p)} aria-current={current(route.path, p) ? 'page' : undefined}>{label}</a></li>
          ))}
        </ul>
        <div class="nav-foot">
          {user && <span class="who" title="Signed in as">{user.email || user.subject || user.serviceAccountName || 'server'}</span>}
          <ThemeSwitch />
        </div>
      </nav>
      <main id="main" tabIndex={-1}>{page}</main>
    </div>
  );
}
