// What the tests of the conversation view give the page alike (src/components/skald-chat/
// and src/state/transcript.test.mjs): the conversation chat_1 as the server sends it, the
// one model, the person logged in, a message row of its history, and a skald-chat mounted
// with a real login. Each test keeps its own server, since each plays a different part of it.
//
// Not a test file itself (node --test picks *.test.mjs only).

/** How long a test waits for what the page shows or asks. */
export const TIMEOUT = 5_000;

/** What a test bundles (see mount.mjs) for `mountChat`: the element, the API client, the login. */
export const CHAT_MODULES = ['components/skald-chat/skald-chat.ts', 'api/client.ts', 'state/login.ts'];

/** The conversation chat_1 as the server lists it; `overrides` give a test's own (its title). */
export const chatSession = (overrides = {}) => ({
  id: 'chat_1',
  agent: 'main',
  model: null,
  title: '',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  turn_state: null,
  outside_content: false,
  ...overrides,
});

/** The only model configured: a local one. */
export const MODELS = [{ name: 'home/llama', provider: 'home', provider_id: 'provider_1', model_id: 'llama', strength: 'standard', privacy: 'local', configured_by: 'Ada' }];

/** The model the next turn runs on, as a conversation's detail names it: the one in MODELS. */
export const NEXT_MODEL = { name: 'home/llama', provider: 'home', privacy: 'local' };

/** The person logged in, as `GET /api/me` answers: Ada, who runs the instance. */
export const ME = {
  user: { id: 'user_1', name: 'Ada' },
  role: { id: 'admin', label: 'Administrator', manage_instance: true, may_approve: true, privacy_tier: 'any' },
};

/** A message of a conversation's history, as `GET /api/sessions/{id}/messages` lists it. */
export const row = (id, turn, role, status, extra = {}) => ({ id, turn_id: turn, role, text: '', status, created_at: '2026-01-01T00:00:00Z', ...extra });

/**
 * Logs in as the page does after an unlock and mounts a `<skald-chat>` with `properties`
 * (its `session`, `models`, …) set before it connects; resolves once it has rendered.
 * The page must have CHAT_MODULES loaded and answer `/api/me`.
 */
export async function mountChat(page, properties) {
  await page.evaluate(async (properties) => {
    const { ApiClient } = window.skald['api/client.ts'];
    const { startLogin } = window.skald['state/login.ts'];
    const login = await startLogin(new ApiClient('launch-token'), { token: 'session-token' });
    const chat = document.createElement('skald-chat');
    Object.assign(chat, { login, modelsLoaded: true, ...properties });
    document.body.append(chat);
    await chat.updateComplete;
  }, properties);
}
