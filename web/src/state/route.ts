/**
 * Which page of the workspace is open, as the address bar's fragment says
 * (`#/notes`, `#/memories`, `#/admin/people`, …), so Back and Forward move between pages
 * and a page can be opened directly.
 *
 * Pure: parses and prints fragments, never reads or writes `location`. The
 * fragment names pages only, never a conversation or a note: nothing of a
 * person's space goes into the address bar or the history. One link carries more:
 * a reply's "used memories" opens `#/memories?focus=<memory id>` — an id, never the
 * memory's words — and the workspace takes the id out of the address as soon as it
 * has read it, so the history keeps `#/memories` only. A desktop notification of a task
 * opens its conversation the same way, `#/?open=<conversation id>`. The supervisor's view of
 * a supervised person's space names the person by id, `#/supervised/<user id>`, and no
 * more: which of their conversations or notes is open stays on the page. A document open on
 * the Files page is named by id and page, `#/files/<document id>?page=<n>` (pages counted
 * from 1), never by its file name: a citation of a page links there, and Back steps
 * through the pages read.
 */

export const ADMIN_SECTIONS = ['people', 'roles', 'supervision', 'models', 'rules', 'agents', 'tools', 'usage', 'backups', 'audit'] as const;
export type AdminSection = (typeof ADMIN_SECTIONS)[number];

export type Route =
  | { readonly page: 'chat'; readonly open?: string }
  | { readonly page: 'inbox' }
  | { readonly page: 'notes' }
  | { readonly page: 'files'; readonly document?: string; readonly documentPage?: number }
  | { readonly page: 'reminders' }
  | { readonly page: 'memories'; readonly focus?: string }
  | { readonly page: 'privacy' }
  | { readonly page: 'data' }
  | { readonly page: 'supervised'; readonly person?: string }
  | { readonly page: 'admin'; readonly section: AdminSection };

export type Page = Route['page'];

/** What a memory's id looks like; anything else in `focus` is not one, and is left out. */
const MEMORY_ID = /^mem_[A-Za-z0-9_-]{1,64}$/;

/** What a conversation's id looks like. */
const CONVERSATION_ID = /^chat_[0-9a-f]{24}$/;

/** What a person's id looks like (`UserId` in src/ids.rs). */
const USER_ID = /^[0-9a-f]{32}$/;

/** What a document's id may look like: letters, digits, `_` and `-`, as every id the server makes. */
const DOCUMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The highest page a link may name; anything beyond is no page number. */
const MAX_PAGE = 1_000_000;

/**
 * A document's id exactly as the server makes one (`random_id` in src/ids.rs: `doc_` and
 * twelve random bytes in hex), as a pattern to build stricter ones from.
 */
export const ISSUED_DOCUMENT_ID = /doc_[0-9a-f]{24}/;

/**
 * The one address inside the app that model output may link to: a document on the Files
 * page, or one of its pages (what a citation is), character for character — no other
 * page, no other query, nothing around it.
 */
const DOCUMENT_LINK = new RegExp(`^#/files/${ISSUED_DOCUMENT_ID.source}(?:\\?page=[1-9][0-9]{0,6})?$`);

/** Reads a fragment such as `#/admin/roles`; anything it does not know opens the conversation. */
export function parseRoute(hash: string): Route {
  const fragment = hash.replace(/^#\/?/, '');
  const path = fragment.split(/[?&]/)[0] ?? '';
  const query = fragment.includes('?') ? fragment.slice(fragment.indexOf('?') + 1) : '';
  const [first = '', second = ''] = path.split('/').filter((part) => part !== '');
  switch (first) {
    case 'memories': {
      const focus = new URLSearchParams(query).get('focus');
      return focus !== null && MEMORY_ID.test(focus) ? { page: 'memories', focus } : { page: 'memories' };
    }
    case 'inbox':
    case 'notes':
    case 'reminders':
    case 'privacy':
    case 'data':
      return { page: first };
    case 'files': {
      if (!DOCUMENT_ID.test(second)) return { page: 'files' };
      const number = new URLSearchParams(query).get('page') ?? '';
      const documentPage = /^[1-9][0-9]*$/.test(number) ? Number(number) : NaN;
      return documentPage <= MAX_PAGE ? { page: 'files', document: second, documentPage } : { page: 'files', document: second };
    }
    case 'supervised':
      return USER_ID.test(second) ? { page: 'supervised', person: second } : { page: 'supervised' };
    case 'admin': {
      const section = (ADMIN_SECTIONS as readonly string[]).includes(second) ? (second as AdminSection) : 'people';
      return { page: 'admin', section };
    }
    default: {
      const open = first === '' ? new URLSearchParams(query).get('open') : null;
      return open !== null && CONVERSATION_ID.test(open) ? { page: 'chat', open } : { page: 'chat' };
    }
  }
}

/** The fragment for a route: `''` for the conversation, which is the workspace's home. */
export function routeHash(route: Route): string {
  switch (route.page) {
    case 'chat':
      return route.open === undefined ? '' : `#/?open=${encodeURIComponent(route.open)}`;
    case 'admin':
      return `#/admin/${route.section}`;
    case 'memories':
      return route.focus === undefined ? '#/memories' : `#/memories?focus=${encodeURIComponent(route.focus)}`;
    case 'supervised':
      return route.person === undefined ? '#/supervised' : `#/supervised/${route.person}`;
    case 'files': {
      if (route.document === undefined) return '#/files';
      const at = route.documentPage === undefined ? '' : `?page=${route.documentPage}`;
      return `#/files/${encodeURIComponent(route.document)}${at}`;
    }
    default:
      return `#/${route.page}`;
  }
}

/** The link to the Memory page showing one memory. */
export function memoryLink(id: string): string {
  return routeHash({ page: 'memories', focus: id });
}

/** The link to a document on the Files page, at `page` (counted from 1) when given: a citation's target. */
export function documentLink(id: string, page?: number): string {
  return routeHash(page === undefined ? { page: 'files', document: id } : { page: 'files', document: id, documentPage: page });
}

/** Whether `href` is exactly a link to a document or one of its pages, as a citation makes it. */
export function isDocumentLink(href: string): boolean {
  return DOCUMENT_LINK.test(href);
}

/** The route without what is only read once (a memory or conversation to show): what the address keeps. */
export function withoutFocus(route: Route): Route {
  if (route.page === 'memories') return { page: 'memories' };
  return route.page === 'chat' ? { page: 'chat' } : route;
}

export function sameRoute(a: Route, b: Route): boolean {
  return routeHash(a) === routeHash(b);
}
