/** Styles for `<skald-workspace>`: navigation beside the open view; a drawer on narrow windows. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
    height: 100vh;
  }

  /* The window never scrolls: the navigation and the open view scroll inside
     themselves, and nothing that escapes them (an absolutely placed label, a long
     admin page) can grow the document and slide the app off-screen. \`clip\`, not
     \`hidden\`: a hidden box still scrolls when something inside it takes focus. */
  .layout {
    position: relative;
    display: grid;
    grid-template-columns: 17rem 1fr;
    height: 100%;
    overflow: clip;
  }

  .skip {
    position: absolute;
    left: var(--skald-space-2);
    top: -3rem;
    z-index: 20;
    padding: var(--skald-space-2) var(--skald-space-3);
    background: var(--skald-surface);
    color: var(--skald-accent);
    border-radius: var(--skald-radius);
  }

  .skip:focus {
    top: var(--skald-space-2);
  }

  .menu {
    display: none;
  }

  .nav {
    position: relative;
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-2);
    min-height: 0;
    overflow-y: auto;
    padding: var(--skald-space-3) var(--skald-space-2) var(--skald-space-2);
    background: var(--skald-sidebar);
    border-right: 1px solid var(--skald-border);
  }

  .brand {
    margin: 0 var(--skald-space-2) var(--skald-space-1);
    font-size: 1rem;
    font-weight: 700;
    color: var(--skald-accent);
    letter-spacing: 0.02em;
  }

  skald-session-list {
    flex: 1;
    min-height: 9rem;
  }

  @media (max-height: 36rem) {
    skald-session-list {
      flex: none;
      min-height: auto;
    }
  }

  .nav-foot {
    display: flex;
    flex-direction: column;
    gap: var(--skald-space-1);
    border-top: 1px solid var(--skald-border);
    padding-top: var(--skald-space-2);
  }

  .pages {
    list-style: none;
    margin: 0;
    padding: 0;
    display: flex;
    flex-direction: column;
    gap: 2px;
  }

  .page-link {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: var(--skald-space-2);
    min-height: 2.5rem;
    padding: 0 var(--skald-space-3);
    border-radius: var(--skald-radius);
    color: var(--skald-text);
    font-weight: 500;
    text-decoration: none;
  }

  .page-link:hover {
    background: var(--skald-hover);
  }

  .with-icon {
    display: inline-flex;
    align-items: center;
    gap: var(--skald-space-2);
  }

  .page-link[aria-current='page'] {
    background: var(--skald-selected);
  }

  .count {
    min-width: 1.5rem;
    padding: 0 0.4rem;
    border-radius: 999px;
    background: var(--skald-accent);
    color: var(--skald-on-accent);
    font-size: 0.8rem;
    font-weight: 700;
    line-height: 1.5rem;
    text-align: center;
  }

  .me {
    display: flex;
    align-items: center;
    gap: var(--skald-space-2);
    padding: var(--skald-space-1) var(--skald-space-2);
  }

  .me-text {
    display: flex;
    flex-direction: column;
    flex: 1;
    min-width: 0;
    line-height: 1.2;
  }

  .me-name {
    font-weight: 600;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }

  .me-role {
    font-size: 0.8rem;
    color: var(--skald-text-muted);
  }

  .shortcuts-link {
    align-self: flex-start;
    margin: 0 var(--skald-space-3);
    font-size: 0.85rem;
  }

  dialog.shortcuts {
    max-width: min(28rem, 92vw);
    border: 1px solid var(--skald-border);
    border-radius: calc(var(--skald-radius) * 2);
    background: var(--skald-surface);
    color: var(--skald-text);
  }

  dialog.shortcuts h2 {
    margin-top: 0;
    font-size: 1.1rem;
  }

  .shortcut {
    display: flex;
    justify-content: space-between;
    gap: var(--skald-space-3);
    padding: var(--skald-space-1) 0;
  }

  .shortcut dt {
    white-space: nowrap;
  }

  .shortcut dd {
    margin: 0;
    text-align: right;
  }

  kbd {
    display: inline-block;
    min-width: 1.6em;
    padding: 0.05rem 0.35rem;
    border: 1px solid var(--skald-border);
    border-radius: 0.3rem;
    background: var(--skald-bg);
    font-family: var(--skald-font-mono);
    font-size: 0.85em;
    text-align: center;
  }

  .lock {
    min-height: 2.25rem;
    padding: 0 0.75rem;
  }

  .main {
    position: relative;
    min-width: 0;
    min-height: 0;
    height: 100vh;
    overflow-y: auto;
    background: var(--skald-bg);
  }

  .main:focus {
    outline: none;
  }

  @media (max-width: 48rem) {
    .layout {
      grid-template-columns: 1fr;
    }

    .menu {
      display: inline-flex;
      position: absolute;
      top: var(--skald-space-1);
      left: var(--skald-space-1);
      z-index: 6;
      min-height: 2.5rem;
      min-width: 2.5rem;
      padding: 0;
      font-size: 1.2rem;
    }

    .nav {
      position: absolute;
      inset: 0 auto 0 0;
      width: min(20rem, 85vw);
      z-index: 5;
      padding-top: 3.5rem;
      transform: translateX(-105%);
      visibility: hidden;
      transition: transform 0.2s ease, visibility 0.2s;
      box-shadow: var(--skald-shadow);
    }

    .layout[data-nav-open='true'] .nav {
      transform: none;
      visibility: visible;
    }

    .main {
      padding-top: 0;
    }

    .main > * {
      --skald-bar-indent: 3rem;
    }
  }
`;
