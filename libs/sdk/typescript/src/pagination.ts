import type { Page } from './types';

/** Fetches one page; `page` is the cursor (`undefined` for the first page). */
export type PageFetcher<T, P extends Page<T> = Page<T>> = (page: string | undefined) => Promise<P>;

/**
 * The result of every `list` call.
 *
 * - `await client.agents.list(params)` resolves to the first page (`{data, next_page}`).
 * - `for await (const agent of client.agents.list(params))` walks every item of every page, following
 *   `next_page` forward until it is `null`.
 * - `for await (const page of client.agents.list(params).iterPages())` walks the pages themselves.
 *
 * Nothing is sent until the promise is awaited or iterated; the first page is fetched once and shared.
 * `P` is the page type when a list returns more than `{data, next_page}` (e.g. `SessionList`).
 */
export class PagePromise<T, P extends Page<T> = Page<T>> implements Promise<P>, AsyncIterable<T> {
  private first: Promise<P> | undefined;

  constructor(
    private readonly fetchPage: PageFetcher<T, P>,
    private readonly startPage?: string,
  ) {}

  readonly [Symbol.toStringTag] = 'PagePromise';

  then<R1 = P, R2 = never>(
    onfulfilled?: ((value: P) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.firstPage().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<P | R> {
    return this.firstPage().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<P> {
    return this.firstPage().finally(onfinally);
  }

  /** Every page, starting with the first, until `next_page` is `null`. */
  async *iterPages(): AsyncGenerator<P, void, undefined> {
    let page = await this.firstPage();
    yield page;
    while (typeof page.next_page === 'string') {
      const cursor: string = page.next_page;
      page = await this.fetchPage(cursor);
      yield page;
    }
  }

  /** Every item of every page. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.iterPages()) {
      for (const item of page.data) yield item;
    }
  }

  private firstPage(): Promise<P> {
    this.first ??= this.fetchPage(this.startPage);
    return this.first;
  }
}
