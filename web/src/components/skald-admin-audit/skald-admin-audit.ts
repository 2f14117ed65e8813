/**
 * The audit trail (§3), newest first: who did what to whom — people added,
 * renamed, given another role, deactivated, deleted; roles, providers and
 * approval rules changed. The people affected see the entries about them
 * on their own privacy page.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { AuditEntry } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { auditLabel, strings } from '../../i18n/en.js';
import { formatTime } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';

/**
 * Test hook: `[data-testid=audit-entry]` (its `data-action`).
 *
 * @summary The audit trail.
 */
@customElement('skald-admin-audit')
export class SkaldAdminAudit extends LitElement {
  static override styles = [controls, page];

  @property({ attribute: false }) login: Login | null = null;

  readonly #audit = new ResourceController<readonly AuditEntry[]>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.audit(signal);
  });

  override render(): TemplateResult {
    const audit = this.#audit.value;
    return html`
      <p class="lead">${strings.auditLead}</p>
      ${this.#audit.status()}
      ${audit
        ? html`<section class="block" aria-label=${strings.adminAudit}>
            ${audit.length === 0 ? html`<p>${strings.auditNone}</p>` : nothing}
            <ul class="rows">
              ${audit.map(
                (entry) => html`<li data-testid="audit-entry" data-action=${entry.action}>
                  <strong>${auditLabel(entry)}</strong>
                  <span class="muted small">· ${strings.auditBy.replace('{name}', entry.actor_name)} · ${formatTime(entry.at)}</span>
                </li>`,
              )}
            </ul>
          </section>`
        : nothing}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-audit': SkaldAdminAudit;
  }
}
