// Reads a zip archive's entries (stored or deflated) with Node's zlib: enough to check
// what the export holds without an unzip tool on the machine.
//
// Not a test file itself (node --test picks *.test.mjs only).
import { inflateRawSync } from 'node:zlib';

/** Every file of the archive: a Map of its path to its contents as text. */
export function readZip(buffer) {
  const end = buffer.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end === -1) throw new Error('not a zip archive: no end of central directory');
  const count = buffer.readUInt16LE(end + 10);
  let at = buffer.readUInt32LE(end + 16);
  const files = new Map();
  for (let i = 0; i < count; i++) {
    if (buffer.readUInt32LE(at) !== 0x02014b50) throw new Error('a broken central directory');
    const method = buffer.readUInt16LE(at + 10);
    const compressed = buffer.readUInt32LE(at + 20);
    const nameLength = buffer.readUInt16LE(at + 28);
    const extraLength = buffer.readUInt16LE(at + 30);
    const commentLength = buffer.readUInt16LE(at + 32);
    const local = buffer.readUInt32LE(at + 42);
    const name = buffer.toString('utf8', at + 46, at + 46 + nameLength);
    const dataStart = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
    const data = buffer.subarray(dataStart, dataStart + compressed);
    const bytes = method === 0 ? data : method === 8 ? inflateRawSync(data) : null;
    if (bytes === null) throw new Error(`${name}: compression method ${method} is not read here`);
    files.set(name, bytes.toString('utf8'));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}
