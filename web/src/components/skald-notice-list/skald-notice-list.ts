/**
 * Notices (§3): what someone else changed in where the person's words go or
 * how they are handled, each said in a sentence — who, what, when — with a
 * way to mark them read. Shown in the inbox, counted in the navigation. A
 * supervision asked for or ended (§6.2) is answered, or followed by a new
 * key, on the privacy page, which each notice links to.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { Model } from '../../api/types.js';
import { StoreController } from '../../controllers/store-controller.js';
import { strings, type TextKey } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { viewNotice, type NoticeChange, type NoticeNames, type NoticeView } from '../../state/notices.js';
import { controls, page } from '../../styles/controls.js';
import { formatTime } from '../../i18n/format.js';
import { styles } from './skald-notice-list.styles.js';

const CHANGE_WORDS: Readonly<Record<NoticeChange, TextKey>> = {
  name: 'noticeChangeName',
  address: 'noticeChangeAddress',
  key: 'noticeChangeKey',
  trust: 'noticeChangeTrust',
  models: 'noticeChangeModels',
};

/**
 * Test hooks: `[data-testid=notice]` per notice (its `data-kind`),
 * `[data-testid=notices-seen]`.
 *
 * @summary The person's unseen notices, in words.
 */
@customElement('skald-notice-list')
export class SkaldNoticeList extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** The models the person may use: they name the providers a notice mentions by id. */
  @property({ attribute: false }) models: readonly Model[] = [];

  @state() private agents: ReadonlyMap<string, string> = new Map();
  @state() private busy = false;
  @state() private error = '';

  #namesRead = false;

  constructor() {
    super();
    new StoreController(this, () => this.login?.notices);
  }

  protected override updated(): void {
    const notices = this.login?.notices.notices ?? [];
    if (!this.#namesRead && notices.some((n) => n.kind === 'agent_changed')) {
      this.#namesRead = true;
      void this.#readNames();
    }
  }

  /** Agents' names, for notices that give only an agent's id. */
  async #readNames(): Promise<void> {
    const login = this.login;
    if (!login) return;
    try {
      const agents = await login.client.agents();
      this.agents = new Map(agents.agents.map((a) => [a.id, a.name]));
    } catch {
      // The notice then names the agent by its id.
    }
  }

  override render(): TemplateResult | typeof nothing {
    const notices = this.login?.notices.notices ?? [];
    if (notices.length === 0) return nothing;
    const names: NoticeNames = {
      providers: new Map(this.models.map((m) => [m.provider_id, m.provider])),
      agents: this.agents,
    };
    return html`<section class="block notices" aria-labelledby="notices-title">
      <div class="row-head">
        <h3 id="notices-title">${strings.noticesTitle}</h3>
        <button type="button" data-testid="notices-seen" ?disabled=${this.busy} @click=${() => void this.#seen()}>
          ${strings.noticesSeen}
        </button>
      </div>
      <p class="muted small">${strings.noticesLead}</p>
      ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
      <ul class="rows">
        ${notices.map((notice) => {
          const view = viewNotice(notice, names);
          const supervision = view.kind === 'supervision_requested' || view.kind === 'supervision_ended';
          return html`<li data-testid="notice" data-kind=${view.kind}>
            <p class="sentence">${sentenceFor(view)}</p>
            ${view.kind === 'declined_change'
              ? html`<button
                  type="button"
                  data-testid="declined-accept"
                  ?disabled=${this.busy}
                  @click=${() => void this.#accept(view.id)}
                >
                  ${strings.heldContinue}
                </button>`
              : nothing}
            <p class="muted small">
              ${formatTime(view.at)} ·
              <a href="#/privacy">${supervision ? strings.noticeSupervisionSee : strings.noticeSeePrivacy}</a>
            </p>
          </li>`;
        })}
      </ul>
    </section>`;
  }

  /** Takes a change declined earlier after all. */
  async #accept(id: number): Promise<void> {
    const notices = this.login?.notices;
    if (!notices || this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      await notices.decide(id, 'accept');
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  async #seen(): Promise<void> {
    const notices = this.login?.notices;
    if (!notices || this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      await notices.markAllSeen();
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }
}

/** A notice in one sentence. */
export function sentenceFor(view: NoticeView): string {
  const who = view.who ?? strings.noticeSomeone;
  const subject = view.subject ?? '';
  switch (view.kind) {
    case 'provider_added':
      return strings.noticeProviderAdded.replace('{who}', who).replace('{name}', subject || strings.noticeUnnamedProvider);
    case 'provider_deleted':
      return subject
        ? strings.noticeProviderDeleted.replace('{who}', who).replace('{name}', subject)
        : strings.noticeProviderDeletedUnnamed.replace('{who}', who);
    case 'provider_changed': {
      const changes = view.changes.map((change) => strings[CHANGE_WORDS[change]]).join(', ') || strings.noticeChangeSettings;
      return strings.noticeProviderChanged
        .replace('{who}', who)
        .replace('{name}', subject || strings.noticeUnnamedProvider)
        .replace('{changes}', changes);
    }
    case 'agent_changed':
      if (view.source === 'disk') return strings.noticeAgentDisk.replace('{name}', subject);
      if (view.source === 'bundled') return strings.noticeAgentBundled.replace('{name}', subject);
      return strings.noticeAgentChanged.replace('{who}', who).replace('{name}', subject);
    case 'declined_change':
      return strings.noticeDeclined.replace('{what}', view.what ?? strings.noticeOther);
    case 'held_change':
    case 'change_applied': {
      const what = view.what ?? strings.noticeOther;
      if (view.outside) return strings.noticeChangeOutside.replace('{what}', what);
      return strings.noticeChangeBy.replace('{what}', what).replace('{who}', who);
    }
    case 'supervision_requested':
      return subject === '' || who === subject
        ? strings.noticeSupervisionAsked.replace('{name}', subject || who)
        : strings.noticeSupervisionAskedBy.replace('{who}', who).replace(/\{name\}/g, subject);
    case 'supervision_ended':
      return subject === '' || who === subject
        ? strings.noticeSupervisionLeft.replace('{name}', subject || who)
        : strings.noticeSupervisionEnded.replace('{who}', who).replace('{name}', subject);
    case 'job_missed': {
      const missed = view.missed ?? { count: 1, more: false, last: '', ran: false };
      const when = formatTime(missed.last);
      const said =
        missed.count === 1
          ? strings.noticeJobMissedOnce.replace('{time}', when)
          : (missed.more ? strings.noticeJobMissedMore : strings.noticeJobMissedMany).replace('{count}', String(missed.count)).replace('{time}', when);
      return missed.ran ? `${said} ${strings.noticeJobRanNow}` : said;
    }
    case 'other':
      return strings.noticeOther;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-notice-list': SkaldNoticeList;
  }
}
