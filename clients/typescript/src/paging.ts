// A list call: iterate it (`for await`) for every item across pages, or walk
// `.pages()` / take `.firstPage()` for one page at a time. Nothing is fetched
// until one of them is used.
/** A request's query parameters; `undefined`/`null` ones are left out, arrays repeat the parameter. */
export type Query = Record<string, string | number | boolean | null | undefined | readonly (string | number | boolean)[]>;

export type PagingRule =
  /** The answer's `next` object (null at the end) holds the next page's query parameters of the same names. */
  | { kind: 'cursor'; items: string; cursorFields: readonly string[] }
  /** `limit`/`offset`: the next page starts past the rows seen; an empty or short page ends the list. */
  | { kind: 'offset'; items: string };

export class Paginated<Page, Item> implements AsyncIterable<Item> {
  constructor(
    private readonly fetchPage: (query: Query) => Promise<Page>,
    private readonly query: Query,
    private readonly rule: PagingRule,
  ) {}

  /** The first page only, as the API answered it. */
  firstPage(): Promise<Page> {
    return this.fetchPage(this.query);
  }

  /** Every page in turn, following the cursors until the list ends. */
  async *pages(): AsyncGenerator<Page> {
    let query: Query | null = this.query;
    while (query) {
      const page: Page = await this.fetchPage(query);
      yield page;
      query = this.nextQuery(query, page);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    for await (const page of this.pages()) yield* this.itemsOf(page);
  }

  /** Every item of every page, collected (mind the size of what you list). */
  async toArray(): Promise<Item[]> {
    const all: Item[] = [];
    for await (const item of this) all.push(item);
    return all;
  }

  private itemsOf(page: Page): Item[] {
    return ((page as Record<string, unknown>)[this.rule.items] ?? []) as Item[];
  }

  private nextQuery(query: Query, page: Page): Query | null {
    const items = this.itemsOf(page);
    if (this.rule.kind === 'cursor') {
      const next = (page as { next?: Record<string, string> | null }).next;
      if (!next || items.length === 0) return null;
      const cursor: Query = {};
      for (const field of this.rule.cursorFields) cursor[field] = next[field];
      return { ...query, ...cursor };
    }
    const limit = Number((page as { limit?: number }).limit ?? query.limit ?? Infinity);
    if (items.length === 0 || items.length < limit) return null;
    const offset = Number((page as { offset?: number }).offset ?? query.offset ?? 0);
    return { ...query, offset: offset + items.length };
  }
}
