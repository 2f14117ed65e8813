// Supervision as the pages read it (§6.2): the access log a supervised person reads, told
// as visits — a list opened and the items read from it until the supervisor opens
// something again — in plain words; whom the administrator's forms offer; and the
// supervisor's page in the address bar, by the person's id only.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModules } from './load.mjs';

let supervision;
let locale;
let route;
let notices;
let inbox;

before(async () => {
  ({ supervision, locale, route, notices, inbox } = await loadModules({
    inbox: 'state/inbox.ts',
    supervision: 'state/supervision.ts',
    locale: 'i18n/locale.ts',
    route: 'state/route.ts',
    notices: 'state/notices.ts',
  }));
});

const ADA = ['u_ada', 'Ada'];
const BO = ['u_bo', 'Bo'];

/** The log as the server gives it, newest first, from rows written oldest first. */
function log(...rows) {
  return rows
    .map(([who, action, what, item = null], index) => ({
      id: index + 1,
      supervisor_id: who[0],
      supervisor_name: who[1],
      at: `2026-12-05T14:${String(2 + index).padStart(2, '0')}:00Z`,
      action,
      what,
      item,
    }))
    .reverse();
}

const summary = (visits) => visits.map((v) => `${v.supervisorName} ${v.opened ? 'opened' : 'read'} ${v.area} ${v.reads}`);

describe('the access log as visits', () => {
  test('a list opened takes the reads that follow it, each item once, until the next list opened', () => {
    const visits = supervision.groupVisits(
      log(
        [ADA, 'opened', 'conversations'],
        [ADA, 'read', 'conversation', 'chat_a'],
        [ADA, 'read', 'conversation', 'chat_b'],
        [ADA, 'read', 'conversation', 'chat_a'],
        [ADA, 'read', 'conversation', 'chat_c'],
        [ADA, 'opened', 'notes'],
        [ADA, 'read', 'note', '1'],
      ),
    );
    assert.deepEqual(summary(visits), ['Ada opened notes 1', 'Ada opened conversations 3'], 'newest first');
    assert.deepEqual(visits[1].items, ['chat_a', 'chat_b', 'chat_c']);
    assert.equal(visits[1].at, '2026-12-05T14:02:00Z', 'a visit is dated by its first row');
    assert.equal(visits[1].until, '2026-12-05T14:06:00Z');
  });

  test('a list opened and nothing read is a visit with no reads', () => {
    assert.deepEqual(summary(supervision.groupVisits(log([ADA, 'opened', 'notes'], [ADA, 'opened', 'notes']))), ['Ada opened notes 0', 'Ada opened notes 0']);
  });

  test('each read of the memories is a visit of its own: they have no list', () => {
    const visits = supervision.groupVisits(log([ADA, 'read', 'memories'], [ADA, 'read', 'memories']));
    assert.deepEqual(summary(visits), ['Ada read memories 1', 'Ada read memories 1']);
  });

  test('a read joins its list until another list is opened; reading the memories in between does not end it', () => {
    const visits = supervision.groupVisits(
      log([ADA, 'opened', 'notes'], [ADA, 'read', 'memories'], [ADA, 'read', 'note', '4'], [ADA, 'opened', 'conversations'], [ADA, 'read', 'note', '5']),
    );
    assert.deepEqual(summary(visits), ['Ada read notes 1', 'Ada opened conversations 0', 'Ada read memories 1', 'Ada opened notes 1']);
  });

  test('two supervisors at once each keep their own visit', () => {
    const visits = supervision.groupVisits(
      log([ADA, 'opened', 'notes'], [BO, 'opened', 'notes'], [ADA, 'read', 'note', '1'], [BO, 'read', 'note', '2'], [BO, 'read', 'note', '3']),
    );
    assert.deepEqual(summary(visits), ['Bo opened notes 2', 'Ada opened notes 1']);
  });

  test('reads without a list opened gather while they stay in one area', () => {
    const visits = supervision.groupVisits(
      log([ADA, 'read', 'conversation', 'chat_a'], [ADA, 'read', 'conversation', 'chat_b'], [ADA, 'read', 'note', '1'], [ADA, 'read', 'conversation', 'chat_c']),
    );
    assert.deepEqual(summary(visits), ['Ada read conversations 1', 'Ada read notes 1', 'Ada read conversations 2']);
  });

  test('the cards waiting for the supervisor are a list opened; each card decided is a line of its own', () => {
    const visits = supervision.groupVisits(
      log(
        [ADA, 'opened', 'cards'],
        [ADA, 'allowed', 'card', 'card_1'],
        [ADA, 'denied', 'card', 'card_2'],
        [ADA, 'opened', 'notes'],
        [ADA, 'read', 'note', '1'],
        [ADA, 'allowed', 'card', 'card_3'],
      ),
    );
    const decisions = (v) => `${v.supervisorName} ${v.area} ${v.opened ? 'opened' : (v.decision ?? 'read')} ${v.items.join(',')}`;
    assert.deepEqual(visits.map(decisions), [
      'Ada cards allowed card_3',
      'Ada notes opened 1',
      'Ada cards denied card_2',
      'Ada cards allowed card_1',
      'Ada cards opened ',
    ]);
    assert.equal(visits[1].reads, 1, 'a decision in between does not end the notes\' visit');
    assert.equal(visits[4].decision, null);
  });

  test('a decision on anything but a card is not one the page knows', () => {
    assert.deepEqual(supervision.groupVisits(log([ADA, 'allowed', 'note', '1'])), []);
  });

  test('rows the page does not know are left out, and the order of ids wins over the order given', () => {
    const rows = log([ADA, 'opened', 'notes'], [ADA, 'read', 'calendar', 'x'], [ADA, 'read', 'note', '1']);
    assert.deepEqual(summary(supervision.groupVisits([...rows].reverse())), ['Ada opened notes 1']);
    assert.deepEqual(supervision.groupVisits([]), []);
  });
});

describe('a visit in words', () => {
  const visit = (area, opened, reads, decision = null) => ({ supervisorId: 'u_ada', supervisorName: 'Ada', area, opened, at: '', until: '', items: [], reads, decision });

  test('says who, what, when and how many, in English', () => {
    const say = (v) => supervision.visitSentence(v, '14:02');
    assert.equal(say(visit('conversations', true, 3)), 'Ada opened your conversations at 14:02 and read 3 of them.');
    assert.equal(say(visit('notes', true, 1)), 'Ada opened your notes at 14:02 and read 1 of them.');
    assert.equal(say(visit('notes', true, 0)), 'Ada opened your notes at 14:02.');
    assert.equal(say(visit('conversations', false, 1)), 'Ada read 1 of your conversations at 14:02.');
    assert.equal(say(visit('memories', false, 1)), 'Ada read your memories at 14:02.');
  });

  test('says when the supervisor looked at the cards waiting for them, and each one they allowed or denied', () => {
    const say = (v) => supervision.visitSentence(v, '14:05');
    assert.equal(say(visit('cards', true, 0)), 'Ada looked at the cards waiting for them at 14:05.');
    assert.equal(say(visit('cards', false, 1, 'allowed')), 'Ada allowed a card at 14:05.');
    assert.equal(say(visit('cards', false, 1, 'denied')), 'Ada denied a card at 14:05.');
    try {
      locale.useLocale(locale.resolveLocale('fr', []));
      assert.equal(say(visit('cards', false, 1, 'allowed')), 'Ada a autorisé une carte à 14:05.');
      locale.useLocale(locale.resolveLocale('it', []));
      assert.equal(say(visit('cards', false, 1, 'denied')), 'Ada ha rifiutato una scheda alle 14:05.');
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });

  test('and in French and Italian', () => {
    try {
      locale.useLocale(locale.resolveLocale('fr', []));
      assert.equal(supervision.visitSentence(visit('notes', true, 2), '14:02'), 'Ada a ouvert tes notes à 14:02 et en a lu 2.');
      locale.useLocale(locale.resolveLocale('it', []));
      assert.equal(supervision.visitSentence(visit('notes', true, 1), '14:02'), 'Ada ha aperto le tue note alle 14:02 e ne ha letta 1.');
      assert.equal(supervision.visitSentence(visit('memories', false, 1), '14:02'), 'Ada ha letto la tua memoria alle 14:02.');
    } finally {
      locale.useLocale(locale.resolveLocale('en', []));
    }
  });
});

describe('whom the administrator may name', () => {
  const roles = [
    { id: 'admin', may_supervise: true, may_be_supervised: false },
    { id: 'member', may_supervise: false, may_be_supervised: false },
    { id: 'restricted', may_supervise: false, may_be_supervised: true },
  ];
  const person = (id, role, status = 'active') => ({ id, name: id, role, status });
  const people = [
    person('ada', 'admin'),
    person('eve', 'admin', 'deactivated'),
    person('gus', 'admin', 'pending'),
    person('bea', 'member'),
    person('cy', 'restricted'),
    person('di', 'restricted', 'pending'),
    person('fay', 'restricted', 'deactivated'),
  ];
  const edge = (supervisor, supervised, state = 'pending') => ({ supervisor_id: supervisor, supervised_id: supervised, state });

  test('as a supervisor: active people whose role may supervise', () => {
    assert.deepEqual(supervision.supervisorChoices(people, roles).map((p) => p.id), ['ada']);
  });

  test('as the person supervised: anyone not deactivated whose role may be, not already asked', () => {
    assert.deepEqual(supervision.supervisedChoices(people, roles, 'ada', []).map((p) => p.id), ['cy', 'di']);
    assert.deepEqual(supervision.supervisedChoices(people, roles, 'ada', [edge('ada', 'cy', 'active')]).map((p) => p.id), ['di']);
    assert.deepEqual(supervision.supervisedChoices(people, roles, 'gus', [edge('ada', 'cy', 'active')]).map((p) => p.id), ['cy', 'di']);
  });

  test('whether a role may be supervised, by its id', () => {
    assert.equal(supervision.roleMayBeSupervised(roles, 'restricted'), true);
    assert.equal(supervision.roleMayBeSupervised(roles, 'member'), false);
    assert.equal(supervision.roleMayBeSupervised(roles, 'nobody'), false);
  });

  test('only active edges open a space', () => {
    assert.deepEqual(supervision.activeEdges([edge('ada', 'cy', 'active'), edge('ada', 'di')]).map((e) => e.supervised_id), ['cy']);
  });
});

describe('a card its role sends to the supervisor', () => {
  const role = (may_approve, cards_to_supervisor) => ({ may_approve, cards_to_supervisor });
  const card = (reason) => ({ kind: 'approval', details: { reason } });
  const routed = card('no rule covers note_write; your supervisor decides');
  const refused = card('no rule covers note_write');

  test('waits for the supervisor when the role may not approve and sends its cards on', () => {
    assert.equal(supervision.supervisorDecides(refused, role(false, true)), true);
    assert.equal(supervision.supervisorDecides(routed, role(false, false)), false, 'the role as it is now wins over the card\'s reason');
    assert.equal(supervision.supervisorDecides(routed, role(true, true)), false, 'a role that may approve decides its own');
  });

  test('without the role, the gate\'s reason says so', () => {
    assert.equal(supervision.supervisorDecides(routed, null), true);
    assert.equal(supervision.supervisorDecides(refused, null), false);
  });

  test('waits for those who may open the space now, by name', () => {
    const edge = (name, state) => ({ supervisor_name: name, state });
    assert.deepEqual(supervision.supervisorNames([edge('Ada', 'active'), edge('Bo', 'pending'), edge('Eve', 'active')]), ['Ada', 'Eve']);
  });
});

describe('a card the supervisor decided, in the person\'s inbox', () => {
  const pending = (id, call) => ({ id, kind: 'approval', state: 'pending', session_id: 'chat_1', details: { call_id: call } });

  test('leaves the inbox, and is kept by its call to say who decided it', () => {
    const store = new inbox.InboxStore({ inbox: async () => [] });
    let changes = 0;
    store.addEventListener('change', () => (changes += 1));
    store.apply({ type: 'card', card: pending('card_1', 'call_1') });
    store.apply({ type: 'card', card: pending('card_2', 'call_2') });
    store.apply({ type: 'card_decided', card: { ...pending('card_1', 'call_1'), state: 'allowed', decided_by: 'Ada' } });
    store.apply({ type: 'card_decided', card: { ...pending('card_2', 'call_2'), state: 'denied' } });
    assert.deepEqual(store.cards, []);
    assert.equal(store.decidedFor('call_1')?.decided_by, 'Ada');
    assert.equal(store.decidedFor('call_2'), undefined, 'one the person decided themselves needs no name');
    assert.ok(changes >= 4);
  });
});

describe('the notices of supervision', () => {
  const names = { providers: new Map(), agents: new Map() };
  const notice = (kind, body) => ({ id: 3, kind, body, created_at: '2026-12-05T14:00:00Z', holds: false });

  test('name the supervisor, and who asked for the edge or ended it', () => {
    const asked = notices.viewNotice(notice('supervision_requested', { edge: 'sup_1', supervisor: 'Ada', by: 'Bo' }), names);
    assert.deepEqual([asked.kind, asked.subject, asked.who], ['supervision_requested', 'Ada', 'Bo']);
    const ended = notices.viewNotice(notice('supervision_ended', { supervisor: 'Ada', by: 'Ada', rotate: true }), names);
    assert.deepEqual([ended.kind, ended.subject, ended.who], ['supervision_ended', 'Ada', 'Ada']);
  });
});

describe('the supervisor\'s page in the address bar', () => {
  const id = '01ceda86270f8aa7b86b53fc4a240fdc';

  test('names the person by id only, and parses back', () => {
    assert.deepEqual(route.parseRoute('#/supervised'), { page: 'supervised' });
    assert.deepEqual(route.parseRoute(`#/supervised/${id}`), { page: 'supervised', person: id });
    assert.equal(route.routeHash({ page: 'supervised', person: id }), `#/supervised/${id}`);
    assert.equal(route.routeHash({ page: 'supervised' }), '#/supervised');
  });

  test('anything but an id in its place is left out', () => {
    for (const hash of ['#/supervised/Cy', '#/supervised/01CEDA86270F8AA7B86B53FC4A240FDC', `#/supervised/${id}0`, '#/supervised/chat_0123']) {
      assert.deepEqual(route.parseRoute(hash), { page: 'supervised' }, hash);
    }
  });

  test('supervision is a section of the administration', () => {
    assert.deepEqual(route.parseRoute('#/admin/supervision'), { page: 'admin', section: 'supervision' });
  });
});
