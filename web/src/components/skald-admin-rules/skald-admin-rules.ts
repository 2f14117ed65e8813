/**
 * The approval gate's shared rules (§8.4), for an administrator: what the
 * assistant may do without asking, what it may never do, and what it must
 * ask a person for. Listed in the order the gate weighs them (lowest
 * priority number first); Move up and Move down change priorities; rules
 * can be added and deleted. Every change is in the audit trail.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { ApprovalRule, RoleDetail, RuleEffect } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings, toolLabel } from '../../i18n/en.js';
import type { Login } from '../../state/login.js';
import { moveRule, nextPriority, sortRules } from '../../state/rules.js';
import { controls, page } from '../../styles/controls.js';
import { formText } from '../form.js';
import { downIcon, plusIcon, trashIcon, upIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-rules.styles.js';

interface RulesPage {
  readonly rules: readonly ApprovalRule[];
  readonly roles: readonly RoleDetail[];
}

const EFFECTS: readonly RuleEffect[] = ['allow', 'require', 'deny'];

/**
 * Test hooks: `[data-testid=rule-item]` (its `data-id`, `data-tool`) with
 * `rule-up`, `rule-down`, `rule-delete`; the form `[data-testid=rule-form]`
 * with `#rule-tool`, `#rule-args`, `#rule-role`, `#rule-effect`,
 * `#rule-priority` and `add-rule`.
 *
 * @summary Approval rules: list, add, reorder, delete.
 */
@customElement('skald-admin-rules')
export class SkaldAdminRules extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  readonly #action = new ActionController(this);
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #data = new ResourceController<RulesPage>(this, async (signal) => {
    const client = this.login?.client;
    if (!client) throw new ApiError('network', '', 0);
    const [rules, roles] = await Promise.all([client.rules(signal), client.roles(signal)]);
    return { rules, roles };
  });

  override render(): TemplateResult {
    const data = this.#data.value;
    const rules = data ? sortRules(data.rules) : [];
    return html`
      <p class="lead">${strings.rulesLead}</p>
      <ul class="how small">
        <li>${strings.rulesHowDeny}</li>
        <li>${strings.rulesHowOrder}</li>
      </ul>
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="rules-error">${this.#action.error}</p>` : nothing}
      ${this.#data.status()}
      ${data
        ? html`<section class="block" aria-labelledby="rules-title">
            <h3 id="rules-title" tabindex="-1">${strings.rulesListTitle.replace('{n}', String(rules.length))}</h3>
            <ol class="rows">
              ${rules.map((rule, index) => this.#renderRule(rule, index, rules.length, data.roles))}
            </ol>
          </section>
          ${this.#renderForm(data)}`
        : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #renderRule(rule: ApprovalRule, index: number, count: number, roles: readonly RoleDetail[]): TemplateResult {
    const role = rule.role ? (roles.find((r) => r.id === rule.role)?.label ?? rule.role) : strings.rulesEveryone;
    const name = rule.tool === '*' ? strings.rulesAnyTool : rule.tool;
    return html`<li data-testid="rule-item" data-id=${rule.id} data-tool=${rule.tool}>
      <div class="rule">
        <span class="priority num" title=${strings.rulesPriority}><span class="visually-hidden">${strings.rulesPriority} </span>${rule.priority}</span>
        <span class="what">
          <span class="row-title">
            <code>${rule.tool}</code>
            <span class="tag ${effectClass(rule.effect)}">${effectLabel(rule.effect)}</span>
          </span>
          <span class="small muted">
            ${rule.tool.includes('*') ? name : toolLabel(rule.tool)} · ${strings.rulesFor.replace('{role}', role)}
            ${rule.args ? html` · ${strings.rulesWhenArgs} <code>${describeArgs(rule.args)}</code>` : nothing}
          </span>
        </span>
        <span class="tools">
          <button type="button" class="quiet icon" data-testid="rule-up" ?disabled=${this.#action.busy || index === 0}
            aria-label=${strings.rulesUp.replace('{tool}', rule.tool)} @click=${() => void this.#move(rule, -1)}>${upIcon}</button>
          <button type="button" class="quiet icon" data-testid="rule-down" ?disabled=${this.#action.busy || index === count - 1}
            aria-label=${strings.rulesDown.replace('{tool}', rule.tool)} @click=${() => void this.#move(rule, 1)}>${downIcon}</button>
          <button type="button" class="quiet icon danger-text" data-testid="rule-delete" ?disabled=${this.#action.busy}
            aria-label=${strings.rulesDelete.replace('{tool}', rule.tool)} @click=${() => void this.#delete(rule)}>${trashIcon}</button>
        </span>
      </div>
    </li>`;
  }

  #renderForm(data: RulesPage): TemplateResult {
    return html`<section class="block" aria-labelledby="rule-form-title">
      <h3 id="rule-form-title">${strings.rulesAddTitle}</h3>
      <form data-testid="rule-form" @submit=${this.#add} novalidate>
        <div class="grid-fields">
          <div class="field">
            <label for="rule-tool">${strings.rulesTool}</label>
            <input id="rule-tool" name="tool" spellcheck="false" list="tool-names" aria-describedby="rule-tool-hint" />
            <datalist id="tool-names">
              ${TOOLS.map((tool) => html`<option value=${tool}>${toolLabel(tool)}</option>`)}
            </datalist>
            <p class="hint" id="rule-tool-hint">${strings.rulesToolHint}</p>
          </div>
          <div class="field">
            <label for="rule-effect">${strings.rulesEffect}</label>
            <select id="rule-effect" name="effect">
              ${EFFECTS.map((effect) => html`<option value=${effect} ?selected=${effect === 'require'}>${effectLabel(effect)}</option>`)}
            </select>
          </div>
          <div class="field">
            <label for="rule-role">${strings.rulesRole}</label>
            <select id="rule-role" name="role">
              <option value="">${strings.rulesEveryone}</option>
              ${data.roles.map((role) => html`<option value=${role.id}>${role.label}</option>`)}
            </select>
          </div>
          <div class="field">
            <label for="rule-priority">${strings.rulesPriority}</label>
            <input id="rule-priority" name="priority" type="number" min="0" max="1000000" .value=${String(nextPriority(data.rules))} aria-describedby="rule-priority-hint" />
            <p class="hint" id="rule-priority-hint">${strings.rulesPriorityHint}</p>
          </div>
        </div>
        <div class="grid-fields">
          <div class="field">
            <label for="rule-args-field">${strings.rulesArgsField}</label>
            <input id="rule-args-field" name="args_field" spellcheck="false" placeholder="/url" aria-describedby="rule-args-hint" />
          </div>
          <div class="field">
            <label for="rule-args">${strings.rulesArgs}</label>
            <input id="rule-args" name="args" spellcheck="false" aria-describedby="rule-args-hint" />
          </div>
        </div>
        <p class="hint" id="rule-args-hint">${strings.rulesArgsHint}</p>
        <button type="submit" class="primary" data-testid="add-rule" ?disabled=${this.#action.busy}>${plusIcon}${strings.rulesAdd}</button>
      </form>
    </section>`;
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, {
      done: async () => {
        this.announcement = done;
        await this.#data.reload();
      },
      failed: () => this.#data.reload(),
    });
  }


  async #move(rule: ApprovalRule, direction: -1 | 1): Promise<void> {
    const client = this.login?.client;
    const rules = this.#data.value?.rules;
    if (!client || !rules) return;
    const changes = moveRule(rules, rule.id, direction);
    await this.#run(
      async () => {
        for (const change of changes) await client.replaceRule(change.rule.id, { ...change.rule, priority: change.priority });
      },
      (direction === -1 ? strings.rulesMovedUp : strings.rulesMovedDown).replace('{tool}', rule.tool),
    );
    // Keep the keyboard on the rule that moved.
    void this.updateComplete.then(() =>
      this.renderRoot.querySelector<HTMLButtonElement>(`[data-id="${rule.id}"] [data-testid=${direction === -1 ? 'rule-up' : 'rule-down'}]:not([disabled])`)?.focus(),
    );
  }

  async #add(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    if (!client) return;
    const formElement = event.target as HTMLFormElement;
    const form = new FormData(formElement);
    const tool = formText(form, 'tool').trim();
    if (tool === '') {
      this.#action.error = strings.rulesNeedsTool;
      return;
    }
    const pattern = formText(form, 'args').trim();
    const field = formText(form, 'args_field').trim() || '/url';
    const rule = {
      tool,
      args: pattern === '' ? null : { [field.startsWith('/') ? field : `/${field}`]: pattern },
      role: formText(form, 'role'),
      effect: formText(form, 'effect', 'require') as RuleEffect,
      priority: Number(form.get('priority') ?? 100),
    };
    if (await this.#run(() => client.addRule(rule), strings.rulesAdded.replace('{tool}', tool))) formElement.reset();
  }

  async #delete(rule: ApprovalRule): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.rulesDeleteTitle.replace('{tool}', rule.tool),
      body: strings.rulesDeleteBody,
      action: strings.delete,
    });
    if (confirmed && (await this.#run(() => client.deleteRule(rule.id), strings.rulesDeleted.replace('{tool}', rule.tool)))) {
      // The row that had focus is gone: focus goes to the list's heading.
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#rules-title')?.focus();
    }
  }
}

/** The built-in tools, offered as suggestions. */
const TOOLS = [
  'current_time',
  'scratchpad',
  'notify',
  'note_write',
  'note_read',
  'note_list',
  'note_search',
  'note_delete',
  'web_fetch',
  'list_agents',
  'call_agent',
  'clarify',
  'remember',
  'recall',
  'forget',
] as const;

function effectLabel(effect: RuleEffect): string {
  return effect === 'allow' ? strings.effectAllow : effect === 'deny' ? strings.effectDeny : strings.effectRequire;
}

function effectClass(effect: RuleEffect): string {
  return effect === 'allow' ? 'local' : effect === 'deny' ? 'bad' : 'plain';
}

/** A rule's condition on the arguments, in the words the list shows. */
function describeArgs(args: Readonly<Record<string, string>> | string): string {
  if (typeof args === 'string') return args;
  return Object.entries(args)
    .map(([pointer, pattern]) => `${pointer} = ${pattern}`)
    .join(' and ');
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-rules': SkaldAdminRules;
  }
}
