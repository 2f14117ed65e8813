/**
 * Which page of the workspace is open, as the address bar's fragment says
 * (`#/notes`, `#/memories`, `#/admin/people`, …), so Back and Forward move between pages
 * and a page can be opened directly.
 *
 * Pure: parses and prints fragments, never reads or writes `location`. The
 * fragment names pages only, never a conversation or a note: nothing of a
 * person's space goes into the address bar or the history.
 */

export const ADMIN_SECTIONS = ['people', 'roles', 'models', 'rules', 'agents', 'usage', 'audit'] as const;
export type AdminSection = (typeof ADMIN_SECTIONS)[number];

export type Route =
  | { readonly page: 'chat' }
  | { readonly page: 'inbox' }
  | { readonly page: 'notes' }
  | { readonly page: 'memories' }
  | { readonly page: 'privacy' }
  | { readonly page: 'data' }
  | { readonly page: 'admin'; readonly section: AdminSection };

export type Page = Route['page'];

/** Reads a fragment such as `#/admin/roles`; anything it does not know opens the conversation. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, '').split(/[?&]/)[0] ?? '';
  const [first = '', second = ''] = path.split('/').filter((part) => part !== '');
  switch (first) {
    case 'inbox':
    case 'notes':
    case 'memories':
    case 'privacy':
    case 'data':
      return { page: first };
    case 'admin': {
      const section = (ADMIN_SECTIONS as readonly string[]).includes(second) ? (second as AdminSection) : 'people';
      return { page: 'admin', section };
    }
    default:
      return { page: 'chat' };
  }
}

/** The fragment for a route: `''` for the conversation, which is the workspace's home. */
export function routeHash(route: Route): string {
  switch (route.page) {
    case 'chat':
      return '';
    case 'admin':
      return `#/admin/${route.section}`;
    default:
      return `#/${route.page}`;
  }
}

export function sameRoute(a: Route, b: Route): boolean {
  return routeHash(a) === routeHash(b);
}
