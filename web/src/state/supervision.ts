/**
 * Supervision as the pages read it (docs/architecture.md §6.2): a supervised person's
 * access log told as visits ("Ada opened your notes at 14:02 and read 1 of them"), who
 * the administrator's forms may offer as a supervisor or as the person supervised, and
 * whether a card waits for a supervisor rather than for the person.
 *
 * Pure: never calls the server, never touches the DOM. The access log comes newest first,
 * one row per list opened or item read; a visit is an `opened` row with the `read` rows
 * that follow it, by the same supervisor and in the same area, until that supervisor
 * opens a list again. Reads with no such list before them (it was never opened, or
 * another was opened since) gather into a visit of their own while they stay in one
 * area; every read of the memories, which have no list to open, is a visit of its own.
 * The cards waiting for the supervisor are a list too, but each card a supervisor allowed
 * or denied is told on its own line: what they decided matters more than what they saw.
 */
import type { AccessEntry, ApprovalCard, Person, Role, RoleDetail, SupervisionEdge } from '../api/types.js';
import { strings } from '../i18n/en.js';
import { formatNumber } from '../i18n/format.js';
import { plural } from '../i18n/locale.js';

/** The parts of a space a supervisor opens; `cards` are those waiting for their decision. */
export type AccessArea = 'conversations' | 'notes' | 'memories' | 'cards';

/** What a supervisor decided on a card, as the log names it. */
export type CardDecision = 'allowed' | 'denied';

/** One visit of a supervisor to one area of the space. */
export interface Visit {
  readonly supervisorId: string;
  readonly supervisorName: string;
  readonly area: AccessArea;
  /** The area's list was opened (and not only items read). */
  readonly opened: boolean;
  /** When the visit began: its first row. */
  readonly at: string;
  /** Its last row. */
  readonly until: string;
  /** The items read in it, each once (a conversation's or a note's id), oldest first. */
  readonly items: readonly string[];
  /** How many items were read: each item once, a read that names none counted alone. */
  readonly reads: number;
  /** A card the supervisor decided (its id the one item), or `null` for a visit that only read. */
  readonly decision: CardDecision | null;
}

/** The area a log row's `what` names, or `null` for one this page does not know. */
export function areaOf(what: string): AccessArea | null {
  switch (what) {
    case 'conversations':
    case 'conversation':
      return 'conversations';
    case 'notes':
    case 'note':
      return 'notes';
    case 'memories':
      return 'memories';
    case 'cards':
    case 'card':
      return 'cards';
    default:
      return null;
  }
}

/** A log row's action as a decision on a card, or `null` for any other. */
function decisionOf(action: string): CardDecision | null {
  return action === 'allowed' || action === 'denied' ? action : null;
}

interface Building {
  supervisorId: string;
  supervisorName: string;
  area: AccessArea;
  opened: boolean;
  at: string;
  until: string;
  items: string[];
  unnamed: number;
  decision: CardDecision | null;
}

/** The access log (newest first, as `GET /api/me/access-log` gives it) as visits, newest first. */
export function groupVisits(log: readonly AccessEntry[]): Visit[] {
  const visits: Building[] = [];
  /** Each supervisor's last list opened, which their reads of its area join. */
  const opened = new Map<string, Building>();
  /** Each supervisor's reads with no list opened before them, gathered while in one area. */
  const loose = new Map<string, Building>();
  // Oldest first, so that a read finds the list it was opened from.
  const rows = [...log].sort((a, b) => a.id - b.id);
  for (const row of rows) {
    const area = areaOf(row.what);
    if (area === null) continue;
    const who = row.supervisor_id;
    const start = (isOpened: boolean, decision: CardDecision | null = null): Building => {
      const visit: Building = {
        supervisorId: who,
        supervisorName: row.supervisor_name,
        area,
        opened: isOpened,
        at: row.at,
        until: row.at,
        items: [],
        unnamed: 0,
        decision,
      };
      visits.push(visit);
      return visit;
    };
    if (row.action === 'opened') {
      opened.set(who, start(true));
      loose.delete(who);
      continue;
    }
    const decision = decisionOf(row.action);
    if (decision !== null) {
      // A decision is a line of its own, whatever was opened before it.
      if (area !== 'cards') continue;
      const visit = start(false, decision);
      if (row.item === null) visit.unnamed += 1;
      else visit.items.push(row.item);
      continue;
    }
    if (row.action !== 'read') continue;
    let visit: Building;
    if (area === 'memories') {
      // The memories are read whole, each time a visit of its own.
      visit = start(false);
    } else if (opened.get(who)?.area === area) {
      visit = opened.get(who) as Building;
    } else if (loose.get(who)?.area === area) {
      visit = loose.get(who) as Building;
    } else {
      visit = start(false);
      loose.set(who, visit);
    }
    visit.until = row.at;
    if (row.item === null) visit.unnamed += 1;
    else if (!visit.items.includes(row.item)) visit.items.push(row.item);
  }
  return visits.reverse().map((visit) => ({
    supervisorId: visit.supervisorId,
    supervisorName: visit.supervisorName,
    area: visit.area,
    opened: visit.opened,
    at: visit.at,
    until: visit.until,
    items: visit.items,
    reads: visit.items.length + visit.unnamed,
    decision: visit.decision,
  }));
}

/** A visit in one sentence, its time (`time`, already in the person's words) where it says "at". */
export function visitSentence(visit: Visit, time: string): string {
  const fill = (text: string): string =>
    text.replace('{name}', visit.supervisorName).replace('{time}', time).replace('{n}', formatNumber(visit.reads));
  switch (visit.area) {
    case 'memories':
      return fill(strings.accessReadMemories);
    case 'cards':
      if (visit.decision === 'allowed') return fill(strings.accessAllowedCard);
      if (visit.decision === 'denied') return fill(strings.accessDeniedCard);
      return fill(strings.accessOpenedCards);
    case 'conversations':
      if (!visit.opened) return fill(plural(visit.reads, strings.accessReadConversations));
      return fill(visit.reads === 0 ? strings.accessOpenedConversations : plural(visit.reads, strings.accessOpenedConversationsRead));
    case 'notes':
      if (!visit.opened) return fill(plural(visit.reads, strings.accessReadNotes));
      return fill(visit.reads === 0 ? strings.accessOpenedNotes : plural(visit.reads, strings.accessOpenedNotesRead));
  }
}

/** The edges that let a supervisor open a space now (not those still waiting). */
export function activeEdges(edges: readonly SupervisionEdge[]): SupervisionEdge[] {
  return edges.filter((edge) => edge.state === 'active');
}

/** The gate's reason on a card its supervisor decides (src/agent/gate.rs). */
const SUPERVISOR_DECIDES = 'your supervisor decides';

/**
 * Whether an approval card waits for the person's supervisor, not for them: their role
 * may not approve and sends such calls to the supervisor, or, where the role is not
 * known, the gate's reason says so. The person may still deny it.
 */
export function supervisorDecides(card: ApprovalCard, role: Role | null): boolean {
  if (role !== null) return !role.may_approve && role.cards_to_supervisor;
  return card.details.reason.trimEnd().endsWith(SUPERVISOR_DECIDES);
}

/** The names of those who may open the person's space now, from `GET /api/me/supervision`'s `supervised_by`. */
export function supervisorNames(supervisedBy: readonly SupervisionEdge[]): string[] {
  return activeEdges(supervisedBy).map((edge) => edge.supervisor_name);
}

/** Whom an administrator may name as a supervisor: active people whose role may supervise. */
export function supervisorChoices(people: readonly Person[], roles: readonly RoleDetail[]): Person[] {
  const may = new Set(roles.filter((role) => role.may_supervise).map((role) => role.id));
  return people.filter((person) => person.status === 'active' && may.has(person.role));
}

/**
 * Whom an administrator may ask to accept `supervisor`: people not deactivated whose role
 * may be supervised, never the supervisor themself, and nobody they already supervise or
 * were asked to.
 */
export function supervisedChoices(
  people: readonly Person[],
  roles: readonly RoleDetail[],
  supervisor: string,
  edges: readonly SupervisionEdge[],
): Person[] {
  const may = new Set(roles.filter((role) => role.may_be_supervised).map((role) => role.id));
  const taken = new Set(edges.filter((edge) => edge.supervisor_id === supervisor).map((edge) => edge.supervised_id));
  return people.filter((person) => person.status !== 'deactivated' && person.id !== supervisor && may.has(person.role) && !taken.has(person.id));
}

/** Whether a role may be supervised, by its id (unknown roles may not). */
export function roleMayBeSupervised(roles: readonly RoleDetail[], role: string): boolean {
  return roles.some((r) => r.id === role && r.may_be_supervised);
}
