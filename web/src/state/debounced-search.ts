/**
 * A search typed into a field, run once typing pauses: the notes, the memories and the
 * conversations search this way. Only the answer to the latest words may land: one to
 * words typed over, or cleared, is dropped, so older results never replace newer ones.
 * Words shorter than `minChars` (trimmed) are no search: the results go back to none.
 *
 *   readonly #search = new DebouncedSearch({
 *     delayMs: 250,
 *     run: (query) => client.searchNotes(query),
 *     onResults: (hits) => (this.hits = hits),
 *     onError: (error) => (this.error = describeError(error)),
 *   });
 *   <input @input=${(e) => this.#search.input(e.target.value)} />
 *
 * Owns its timer: `cancel` it when the page leaves.
 */

export interface DebouncedSearchOptions<T> {
  /** How long typing pauses before the search runs. */
  readonly delayMs: number;
  /** Fewer characters than this are no search (1 by default: anything but blank). */
  readonly minChars?: number;
  /** Asks for the results of `query` (trimmed). */
  readonly run: (query: string) => Promise<T>;
  /** The results of the latest search, or `null` when the words are no search. */
  readonly onResults: (results: T | null, query: string) => void;
  /** The latest search failed. */
  readonly onError: (error: unknown, query: string) => void;
}

export class DebouncedSearch<T> {
  readonly #options: DebouncedSearchOptions<T>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Counts searches asked for; an answer lands only if none was asked for since. */
  #read = 0;
  #query = '';

  constructor(options: DebouncedSearchOptions<T>) {
    this.#options = options;
  }

  /** The words searched for now, trimmed; `''` when there is no search. */
  get query(): string {
    return this.#searching(this.#query) ? this.#query : '';
  }

  /** What the field holds now: searched for once typing pauses, or no search at all. */
  input(text: string): void {
    clearTimeout(this.#timer);
    // Whatever is under way answers words that are no longer there.
    this.#read += 1;
    const query = text.trim();
    this.#query = query;
    if (!this.#searching(query)) {
      this.#options.onResults(null, query);
      return;
    }
    this.#timer = setTimeout(() => void this.#run(query), this.#options.delayMs);
  }

  /** Runs the search in effect again at once (what it searches has changed); none, nothing. */
  async refresh(): Promise<void> {
    if (!this.#searching(this.#query)) return;
    clearTimeout(this.#timer);
    await this.#run(this.#query);
  }

  /** Forgets the search waiting and drops any answer still to come. */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#read += 1;
  }

  #searching(query: string): boolean {
    return query !== '' && query.length >= (this.#options.minChars ?? 1);
  }

  async #run(query: string): Promise<void> {
    const read = ++this.#read;
    try {
      const results = await this.#options.run(query);
      if (read === this.#read) this.#options.onResults(results, query);
    } catch (error) {
      if (read === this.#read) this.#options.onError(error, query);
    }
  }
}
