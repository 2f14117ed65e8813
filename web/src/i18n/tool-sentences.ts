/**
 * A built-in tool's call in one sentence a person reads, from its exact arguments: what
 * the card asks and what a tool row did. Every argument that changes what happens is in
 * the sentence in full (a web address is never shortened), so the sentence can stand
 * beside the exact JSON rather than hide it. `null` for a tool this page does not know
 * (an agent's own, later a server's): those show their arguments as they are. Pure.
 */
import { strings } from './en.js';

type Args = Readonly<Record<string, unknown>>;

/** Longest stretch of free text (a note's body) the sentence quotes before "…". */
const QUOTE_CHARS = 160;

export function describeCall(tool: string, raw: unknown): string | null {
  const args = asArgs(raw);
  if (args === null) return null;
  const text = (key: string): string | null => (typeof args[key] === 'string' ? args[key] : null);
  const id = (): string | null => (typeof args['id'] === 'number' ? String(args['id']) : null);
  const fill = (template: string, values: Readonly<Record<string, string>>): string =>
    template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
  switch (tool) {
    case 'note_write': {
      const title = text('title');
      const body = text('text');
      if (title === null || body === null) return null;
      const note = id();
      return fill(note === null ? strings.callNoteWrite : strings.callNoteReplace, { title, text: quote(body), id: note ?? '' });
    }
    case 'note_read':
    case 'note_delete': {
      const note = id();
      if (note === null) return null;
      return fill(tool === 'note_read' ? strings.callNoteRead : strings.callNoteDelete, { id: note });
    }
    case 'note_list':
      return strings.callNoteList;
    case 'note_search': {
      const query = text('query');
      return query === null ? null : fill(strings.callNoteSearch, { query });
    }
    case 'web_fetch': {
      const url = text('url');
      return url === null ? null : fill(strings.callWebFetch, { url });
    }
    case 'notify': {
      const title = text('title');
      if (title === null) return null;
      const body = text('body');
      return body === null || body === '' ? fill(strings.callNotify, { title }) : fill(strings.callNotifyBody, { title, body: quote(body) });
    }
    case 'clarify': {
      const question = text('question');
      return question === null ? null : fill(strings.callClarify, { question });
    }
    case 'call_agent': {
      const agent = text('agent');
      const task = text('task');
      return agent === null || task === null ? null : fill(strings.callAgent, { agent, task: quote(task) });
    }
    case 'list_agents':
      return strings.callListAgents;
    case 'current_time': {
      const zone = text('timezone');
      return zone === null ? strings.callTime : fill(strings.callTimeIn, { zone });
    }
    case 'scratchpad':
      return strings.callScratchpad;
    case 'remember': {
      // The sentence in full: it is what would be kept, at most 300 characters.
      const sentence = text('text');
      return sentence === null ? null : fill(strings.callRemember, { text: sentence });
    }
    case 'recall': {
      const query = text('query');
      return query === null ? null : fill(strings.callRecall, { query });
    }
    case 'forget': {
      const memory = text('id');
      return memory === null ? null : fill(strings.callForget, { id: memory });
    }
    case 'schedule': {
      const words = text('text');
      return words === null ? null : fill(strings.callSchedule, { text: quote(words) });
    }
    case 'list_schedules':
      return strings.callListSchedules;
    case 'cancel_schedule': {
      const job = text('id');
      return job === null ? null : fill(strings.callCancelSchedule, { id: job });
    }
    case 'document_search': {
      const query = text('query');
      return query === null ? null : fill(strings.callDocumentSearch, { query });
    }
    case 'document_read': {
      if (text('document') === null) return null;
      // Pages not given as text are all of them, as the tool reads its arguments.
      const pages = readPages(text('pages'));
      if (pages === null) return null;
      if (pages === 'all') return strings.callDocumentRead;
      const { first, last } = pages;
      if (last === null) return fill(strings.callDocumentReadFrom, { page: String(first) });
      if (first === last) return fill(strings.callDocumentReadPage, { page: String(first) });
      return fill(strings.callDocumentReadPages, { pages: `${first}–${last}` });
    }
    case 'image_generate': {
      const prompt = text('prompt');
      if (prompt === null) return null;
      const size = text('size');
      const described = quote(prompt);
      return size === null ? fill(strings.callImageGenerate, { prompt: described }) : fill(strings.callImageGenerateSized, { size, prompt: described });
    }
    default:
      return null;
  }
}

/** The arguments as an object, parsed when they came as JSON text; `null` otherwise. */
function asArgs(raw: unknown): Args | null {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      return null;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Args) : null;
}

/**
 * The pages `document_read` is asked for, read as the tool reads them (src/agent/tools/
 * document_read.rs): none or blank is all of them; a page, a range (`2-5`, `2 – 5`) or an
 * open end (`6-`), counted from 1. `null` for anything the tool refuses.
 */
function readPages(asked: string | null): 'all' | { readonly first: number; readonly last: number | null } | null {
  const trimmed = asked?.trim() ?? '';
  if (trimmed === '') return 'all';
  const found = /^(\d{1,9})\s*(?:([-–])\s*(\d{1,9})?)?$/.exec(trimmed);
  if (found === null) return null;
  const first = Number(found[1]);
  const last = found[2] === undefined ? first : found[3] === undefined ? null : Number(found[3]);
  return first >= 1 && (last === null || last >= first) ? { first, last } : null;
}

/** Free text cut to a readable length on a word boundary. */
function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if ([...flat].length <= QUOTE_CHARS) return flat;
  const cut = [...flat].slice(0, QUOTE_CHARS).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > QUOTE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
