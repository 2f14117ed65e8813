/**
 * The Memory page (§10): every memory the person can read — their private pool and
 * the shared one — each with who can read it, whom it is about, who wrote it and
 * until when it is kept. Search (by meaning when the memory search model is here, else
 * by words, as the page says), narrow by pool and subject; edit a sentence, pin it
 * (kept until removed) or let it expire again, erase one, or erase everything about
 * a subject at once; add one by hand. Opened from a reply's "used memories", it shows
 * that memory, or says plainly that it is no longer kept.
 *
 * Owns: the calls to `/api/memories`. Never: keeps a memory after the page leaves,
 * nor puts its words in the address bar. People are named as the server names them
 * with each memory (`about_name`, `author_name`), never by their ids.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { Conversation, Memory, MemorySearch, Pool } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatDay, formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { DebouncedSearch } from '../../state/debounced-search.js';
import type { Login } from '../../state/login.js';
import { countAbout, filterMemories, subjectKey, subjectKeys, subjectOfKey, type SubjectKey } from '../../state/memories.js';
import { routeHash } from '../../state/route.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { OpenSessionEvent } from '../events.js';
import { iconButton } from '../icon-button.js';
import { pencilIcon, pinIcon, plusIcon, trashIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-memories.styles.js';

const SEARCH_DELAY_MS = 250;

/** A memory whose sentence is being changed, and the words typed so far. */
interface Editing {
  readonly id: string;
  readonly text: string;
}

/**
 * Test hooks: `[data-testid=memory-add-text]`, `memory-add-pool`, `memory-add-subject`,
 * `memory-add-pinned`, `memory-add`, `memory-add-error`; `memories-search`,
 * `memories-search-by` (its `data-by`: `meaning` or `words`), `memories-pool`,
 * `memories-subject`, `erase-about`; `[data-testid=memory-item]` (its `data-id`, and
 * `data-focused` on the one opened from a reply) with `memory-text`, `memory-pool`,
 * `memory-about`, `memory-author`, `memory-expiry`, `memory-edit`, `memory-edit-text`,
 * `memory-save`, `memory-pin`, `memory-erase`; `memory-focus-gone`; `memories-empty`,
 * `memories-error`.
 *
 * @summary The Memory page: list, search, filter, edit, pin, erase, add.
 * @fires skald-open-session - open the conversation a memory came from
 */
@customElement('skald-memories')
export class SkaldMemories extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** A memory to show (a reply's "used memories" link): scrolled to and marked, or said to be gone. */
  @property({ attribute: false }) focusMemory: string | null = null;

  @state() private query = '';
  @state() private hits: readonly Memory[] | null = null;
  @state() private pool: Pool | '' = '';
  @state() private subject: SubjectKey = '';
  @state() private editing: Editing | null = null;
  @state() private busy = false;
  @state() private error = '';
  @state() private addError = '';
  @state() private announcement = '';
  /** The memory marked as the one the person came to see. */
  @state() private focused: string | null = null;
  /** The memory the person came to see is no longer kept. */
  @state() private focusGone = false;

  @state() private newText = '';
  @state() private newPool: Pool = 'private';
  @state() private newSubject: 'self' | 'instance' = 'self';
  @state() private newPinned = false;

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #list = new ResourceController<readonly Memory[]>(this, (signal) => this.#client().memories({}, signal));
  /** How search goes: by meaning, or by words only. */
  readonly #searchBy = new ResourceController<MemorySearch>(this, (signal) => this.#client().memorySearch(signal));
  /** The conversations, to name the one a memory came from by its title. */
  readonly #sessions = new ResourceController<readonly Conversation[]>(this, (signal) => this.#client().sessions(signal));
  readonly #search = new DebouncedSearch<readonly Memory[]>({
    delayMs: SEARCH_DELAY_MS,
    run: (query) => this.#client().memories({ q: query }),
    onResults: (hits) => {
      this.hits = hits;
      if (hits === null) return;
      const shown = this.#narrow(hits).length;
      this.announcement = plural(shown, strings.memoriesFound).replace('{n}', formatNumber(shown));
    },
    onError: (error) => (this.error = describeError(error)),
  });
  /** The `focusMemory` already shown (or found gone), so it is looked for once. */
  #focusDone: string | null = null;

  #client() {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', 'not logged in', 0);
    return client;
  }

  get #me(): string {
    return this.login?.me.user.id ?? '';
  }

  /** A shared memory an administrator did not keep is theirs to change too; they add the memory search model. */
  get #admin(): boolean {
    return this.login?.me.role?.manage_instance ?? false;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#search.cancel();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('focusMemory') && this.focusMemory !== this.#focusDone) {
      this.focused = null;
      this.focusGone = false;
    }
  }

  protected override updated(): void {
    const id = this.focusMemory;
    // Once the list is here, so the memory is shown where it stands among the others.
    if (id !== null && id !== this.#focusDone && this.#list.value !== undefined) {
      this.#focusDone = id;
      void this.#showFocused(id);
    }
  }

  /**
   * The memory a reply used, shown: every filter and search let go so it is in the list,
   * scrolled to, marked and given the focus. Erased or expired since, the page says so.
   */
  async #showFocused(id: string): Promise<void> {
    const list = this.#list.value ?? [];
    if (!list.some((memory) => memory.id === id)) {
      try {
        // Beyond the first page of the list, perhaps: it is read on its own.
        const memory = await this.#client().memory(id);
        this.#list.set([memory, ...list]);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          this.focusGone = true;
          this.announcement = strings.memoryFocusGone;
        } else {
          this.error = describeError(error);
        }
        return;
      }
    }
    this.query = '';
    this.#search.input('');
    this.pool = '';
    this.subject = '';
    this.focused = id;
    await this.updateComplete;
    const row = this.renderRoot.querySelector<HTMLElement>(`[data-testid=memory-item][data-id="${CSS.escape(id)}"]`);
    row?.scrollIntoView({ block: 'center' });
    row?.focus({ preventScroll: true });
  }

  async #refresh(): Promise<void> {
    await this.#list.reload();
    await this.#search.refresh();
  }

  /** Runs one change; the server's reason shows when it is refused. */
  async #act(change: () => Promise<string>, onError: (message: string) => void = (m) => (this.error = m)): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    this.error = '';
    this.addError = '';
    try {
      this.announcement = await change();
      await this.#refresh();
      return true;
    } catch (error) {
      onError(describeError(error));
      return false;
    } finally {
      this.busy = false;
    }
  }

  async #add(event: Event): Promise<void> {
    event.preventDefault();
    const text = this.newText.trim();
    if (text === '') {
      this.addError = strings.memoryNeedsText;
      return;
    }
    const body = { text, pool: this.newPool, subject: { kind: this.newSubject }, ...(this.newPinned ? { pinned: true } : {}) };
    const added = await this.#act(
      async () => {
        await this.#client().createMemory(body);
        return strings.memoryAdded;
      },
      (message) => (this.addError = message),
    );
    if (added) {
      this.newText = '';
      this.newPinned = false;
    }
  }

  async #save(event: Event): Promise<void> {
    event.preventDefault();
    const editing = this.editing;
    if (editing === null) return;
    const saved = await this.#act(async () => {
      await this.#client().updateMemory(editing.id, { text: editing.text.trim() });
      return strings.memorySaved;
    });
    if (saved) {
      this.editing = null;
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>(`[data-id="${editing.id}"] [data-testid=memory-edit]`)?.focus();
    }
  }

  async #pin(memory: Memory): Promise<void> {
    await this.#act(async () => {
      await this.#client().updateMemory(memory.id, { pinned: !memory.pinned });
      return strings.memorySaved;
    });
  }

  async #erase(memory: Memory): Promise<void> {
    const confirmed = await this.confirm?.ask({
      title: strings.memoryEraseTitle,
      body: strings.memoryEraseBody.replace('{text}', memory.text),
      action: strings.memoryErase,
    });
    if (!confirmed) return;
    if (
      await this.#act(async () => {
        await this.#client().deleteMemory(memory.id);
        return strings.memoryErased;
      })
    ) {
      // The memory that had the focus is gone: it goes to the list's heading.
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#list-title')?.focus();
    }
  }

  async #eraseAbout(key: SubjectKey, count: number): Promise<void> {
    const name = this.#subjectName(key);
    const confirmed = await this.confirm?.ask({
      title: strings.memoryEraseAboutTitle.replace('{name}', name),
      body: plural(count, strings.memoryEraseAboutBody).replace('{n}', formatNumber(count)).replace('{name}', name),
      action: strings.memoryErase,
    });
    if (!confirmed) return;
    const erased = await this.#act(async () => {
      const { erased, queued } = await this.#client().eraseMemories(subjectOfKey(key));
      const done = plural(erased, strings.memoryErasedCount).replace('{n}', formatNumber(erased));
      return queued > 0 ? `${done} ${plural(queued, strings.memoryQueuedCount).replace('{n}', formatNumber(queued))}` : done;
    });
    if (erased) {
      this.subject = '';
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#list-title')?.focus();
    }
  }

  #narrow(memories: readonly Memory[]): Memory[] {
    return filterMemories(memories, { pool: this.pool, subject: this.subject }, this.#me);
  }

  #subjectName(key: SubjectKey): string {
    if (key === 'self') return strings.memoryAboutYou;
    if (key === 'instance') return strings.memoryThisHome;
    return this.#names().get(key) ?? strings.unknownPerson;
  }

  /** The people the memories on the page are about or were written by, by id, as the server names them. */
  #names(): ReadonlyMap<string, string> {
    const names = new Map<string, string>();
    for (const memory of [...(this.#list.value ?? []), ...(this.hits ?? [])]) {
      if (memory.subject.kind === 'member' && memory.about_name) names.set(memory.subject.id, memory.about_name);
      if (memory.author.kind === 'person' && memory.author_name) names.set(memory.author.id, memory.author_name);
    }
    return names;
  }

  /** A shared memory is changed only by whoever kept it, or an administrator (the server says so too). */
  #mayChange(memory: Memory): boolean {
    return memory.pool === 'private' || memory.owner === this.#me || this.#admin;
  }

  override render(): TemplateResult {
    return html`
      <header class="bar"><h2 id="memories-title">${strings.memoriesTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.memoriesLead}</p>
          ${this.#renderAdd()}
          <section class="block" aria-labelledby="list-title">
            <h3 id="list-title" tabindex="-1">${strings.memoriesListLabel}</h3>
            ${this.#renderFilters()}
            ${this.focusGone
              ? html`<p class="notice warn" role="status" data-testid="memory-focus-gone">${strings.memoryFocusGone}</p>`
              : nothing}
            ${this.error ? html`<p class="notice error" role="alert" data-testid="memories-error">${this.error}</p>` : nothing}
            ${this.#list.status()} ${this.#renderList()}
          </section>
        </div>
      </div>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderAdd(): TemplateResult {
    return html`<section class="block" aria-labelledby="add-title">
      <h3 id="add-title">${strings.memoryAddTitle}</h3>
      <form @submit=${(e: Event) => void this.#add(e)}>
        <div class="field">
          <label for="add-text">${strings.memoryAddText}</label>
          <input
            id="add-text"
            type="text"
            data-testid="memory-add-text"
            autocomplete="off"
            aria-invalid=${this.addError ? 'true' : 'false'}
            aria-describedby=${this.addError ? 'add-error' : nothing}
            .value=${this.newText}
            @input=${(e: Event) => (this.newText = (e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="grid-fields">
          <div class="field">
            <label for="add-pool">${strings.memoryAddPool}</label>
            <select id="add-pool" data-testid="memory-add-pool" @change=${(e: Event) => (this.newPool = (e.target as HTMLSelectElement).value as Pool)}>
              <option value="private" ?selected=${this.newPool === 'private'}>${strings.memoryPoolPrivate}</option>
              <option value="shared" ?selected=${this.newPool === 'shared'}>${strings.memoryPoolShared}</option>
            </select>
          </div>
          <div class="field">
            <label for="add-subject">${strings.memoryAddSubject}</label>
            <select
              id="add-subject"
              data-testid="memory-add-subject"
              @change=${(e: Event) => (this.newSubject = (e.target as HTMLSelectElement).value as 'self' | 'instance')}
            >
              <option value="self" ?selected=${this.newSubject === 'self'}>${strings.memorySubjectSelf}</option>
              <option value="instance" ?selected=${this.newSubject === 'instance'}>${strings.memorySubjectInstance}</option>
            </select>
          </div>
        </div>
        <div class="check">
          <input
            id="add-pinned"
            type="checkbox"
            data-testid="memory-add-pinned"
            .checked=${this.newPinned}
            @change=${(e: Event) => (this.newPinned = (e.target as HTMLInputElement).checked)}
          />
          <label for="add-pinned">${strings.memoryAddPinned}</label>
        </div>
        ${this.addError ? html`<p id="add-error" class="notice error" role="alert" data-testid="memory-add-error">${this.addError}</p>` : nothing}
        <div class="actions">
          <button type="submit" class="primary" data-testid="memory-add" ?disabled=${this.busy}>${plusIcon}${strings.memoryAdd}</button>
        </div>
      </form>
    </section>`;
  }

  #renderFilters(): TemplateResult {
    const all = this.#list.value ?? [];
    const keys = subjectKeys(all, this.#me);
    // A subject filtered on that is gone (erased) still shows as chosen until it is changed.
    if (this.subject !== '' && !keys.includes(this.subject)) keys.push(this.subject);
    const count = this.subject === '' ? 0 : countAbout(all, this.subject, this.#me);
    return html`<div class="filters">
        <div class="field search">
          <label for="memories-search">${strings.memoriesSearchLabel}</label>
          <input
            id="memories-search"
            type="search"
            data-testid="memories-search"
            placeholder=${strings.memoriesSearchPlaceholder}
            aria-describedby=${this.#searchBy.value ? 'memories-search-by' : nothing}
            .value=${this.query}
            @input=${(e: Event) => {
              this.query = (e.target as HTMLInputElement).value;
              this.#search.input(this.query);
            }}
          />
          ${this.#renderSearchBy()}
        </div>
        <div class="field">
          <label for="memories-pool">${strings.memoriesPoolFilter}</label>
          <select id="memories-pool" data-testid="memories-pool" @change=${(e: Event) => (this.pool = (e.target as HTMLSelectElement).value as Pool | '')}>
            <option value="" ?selected=${this.pool === ''}>${strings.memoriesAnyPool}</option>
            <option value="private" ?selected=${this.pool === 'private'}>${strings.memoryPoolPrivate}</option>
            <option value="shared" ?selected=${this.pool === 'shared'}>${strings.memoryPoolShared}</option>
          </select>
        </div>
        <div class="field">
          <label for="memories-subject">${strings.memoriesSubjectFilter}</label>
          <select id="memories-subject" data-testid="memories-subject" @change=${(e: Event) => (this.subject = (e.target as HTMLSelectElement).value)}>
            <option value="" ?selected=${this.subject === ''}>${strings.memoriesAnySubject}</option>
            ${keys.map((key) => html`<option value=${key} ?selected=${this.subject === key}>${this.#subjectName(key)}</option>`)}
          </select>
        </div>
      </div>
      ${count > 0
        ? html`<div class="actions erase-about">
            <button type="button" class="danger" data-testid="erase-about" ?disabled=${this.busy} @click=${() => void this.#eraseAbout(this.subject, count)}>
              ${trashIcon}${strings.memoryEraseAbout.replace('{name}', this.#subjectName(this.subject))}
            </button>
          </div>`
        : nothing}`;
  }

  /** How search (and the assistant's recall) goes: by meaning with the model named, or by words only. */
  #renderSearchBy(): TemplateResult | typeof nothing {
    const by = this.#searchBy.value;
    if (by === undefined) return nothing;
    const text =
      by.by === 'meaning'
        ? html`${strings.memoriesByMeaning.replace('{model}', by.model ?? strings.memoriesSearchModel)}`
        : fill(strings.memoriesByWords, {
            models: this.#admin
              ? html`<a href=${routeHash({ page: 'admin', section: 'models' })} data-testid="memories-add-search-model">${strings.memoriesModelsPage}</a>`
              : strings.memoriesModelsPage,
          });
    return html`<p class="hint" id="memories-search-by" data-testid="memories-search-by" data-by=${by.by}>${text}</p>`;
  }

  #renderList(): TemplateResult | typeof nothing {
    const all = this.#list.value;
    if (all === undefined) return nothing;
    if (all.length === 0 && this.hits === null) {
      return html`<div class="none" data-testid="memories-empty">
        <p><strong>${strings.memoriesEmptyTitle}</strong></p>
        <p class="hint">${strings.memoriesEmpty}</p>
      </div>`;
    }
    const shown = this.#narrow(this.hits ?? all);
    if (shown.length === 0) return html`<p class="hint" data-testid="memories-no-match">${strings.memoriesNoMatch}</p>`;
    return html`<ul class="rows" aria-labelledby="list-title">
      ${shown.map((memory) => this.#renderItem(memory))}
    </ul>`;
  }

  #renderItem(memory: Memory): TemplateResult {
    const editing = this.editing?.id === memory.id ? this.editing : null;
    const textId = `text-${memory.id}`;
    const mayChange = this.#mayChange(memory);
    const focused = this.focused === memory.id;
    return html`<li
      data-testid="memory-item"
      data-id=${memory.id}
      data-focused=${focused ? 'true' : nothing}
      tabindex=${focused ? '-1' : nothing}
    >
      ${focused ? html`<span class="visually-hidden">${strings.memoryFocusedLabel}</span>` : nothing}
      ${editing
        ? html`<form class="edit" @submit=${(e: Event) => void this.#save(e)} @keydown=${(e: KeyboardEvent) => e.key === 'Escape' && (this.editing = null)}>
            <label class="visually-hidden" for="edit-${memory.id}">${strings.memoryTextLabel}</label>
            <input
              id="edit-${memory.id}"
              type="text"
              data-testid="memory-edit-text"
              autocomplete="off"
              .value=${editing.text}
              @input=${(e: Event) => (this.editing = { id: memory.id, text: (e.target as HTMLInputElement).value })}
            />
            <div class="actions">
              <button type="submit" class="primary" data-testid="memory-save" ?disabled=${this.busy}>${strings.save}</button>
              <button type="button" @click=${() => (this.editing = null)}>${strings.cancel}</button>
            </div>
          </form>`
        : html`<p class="text" id=${textId} data-testid="memory-text">${memory.text}</p>`}
      <p class="facts small">
        <span class="tag ${memory.pool === 'private' ? 'local' : 'plain'}" data-testid="memory-pool">
          ${memory.pool === 'private' ? strings.memoryPoolPrivate : strings.memoryPoolShared}
        </span>
        <span data-testid="memory-about">${strings.memoryAboutWhom.replace('{name}', this.#subjectName(subjectKey(memory.subject, this.#me)))}</span>
        <span data-testid="memory-author">${fill(strings.memoryWrittenBy, { who: this.#author(memory) })}</span>
        <span data-testid="memory-expiry">
          ${memory.pinned || memory.expires_at === null
            ? strings.memoryPinnedForever
            : fill(strings.memoryExpires, { date: html`<time datetime=${memory.expires_at}>${formatDay(memory.expires_at)}</time>` })}
        </span>
        ${memory.local_only ? html`<span class="tag local">${strings.memoryLocalTag}</span>` : nothing}
        ${memory.outside ? html`<span class="tag remote">${strings.memoryOutsideTag}</span>` : nothing}
      </p>
      ${editing
        ? nothing
        : html`<div class="actions tools">
            ${mayChange
              ? html`${iconButton({
                  testid: 'memory-edit',
                  label: strings.memoryEdit,
                  icon: pencilIcon,
                  describedBy: textId,
                  disabled: this.busy,
                  onClick: () => (this.editing = { id: memory.id, text: memory.text }),
                })}
                ${iconButton({
                  testid: 'memory-pin',
                  label: memory.pinned ? strings.memoryUnpin : strings.memoryPin,
                  icon: pinIcon,
                  className: memory.pinned ? 'pinned' : '',
                  describedBy: textId,
                  disabled: this.busy,
                  onClick: () => void this.#pin(memory),
                })}`
              : nothing}
            ${iconButton({
              testid: 'memory-erase',
              label: strings.memoryErase,
              icon: trashIcon,
              className: 'erase',
              describedBy: textId,
              disabled: this.busy,
              onClick: () => void this.#erase(memory),
            })}
          </div>`}
    </li>`;
  }

  /**
   * "an agent (main), in “Tea”" with the conversation one click away (named by its title
   * when the list has it), "you", or a person by name.
   */
  #author(memory: Memory): TemplateResult | string {
    const author = memory.author;
    if (author.kind === 'person') {
      return author.id === this.#me ? strings.memoryByYou : (memory.author_name ?? this.#names().get(author.id) ?? strings.unknownPerson);
    }
    const session = memory.source_session;
    if (session === null) return strings.memoryByAgent.replace('{agent}', author.agent);
    const title = this.#sessions.value?.find((conversation) => conversation.id === session)?.title;
    const link = html`<button type="button" class="link" data-testid="memory-conversation" @click=${() => this.dispatchEvent(new OpenSessionEvent(session))}>
      ${title ? strings.memoryConversationTitled.replace('{title}', title) : strings.memoryConversationLink}
    </button>`;
    return fill(strings.memoryByAgentIn.replace('{agent}', author.agent), { conversation: link });
  }
}

/** A template's `{placeholders}` filled with text or markup, so a translation may put a link anywhere. */
function fill(template: string, values: Readonly<Record<string, TemplateResult | string>>): TemplateResult {
  const parts = template.split(/\{(\w+)\}/);
  return html`${parts.map((part, i) => (i % 2 === 1 ? (values[part] ?? `{${part}}`) : part))}`;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-memories': SkaldMemories;
  }
}
