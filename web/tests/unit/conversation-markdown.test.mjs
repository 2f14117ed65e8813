// A conversation saved as Markdown: who said what, in order, what was used in words.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

describe('a conversation as Markdown', () => {
  let md;
  before(async () => {
    md = await loadModule('state/conversation-markdown.ts');
  });

  const turn = (fields) => ({ key: 'k', id: 't', userText: null, items: [], status: 'done', model: null, error: null, seq: 0, ...fields });

  test('reads as the conversation went, with the tools in words and the model named', () => {
    const transcript = {
      sessionId: 'chat_1',
      turns: [
        turn({
          userText: 'Note my shopping list',
          model: 'local/qwen',
          items: [
            { kind: 'tool', id: 'c1', name: 'note_write', arguments: '{"title":"Shopping","text":"flour"}', status: 'ok', result: 'saved' },
            { kind: 'text', text: 'Saved **it**.' },
          ],
        }),
        turn({ userText: 'Thanks', items: [{ kind: 'text', text: 'You are welcome.' }], status: 'stopped' }),
      ],
    };
    const text = md.conversationMarkdown('Shopping  list', transcript, new Date(0));
    assert.match(text, /^# Shopping list\n/);
    assert.match(text, /## You\n\nNote my shopping list\n\n## Skald \(local\/qwen\)\n\n> Used: Save a note titled “Shopping”: flour\n\nSaved \*\*it\*\*\./);
    assert.match(text, /## You\n\nThanks\n\n## Skald\n\nYou are welcome\.\n\n_Stopped\._\n$/);
  });

  test('a reply copied is its words only, and a file name holds no path', () => {
    assert.equal(md.replyText(turn({ items: [{ kind: 'text', text: 'One.' }, { kind: 'tool', id: 'c', name: 'x', arguments: '{}', status: 'ok', result: null }, { kind: 'text', text: 'Two.' }] })), 'One.\n\nTwo.');
    assert.equal(md.markdownFileName('../../etc/passwd: a plan!'), 'etcpasswd-a-plan.md');
    assert.equal(md.markdownFileName('   '), 'conversation.md');
  });
});
