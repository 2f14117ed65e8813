/**
 * An approval card (§8.4): the assistant wants to use a tool that needs the
 * person's yes. Shows what, for whom, why, and the exact arguments the
 * decision binds (by their hash, which is sent back with the decision, so a
 * card that changed since it was shown is refused rather than approved).
 * "Always allow" is offered only where the person's role may approve.
 *
 * A `remember` card (§10) shows instead the lines the server fixed when it made the
 * card — the sentence, about whom, who wrote it, until when, who can read it — and,
 * where something similar is already kept, Replace it / Keep both / Deny. It never
 * offers "always allow": no rule may skip a memory's card, and the server refuses one.
 *
 * A card whose role sends it to the person's supervisor (§6.2) says it waits for them, by
 * name, and offers only Deny; shown to that supervisor, it offers Allow once and Deny,
 * its exact arguments in full view. A decided card says how it was decided, and by whom
 * when that was not the person.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';

import type { ApprovalCard, MemoryCard, ScheduleCard, ToolServerLabel } from '../../api/types.js';
import { strings, toolLabel } from '../../i18n/en.js';
import { formatDay, formatList, formatTimeIn } from '../../i18n/format.js';
import { describeCall } from '../../i18n/tool-sentences.js';
import { controls } from '../../styles/controls.js';
import { DecideEvent } from '../events.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-approval-card.styles.js';

/**
 * Test hooks: `[data-testid=allow]`, `[data-testid=deny]`,
 * `[data-testid=always]`, `[data-testid=card-arguments]`; on a remember card
 * `[data-testid=memory-lines]` (each line `[data-line=remember|about|author|kept|where]`),
 * `memory-about-another`, `memory-local`, `memory-problem`, and per similar memory
 * `[data-testid=replace]` (its `data-id`); on a schedule card `[data-testid=schedule-lines]`
 * (each line `[data-line=what|next|repeat|runs|for|missed]`) and `schedule-upcoming`;
 * `[data-testid=card-waiting-supervisor]` on a card waiting for the supervisor,
 * `[data-testid=card-decided]` (its `data-state`) on a decided one.
 *
 * @summary An approval card with the exact arguments and Allow / Deny / Always allow;
 *   for a memory, its lines and Replace it / Keep both / Deny.
 * @fires skald-decide - the person decided
 */
@customElement('skald-approval-card')
export class SkaldApprovalCard extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) card: ApprovalCard | null = null;
  /** The person's role may approve (and so may "always allow"). */
  @property({ type: Boolean }) mayApprove = false;
  /**
   * The card waits for the person's supervisor, these by name (empty when their names are
   * not known): only they may allow it. `null` for a card the person decides.
   */
  @property({ attribute: false }) supervisors: readonly string[] | null = null;
  /** Shown to the supervisor who decides it for someone else: Allow once and Deny, never always. */
  @property({ type: Boolean }) supervising = false;
  /** The decision is on its way. */
  @property({ type: Boolean }) busy = false;
  /** Why the last decision failed, if it did. */
  @property() error = '';
  /** Show which conversation it belongs to (in the inbox). */
  @property() context = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  /**
   * Takes the focus on the card itself, not on a button: a key pressed as the card
   * appears (an Enter meant for the message field) must never decide it. Tab goes on to
   * what it shows, then to its buttons.
   */
  override focus(options?: FocusOptions): void {
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('section.card')?.focus(options));
  }

  override render(): TemplateResult | typeof nothing {
    const card = this.card;
    if (card === null) return nothing;
    const details = card.details;
    const label = toolLabel(details.tool);
    // A tool the page knows reads as a sentence, with the exact arguments one click away;
    // any other shows them as they are.
    const sentence = describeCall(details.tool, details.arguments);
    const memory = details.memory ?? null;
    const job = details.schedule ?? null;
    const pending = card.state === 'pending';
    const mayAllow = this.supervising || this.mayApprove;
    // "Always" can never skip a memory's card: not offered, so never refused. A supervisor
    // decides one call at a time.
    const always = this.mayApprove && !this.supervising && memory === null;
    // The supervisor sees in full what they would let run for someone else (the gate's
    // reason, worded for the person, is left out).
    const inFull = this.supervising || (sentence === null && memory === null && job === null);
    const exact = html`<pre class="args" data-testid="card-arguments" aria-labelledby="args-label" tabindex="0">${prettyArguments(details.arguments)}</pre>
      <p class="meta">
        ${details.reason && !this.supervising ? html`<span>${details.reason}</span>` : nothing}
        <span title=${details.arguments_hash}>${strings.approvalFingerprint.replace('{hash}', details.arguments_hash.slice(0, 12))}</span>
      </p>`;
    return html`
      <section class="card" aria-labelledby="title" aria-describedby="what" tabindex="-1">
        <header>
          ${pending
            ? html`<span class="kind">${strings.approvalKind}</span>`
            : html`<span class="kind decided" data-testid="card-decided" data-state=${card.state}>${decidedText(card)}</span>`}
          ${this.context ? html`<span class="context">${this.context}</span>` : nothing}
        </header>
        <h3 id="title">${strings.approvalTitle.replace('{tool}', label)}</h3>
        ${memory !== null
          ? this.#renderMemory(memory)
          : job !== null
            ? this.#renderSchedule(job)
            : html`<p id="what" class="summary" data-testid="card-sentence">
                ${sentence ?? card.summary}
                ${details.for ? html`<span class="for">· ${strings.approvalFor.replace('{name}', details.for.name)}</span>` : nothing}
              </p>`}
        ${details.tool_server ? this.#renderToolServer(details.tool_server) : nothing}
        ${details.why ? html`<blockquote class="why"><span class="visually-hidden">${strings.approvalWhy}</span>${details.why}</blockquote>` : nothing}
        ${inFull
          ? html`<p class="heading" id="args-label">${strings.approvalArguments}</p>
              ${exact}`
          : html`<details class="exact">
              <summary id="args-label">${strings.approvalExact}</summary>
              ${exact}
            </details>`}
        ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
        ${pending ? this.#renderActions(details, mayAllow, always) : nothing}
      </section>
      <skald-confirm></skald-confirm>
    `;
  }

  /** Who may decide, and the buttons for what this person may decide. */
  #renderActions(details: ApprovalCard['details'], mayAllow: boolean, always: boolean): TemplateResult {
    const memory = details.memory ?? null;
    const label = toolLabel(details.tool);
    const allowLabel = memory !== null && memory.similar.length > 0 ? strings.memoryKeepBoth : this.supervising ? strings.allowOnce : strings.allow;
    return html`${mayAllow ? nothing : this.#renderWhoDecides()}
        <div class="actions">
          ${mayAllow
            ? html`<button type="button" class="primary" data-testid="allow" ?disabled=${this.busy} @click=${() => this.#decide('allow', false)}>
                ${allowLabel}
              </button>`
            : nothing}
          <button type="button" data-testid="deny" ?disabled=${this.busy} @click=${() => this.#decide('deny', false)}>${strings.deny}</button>
          ${always
            ? html`<button
                type="button"
                class="quiet"
                data-testid="always"
                ?disabled=${this.busy}
                title=${strings.alwaysAllowTitle.replace('{tool}', details.tool)}
                @click=${() => void this.#alwaysAllow(label)}
              >
                ${strings.alwaysAllow}
              </button>`
            : nothing}
        </div>`;
  }

  /** Why there is no Allow: the supervisor decides, or the role may not approve at all. */
  #renderWhoDecides(): TemplateResult {
    const names = this.supervisors;
    if (names === null) return html`<p class="hint">${strings.approvalMayNotApprove}</p>`;
    const text = names.length === 0 ? strings.approvalWaitingSupervisorUnnamed : strings.approvalWaitingSupervisor.replace('{names}', formatList(names));
    return html`<p class="hint waiting" data-testid="card-waiting-supervisor">${text}</p>`;
  }

  /**
   * A job as it would be made, checked by the server as the job itself would be: what,
   * the next times in the zone it is set in, how it repeats, who runs it and for whom.
   */
  #renderSchedule(job: ScheduleCard): TemplateResult {
    const what = (job.kind === 'task' ? strings.scheduleTask : strings.scheduleReminder).replace('{text}', job.text);
    const runs =
      job.agent === null
        ? null
        : job.model === null
          ? strings.scheduleRunsAs.replace('{agent}', job.agent)
          : strings.scheduleRunsAsWith.replace('{agent}', job.agent).replace('{model}', job.model);
    const whom = job.shared
      ? strings.scheduleForEveryone
      : job.for === null
        ? strings.scheduleForYou
        : strings.scheduleForMember.replace('{name}', job.for);
    return html`<dl id="what" class="memory" data-testid="schedule-lines">
        ${line('what', strings.scheduleWhatLabel, html`<span class="sentence">${what}</span>`)}
        ${line(
          'next',
          strings.scheduleNextLabel.replace('{zone}', job.zone),
          html`<ul class="times" data-testid="schedule-upcoming">
            ${job.upcoming.map((time) => html`<li><time datetime=${time}>${formatTimeIn(time, job.zone)}</time></li>`)}
          </ul>`,
        )}
        ${line('repeat', strings.scheduleRepeatLabel, job.repeat === null ? strings.scheduleOnce : html`<code>${job.repeat}</code>`)}
        ${runs === null ? nothing : line('runs', strings.scheduleRunsLabel, runs)}
        ${line('for', strings.scheduleForLabel, whom)}
        ${line('missed', strings.scheduleMissedLabel, job.missed === 'run_once' ? strings.reminderMissedRunOnce : strings.reminderMissedSkip)}
      </dl>
      ${job.readable_while_away && !job.shared ? html`<p class="hint" data-testid="schedule-readable">${strings.reminderReadableOn}</p>` : nothing}`;
  }

  /** Where an MCP call's arguments go, and whether everyone's calls share the server. */
  #renderToolServer(server: ToolServerLabel): TemplateResult {
    const where = server.privacy === 'remote' ? strings.toolServerRemote : strings.toolServerLocal;
    return html`<p class="hint" data-testid="tool-server">
      ${strings.toolServerGoes.replace('{server}', server.server)} · ${where}
      ${server.shared ? html` · <strong data-testid="tool-server-shared">${strings.toolServerShared}</strong>` : nothing}
    </p>`;
  }

  /**
   * The memory's lines, each labelled, as the server fixed them: the person decides on
   * exactly these. Warnings follow — personal data about someone else, kept on this
   * computer only, a call that would fail — then what is already kept that is alike.
   */
  #renderMemory(memory: MemoryCard): TemplateResult {
    const about = memory.subject.kind === 'instance' || memory.about === null ? strings.memoryThisHome : memory.about;
    const where = memory.pool === 'shared' ? strings.memoryWhereShared : strings.memoryWherePrivate;
    return html`
      <dl id="what" class="memory" data-testid="memory-lines">
        ${line('remember', strings.memoryRememberLabel, html`<span class="sentence">${memory.text}</span>`)}
        ${line('about', strings.memoryAboutLabel, about)}
        ${line('author', strings.memoryWrittenByLabel, strings.memoryWrittenByAgent.replace('{agent}', memory.agent))}
        ${line('kept', strings.memoryKeptUntilLabel, html`<time datetime=${memory.kept_until}>${formatDay(memory.kept_until)}</time>`)}
        ${line('where', strings.memoryWhereLabel, where)}
      </dl>
      ${memory.about_another
        ? html`<p class="notice warn" data-testid="memory-about-another">${strings.memoryAboutAnother.replaceAll('{name}', about)}</p>`
        : nothing}
      ${memory.local_only ? html`<p class="hint" data-testid="memory-local">${strings.memoryLocalOnly}</p>` : nothing}
      ${memory.problem
        ? html`<p class="notice error" data-testid="memory-problem">${strings.memoryProblem.replace('{problem}', memory.problem)}</p>`
        : nothing}
      ${memory.similar.length > 0
        ? html`<div class="similar">
            <p class="heading" id="similar-label">${strings.memorySimilar}</p>
            <ul aria-labelledby="similar-label">
              ${memory.similar.map(
                (similar) => html`<li>
                  <span class="sentence">${similar.text}</span>
                  ${this.mayApprove && !this.supervising && this.card?.state === 'pending'
                    ? html`<button
                        type="button"
                        data-testid="replace"
                        data-id=${similar.id}
                        ?disabled=${this.busy}
                        @click=${() => this.#decide('allow', false, similar.id)}
                      >
                        ${strings.memoryReplace}
                      </button>`
                    : nothing}
                </li>`,
              )}
            </ul>
          </div>`
        : nothing}
    `;
  }

  /**
   * "Always allow" is asked again first: it lets the tool run unasked from now on, for this
   * person, until they take it back on My data.
   */
  async #alwaysAllow(label: string): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.alwaysAllowConfirmTitle.replace('{tool}', label),
      body: strings.alwaysAllowConfirmBody.replace('{tool}', label),
      action: strings.alwaysAllow,
    });
    if (confirmed) this.#decide('allow', true);
  }

  #decide(decision: 'allow' | 'deny', always: boolean, replace?: string): void {
    if (this.card === null || this.busy) return;
    this.dispatchEvent(new DecideEvent(this.card, decision, always, replace));
  }
}

/** How a card that no longer waits was decided, and by whom when not by the person. */
export function decidedText(card: ApprovalCard): string {
  const by = card.decided_by ?? null;
  switch (card.state) {
    case 'allowed':
      return by === null ? strings.approvalAllowed : strings.approvalAllowedBy.replace('{name}', by);
    case 'denied':
      return by === null ? strings.approvalDenied : strings.approvalDeniedBy.replace('{name}', by);
    default:
      return strings.approvalClosed;
  }
}

/** One labelled line of a card's list (`data-line` names it for tests). */
function line(key: string, label: string, value: TemplateResult | string): TemplateResult {
  return html`<div class="line" data-line=${key}><dt>${label}</dt><dd>${value}</dd></div>`;
}

/** Arguments as indented JSON; text that is no JSON is shown as it is. */
export function prettyArguments(value: unknown): string {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return JSON.stringify(parsed, null, 2) ?? String(value);
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-approval-card': SkaldApprovalCard;
  }
}
