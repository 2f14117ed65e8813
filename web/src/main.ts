/**
 * The entry point: takes the launch token, builds the API client and hands
 * it to `<skald-app>`. The only module that wires concrete pieces together.
 */
import './styles/global.css';
import './components/skald-app/skald-app.js';

import { ApiClient } from './api/client.js';
import { resolveLocale, useLocale } from './i18n/locale.js';
import { SYSTEM_LOOK, useAppearance } from './state/appearance.js';
import { takeLaunchToken } from './state/token.js';

// First, before anything can copy the URL: take the token out of it.
const token = takeLaunchToken();

// Until someone logs in with a language of their own, the page speaks the browser's.
useLocale(resolveLocale('system', navigator.languages));
useAppearance(SYSTEM_LOOK);

const app = document.querySelector('skald-app') ?? document.body.appendChild(document.createElement('skald-app'));
app.client = token === null ? null : new ApiClient(token);
