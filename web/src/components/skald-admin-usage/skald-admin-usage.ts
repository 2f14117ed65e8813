/**
 * Model use per person (§1): requests and tokens today, over the last 30
 * days and in all. Counts only: never what anyone asked or was told.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { PersonUsage } from '../../api/types.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { formatNumber } from '../../i18n/format.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';
import { styles } from './skald-admin-usage.styles.js';

/**
 * Test hook: `[data-testid=usage-row]` per person (its `data-name`).
 *
 * @summary Usage per person, never content.
 */
@customElement('skald-admin-usage')
export class SkaldAdminUsage extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  readonly #usage = new ResourceController<readonly PersonUsage[]>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.usage(signal);
  });

  override render(): TemplateResult {
    const usage = this.#usage.value;
    return html`
      <p class="lead">${strings.usageLead}</p>
      ${this.#usage.status()}
      ${usage
        ? usage.length === 0
          ? html`<p class="block">${strings.usageNone}</p>`
          : html`<div class="table-wrap block" role="region" aria-labelledby="usage-caption" tabindex="0">
              <table>
                <caption id="usage-caption">${strings.usageCaption}</caption>
                <thead>
                  <tr>
                    <th scope="col">${strings.usagePerson}</th>
                    <th scope="col" class="num">${strings.usageTodayRequests}</th>
                    <th scope="col" class="num">${strings.usageTodayTokens}</th>
                    <th scope="col" class="num">${strings.usageMonthRequests}</th>
                    <th scope="col" class="num">${strings.usageMonthTokens}</th>
                    <th scope="col" class="num">${strings.usageTotalRequests}</th>
                    <th scope="col" class="num">${strings.usageTotalTokens}</th>
                  </tr>
                </thead>
                <tbody>
                  ${usage.map(
                    (row) => html`<tr data-testid="usage-row" data-name=${row.name}>
                      <th scope="row">${row.name}</th>
                      <td class="num">${formatNumber(row.today_requests)}</td>
                      <td class="num">${formatNumber(row.today_tokens)}</td>
                      <td class="num">${formatNumber(row.month_requests)}</td>
                      <td class="num">${formatNumber(row.month_tokens)}</td>
                      <td class="num">${formatNumber(row.total_requests)}</td>
                      <td class="num">${formatNumber(row.total_tokens)}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
        : nothing}
      <p class="muted small">${strings.usageNever}</p>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-usage': SkaldAdminUsage;
  }
}
