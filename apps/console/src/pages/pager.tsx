import type { Paged } from '../hooks';

/** Previous / next buttons and the page number under a paged list. */
export function Pager({ paged, testid }: { paged: Paged<unknown>; testid: string }) {
  return (
    <div class="pager" data-testid={`${testid}-pager`}>
      <button type="button" disabled={!paged.hasPrev} onClick={paged.prev}>
        ← Previous
      </button>
      <span class="dim" data-testid={`${testid}-page`}>
        page {paged.page}
      </span>
      <button type="button" disabled={!paged.hasNext} onClick={paged.next}>
        Next →
      </button>
    </div>
  );
}
