/**
 * Administration (§1, §6.1): people, roles, supervision (§6.2), models and providers, approval
 * rules, agents, usage, backups and the audit trail — for roles that manage the
 * instance only. Anyone else who reaches this page (a typed address, an old
 * link) is told plainly that it is not for their role, and no administrator
 * call is made: the server would refuse it anyway (403), and says so in the
 * route table.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import type { Model } from '../../api/types.js';
import { strings, type TextKey } from '../../i18n/en.js';
import type { Login } from '../../state/login.js';
import { ADMIN_SECTIONS, type AdminSection } from '../../state/route.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import '../skald-admin-agents/skald-admin-agents.js';
import '../skald-admin-audit/skald-admin-audit.js';
import '../skald-admin-backups/skald-admin-backups.js';
import '../skald-admin-models/skald-admin-models.js';
import '../skald-admin-people/skald-admin-people.js';
import '../skald-admin-roles/skald-admin-roles.js';
import '../skald-admin-rules/skald-admin-rules.js';
import '../skald-admin-supervision/skald-admin-supervision.js';
import '../skald-admin-tools/skald-admin-tools.js';
import '../skald-admin-usage/skald-admin-usage.js';
import { styles } from './skald-admin.styles.js';

const LABELS: Readonly<Record<AdminSection, TextKey>> = {
  people: 'adminPeople',
  roles: 'adminRoles',
  supervision: 'adminSupervision',
  models: 'adminModels',
  rules: 'adminRules',
  agents: 'adminAgents',
  tools: 'adminTools',
  usage: 'adminUsage',
  backups: 'adminBackups',
  audit: 'adminAudit',
};

/**
 * Test hooks: `[data-testid=admin-refused]` for a role that does not manage
 * the instance; `[data-testid=admin-tab]` links (their `data-section`).
 *
 * @summary The administrator's pages, or a clear refusal.
 */
@customElement('skald-admin')
export class SkaldAdmin extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;
  @property() section: AdminSection = 'people';
  /** The models this administrator's role allows (to tell local providers from remote). */
  @property({ attribute: false }) models: readonly Model[] = [];

  override render(): TemplateResult {
    const login = this.login;
    if (login === null) return html``;
    if (!login.me.role?.manage_instance) return this.#renderRefusal();
    return html`
      <header class="bar">
        <h2 id="admin-title">${strings.adminTitle}</h2>
        <nav class="tabs" aria-label=${strings.adminSectionsLabel}>
          <ul>
            ${ADMIN_SECTIONS.map(
              (section) => html`<li>
                <a
                  href="#/admin/${section}"
                  data-testid="admin-tab"
                  data-section=${section}
                  aria-current=${section === this.section ? 'page' : nothing}
                  >${strings[LABELS[section]]}</a
                >
              </li>`,
            )}
          </ul>
        </nav>
      </header>
      <div class="scroll" tabindex="0" role="region" aria-labelledby="admin-title">
        <div class="column">${this.#renderSection(login)}</div>
      </div>
    `;
  }

  #renderSection(login: Login): TemplateResult {
    switch (this.section) {
      case 'people':
        return html`<skald-admin-people .login=${login}></skald-admin-people>`;
      case 'roles':
        return html`<skald-admin-roles .login=${login}></skald-admin-roles>`;
      case 'supervision':
        return html`<skald-admin-supervision .login=${login}></skald-admin-supervision>`;
      case 'models':
        return html`<skald-admin-models .login=${login} .models=${this.models}></skald-admin-models>`;
      case 'rules':
        return html`<skald-admin-rules .login=${login}></skald-admin-rules>`;
      case 'agents':
        return html`<skald-admin-agents .login=${login}></skald-admin-agents>`;
      case 'tools':
        return html`<skald-admin-tools .login=${login}></skald-admin-tools>`;
      case 'usage':
        return html`<skald-admin-usage .login=${login}></skald-admin-usage>`;
      case 'backups':
        return html`<skald-admin-backups .login=${login}></skald-admin-backups>`;
      case 'audit':
        return html`<skald-admin-audit .login=${login}></skald-admin-audit>`;
    }
  }

  #renderRefusal(): TemplateResult {
    const role = this.login?.me.role?.label ?? '';
    return html`
      <header class="bar"><h2>${strings.adminTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <section class="block refused" data-testid="admin-refused" aria-labelledby="refused-title">
            <h3 id="refused-title">${strings.adminRefusedTitle}</h3>
            <p>${strings.adminRefused.replace('{role}', role)}</p>
            <p>${strings.adminRefusedPrivacy}</p>
            <p><a href="#/">${strings.adminRefusedBack}</a></p>
          </section>
        </div>
      </div>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin': SkaldAdmin;
  }
}
