import { render } from 'preact';
import { App } from './app';
import { applyTheme } from './lib/theme';

applyTheme();
render(<App />, document.getElementById('app')!);
