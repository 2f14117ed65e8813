/**
 * Shows the page in the new language the moment it changes, without a reload
 * (which would lose the in-memory session): on the root element, it asks every
 * Lit element under it — through shadow roots — to render again, since each
 * reads its words from `strings` as it renders. Keeps `<html lang>` on the
 * active locale, for screen readers, hyphenation and spelling.
 *
 *   new LocaleController(this); // in <skald-app>
 */
import { ReactiveElement, type ReactiveController, type ReactiveControllerHost } from 'lit';

import { activeLocale, onLocaleChange, type ActiveLocale } from '../i18n/locale.js';

export class LocaleController implements ReactiveController {
  readonly #host: ReactiveControllerHost & Element;
  #stop: (() => void) | null = null;

  constructor(host: ReactiveControllerHost & Element) {
    this.#host = host;
    host.addController(this);
  }

  hostConnected(): void {
    setLang(activeLocale());
    this.#stop = onLocaleChange((locale) => {
      setLang(locale);
      renderAgain(this.#host);
    });
  }

  hostDisconnected(): void {
    this.#stop?.();
    this.#stop = null;
  }
}

function setLang(locale: ActiveLocale): void {
  document.documentElement.lang = locale.tag;
}

/** Asks `element` and every element below it, inside shadow roots too, to render again. */
function renderAgain(element: Element): void {
  if (element instanceof ReactiveElement) element.requestUpdate();
  if (element.shadowRoot) for (const below of element.shadowRoot.children) renderAgain(below);
  for (const below of element.children) renderAgain(below);
}
