// Light and dark mode: the system's choice unless the user picked one.
export type Theme = 'light' | 'dark' | 'system';

export function getTheme(): Theme {
  try {
    const t = localStorage.getItem('braid.theme');
    if (t === 'light' || t === 'dark') return t;
  } catch { /* storage off */ }
  return 'system';
}

export function applyTheme(t: Theme = getTheme()) {
  const root = document.documentElement;
  if (t === 'system') delete root.dataset.theme;
  else root.dataset.theme = t;
}

export function setTheme(t: Theme) {
  try {
    if (t === 'system') localStorage.removeItem('braid.theme');
    else localStorage.setItem('braid.theme', t);
  } catch { /* storage off */ }
  applyTheme(t);
}

/** isDark says which palette is in effect (for the canvas, which reads colours itself). */
export function isDark(): boolean {
  const t = document.documentElement.dataset.theme;
  if (t) return t === 'dark';
  return window.matchMedia('(prefers-color-scheme: dark)').matches;
}
