/**
 * One person's login, for as long as it lasts: their session client, who they
 * are, their inbox and their live events. Made when a space unlocks, dropped
 * when it locks; nothing of it outlives the page (a reload starts at the
 * picker again).
 */
import type { ApiClient } from '../api/client.js';
import type { Me, Unlocked } from '../api/types.js';
import { InboxStore } from './inbox.js';
import { LiveConnection, type LiveEventMessage } from './live.js';

export interface Login {
  /** The client that carries this person's session token. */
  readonly client: ApiClient;
  readonly me: Me;
  readonly inbox: InboxStore;
  readonly live: LiveConnection;
}

/** Builds the login from an unlock: reads who the person is and opens the live socket. */
export async function startLogin(launch: ApiClient, unlocked: Unlocked): Promise<Login> {
  const client = launch.withToken(unlocked.token);
  const me = await client.me();
  const inbox = new InboxStore(client);
  const live = new LiveConnection(client);
  live.addEventListener('live-event', (message) => inbox.apply((message as LiveEventMessage).event));
  live.addEventListener('resync', () => void inbox.refresh().catch(() => undefined));
  live.open();
  void inbox.refresh().catch(() => undefined);
  return { client, me, inbox, live };
}

/** Forgets the login's live socket; the server has already forgotten the key. */
export function endLogin(login: Login): void {
  login.live.close();
}
