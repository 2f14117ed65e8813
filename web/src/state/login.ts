/**
 * One person's login, for as long as it lasts: their session client, who they
 * are, their language, their inbox, their notices and their live events. Made
 * when a space unlocks, dropped when it locks; nothing of it outlives the page
 * (a reload starts at the picker again). The page speaks the person's language
 * from the login on and the browser's again once it ends.
 */
import type { ApiClient } from '../api/client.js';
import type { Me, Unlocked } from '../api/types.js';
import { LANGUAGE_SETTING, parseChoice, resolveLocale, useLocale, type LanguageChoice } from '../i18n/locale.js';
import { InboxStore } from './inbox.js';
import { LiveConnection, type LiveEventMessage } from './live.js';
import { NoticesStore } from './notices.js';
import { parseAppearance, SYSTEM_LOOK, useAppearance } from './appearance.js';
import { parseVoiceSettings, type VoiceSettings } from './voice-settings.js';

export interface Login {
  /** The client that carries this person's session token. */
  readonly client: ApiClient;
  readonly me: Me;
  readonly inbox: InboxStore;
  readonly notices: NoticesStore;
  readonly live: LiveConnection;
  /** The language the person chose (their `language` setting); changed on My data. */
  language: LanguageChoice;
  /** Whether their conversations' models name them (their `auto_titles` setting is not `off`). */
  autoTitles: boolean;
  /** How Skald listens and reads aloud for them (their `voice*` settings); changed on My data. */
  voice: VoiceSettings;
  /**
   * What the picker says when the server ends this login, if not "locked":
   * set just before a call that ends it on purpose (deleting the account),
   * whose socket may close before its answer arrives.
   */
  farewell: string | null;
  /**
   * Set while the key of the person's space is replaced (`rotateKey`), and kept once the
   * new session came: every session of theirs ends, this one's too, so the socket closes
   * as if locked, before or after the answer. Settles with the new session, or `null` when
   * the replacement failed (then a lock that came meanwhile stands).
   */
  rekeying: Promise<Unlocked | null> | null;
}

/** The setting that turns automatic titles off with `off` (read by the server too). */
export const AUTO_TITLES_SETTING = 'auto_titles';

/** Builds the login from an unlock: reads who the person is and opens the live socket. */
export async function startLogin(launch: ApiClient, unlocked: Unlocked): Promise<Login> {
  const client = launch.withToken(unlocked.token);
  // Settings that cannot be read leave the browser's language: nothing is lost by it.
  const none: Readonly<Record<string, string>> = {};
  const [me, settings] = await Promise.all([client.me(), client.settings().catch(() => none)]);
  const language = parseChoice(settings[LANGUAGE_SETTING]);
  useLocale(resolveLocale(language, navigator.languages));
  useAppearance(parseAppearance(settings));
  const inbox = new InboxStore(client);
  const notices = new NoticesStore(client);
  const live = new LiveConnection(client);
  live.addEventListener('live-event', (message) => {
    const event = (message as LiveEventMessage).event;
    if (event.type === 'notice') void notices.refresh().catch(() => undefined);
    else inbox.apply(event);
  });
  live.addEventListener('resync', () => {
    void inbox.refresh().catch(() => undefined);
    void notices.refresh().catch(() => undefined);
  });
  live.open();
  void inbox.refresh().catch(() => undefined);
  notices.start();
  const autoTitles = settings[AUTO_TITLES_SETTING] !== 'off';
  const voice = parseVoiceSettings(settings);
  return { client, me, inbox, notices, live, language, autoTitles, voice, farewell: null, rekeying: null };
}

/**
 * Forgets the login's live socket and timers; the server has already forgotten the key.
 * `handingOver` keeps the person's language and look: a new login of theirs follows at once
 * (a new key), and what shows in between is still theirs to read.
 */
export function endLogin(login: Login, { handingOver = false }: { readonly handingOver?: boolean } = {}): void {
  login.live.close();
  login.notices.stop();
  if (handingOver) return;
  useLocale(resolveLocale('system', navigator.languages));
  useAppearance(SYSTEM_LOOK);
}

/**
 * Replaces the key of the person's space (`POST /api/me/rotate-key`, §6.2), telling the
 * app through `rekeying` that the lock it is about to see is this and not a lock. The
 * answer is the new session, with the new recovery code to show once; the caller hands it
 * to the app (`KeyRotatedEvent`), which also takes it from `rekeying` when the lock came
 * first.
 */
export async function rotateKey(login: Login, password: string): Promise<Unlocked> {
  let settle: (unlocked: Unlocked | null) => void = () => undefined;
  login.rekeying = new Promise<Unlocked | null>((resolve) => (settle = resolve));
  try {
    const unlocked = await login.client.rotateKey(password);
    settle(unlocked);
    return unlocked;
  } catch (error) {
    settle(null);
    login.rekeying = null;
    throw error;
  }
}
