// A picture a call made: the conversation shows it only for an `image_generate` call that
// finished well, and takes the document from the link that ends the result the server
// writes (src/agent/tools/image_generate.rs) — an id exactly as the server issues one,
// nothing looser. The picture's alt text comes from the description it was made from.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadModule } from './load.mjs';

const ID = 'doc_0123456789abcdef01234567';

/** The result as the server writes it. */
const made = (id = ID, name = 'picture-2026-01-01T10-00-00Z.png') =>
  `Made a picture with studio/gpt-image-1 and kept it among the person's documents as ${id} ("${name}"); it shows in ` +
  `the conversation. Link to it as [${name}](#/files/${id}).`;

const call = (extra = {}) => ({ name: 'image_generate', status: 'ok', arguments: '{"prompt":"A fox in the snow"}', result: made(), ...extra });

describe('a picture a call made', () => {
  let madePicture;
  let pictureType;
  before(async () => {
    ({ madePicture, pictureType } = await loadModule('state/pictures.ts'));
  });

  test('a finished image_generate call names the document of its link and what it was made from', () => {
    assert.deepEqual(madePicture(call()), { document: ID, prompt: 'A fox in the snow' });
    assert.deepEqual(madePicture(call({ arguments: '{"prompt":"  A fox\\n in the snow ","size":"512x512"}' })), { document: ID, prompt: 'A fox in the snow' });
  });

  test('a call still running, failed, refused or cancelled, or another tool, shows no picture', () => {
    for (const status of ['running', 'error', 'denied', 'cancelled']) assert.equal(madePicture(call({ status })), null, status);
    assert.equal(madePicture(call({ status: 'running', result: null })), null);
    assert.equal(madePicture(call({ name: 'web_fetch' })), null);
    assert.equal(madePicture(call({ name: 'mcp__studio__image_generate' })), null);
  });

  test('only an id exactly as the server issues one, in the link that ends the result', () => {
    assert.equal(madePicture(call({ result: made('doc_0123456789ABCDEF01234567') })), null, 'upper case');
    assert.equal(madePicture(call({ result: made('doc_0123456789abcdef0123456') })), null, 'too short');
    assert.equal(madePicture(call({ result: made('doc_0123456789abcdef012345678') })), null, 'too long');
    assert.equal(madePicture(call({ result: made('../doc_0123456789abcdef01234567') })), null);
    assert.equal(madePicture(call({ result: `${made()} And more.` })), null, 'something after the link');
    assert.equal(madePicture(call({ result: `See [it](#/files/${ID}?page=1).` })), null, 'a page of it');
    assert.equal(madePicture(call({ result: 'the provider made no picture: quota exceeded' })), null);
  });

  test('a name that looks like a link is not taken for the one that ends the result', () => {
    const other = 'doc_ffffffffffffffffffffffff';
    const picture = madePicture(call({ result: made(ID, `x](#/files/${other}).`) }));
    assert.deepEqual(picture, { document: ID, prompt: 'A fox in the snow' });
  });

  test('arguments that cannot be read leave the description empty, not the picture unshown', () => {
    assert.deepEqual(madePicture(call({ arguments: 'not json' })), { document: ID, prompt: '' });
    assert.deepEqual(madePicture(call({ arguments: '{"prompt": 7}' })), { document: ID, prompt: '' });
  });

  test('the bytes are shown under an image type a kind names, else as PNG', () => {
    assert.equal(pictureType('image/png'), 'image/png');
    assert.equal(pictureType('image/JPEG; charset=binary'), 'image/jpeg');
    assert.equal(pictureType('image/svg+xml'), 'image/png');
    assert.equal(pictureType('text/html'), 'image/png');
    assert.equal(pictureType(''), 'image/png');
  });
});
